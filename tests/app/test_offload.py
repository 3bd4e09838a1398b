"""app/http/offload.py (issue 21, items 4 and 6): big programs run in helper processes without
starving the small ones (a lane of their own; the shortest waiting program first), at most
`offload_max_waiting` wait (then a 503 Busy with Retry-After), /healthz says how many wait and
run, and /api/descend's long programs are offloaded like the trace."""

from __future__ import annotations

import asyncio
import multiprocessing
import threading
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest
from event_loops import run_in_own_loop
from offload_jobs import log_name, wait_then_log

from chainrule.app.api.health import healthz
from chainrule.app.http.errors import ApiError
from chainrule.app.http.offload import Offload
from chainrule.app.layout.graphviz import Graphviz


@pytest.fixture(scope="module")
def manager() -> Iterator[Any]:
    """Events and lists the helper processes share with the test."""
    with multiprocessing.get_context("spawn").Manager() as shared:
        yield shared


@pytest.fixture(scope="module")
def helpers() -> Iterator[Offload]:
    """Helper processes (one a lane) started once for the module: a spawned helper imports the
    app, seconds on a busy machine, and every test's lanes lend the same ones."""
    started = Offload(processes=1, max_waiting=1, big_source_chars=1)
    jobs = [lane.executor().submit(log_name, [], "up") for lane in started.lanes.values()]
    assert [job.result(timeout=120) for job in jobs] == ["up", "up"]  # both start at once
    yield started
    started.close()


@pytest.fixture
def offloads(manager, helpers) -> Iterator[Any]:
    """`offloads(max_waiting=…, big_source_chars=…)`: an Offload (one helper a lane, the
    module's), an event and a log its helpers share with the test; every gate it held is free
    again after the test, every job ended."""
    made: list[Offload] = []

    def make(max_waiting: int = 8, big_source_chars: int = 10**9) -> tuple[Offload, Any, Any]:
        offload = Offload(processes=1, max_waiting=max_waiting, big_source_chars=big_source_chars)
        for name, lane in offload.lanes.items():
            lane.pool = helpers.lanes[name].pool
        made.append(offload)
        return offload, manager.Event(), manager.list()

    yield make
    for offload in made:
        for lane in offload.lanes.values():
            assert lane.depth() == {"waiting": 0, "running": 0}
            lane.pool = None  # the module's helpers: not this test's to stop


async def until(condition: Any, timeout_s: float = 30.0) -> None:
    """Wait until `condition()` holds. Every condition here is the gates' state, which only this
    event loop's tasks change: it is checked again each time the loop turns (a callback, not a
    timer), and a condition that never holds fails after `timeout_s`."""
    loop = asyncio.get_running_loop()
    held = loop.create_future()

    def check() -> None:
        if held.done():  # timed out meanwhile
            return
        if condition():
            held.set_result(None)
        else:
            loop.call_soon(check)

    check()
    await asyncio.wait_for(held, timeout_s)


def run(coroutine: Any) -> Any:
    return run_in_own_loop(coroutine)


async def holding(offload: Offload, gate: Any, log: Any) -> asyncio.Task:
    """A job that holds the small lane's one helper until `gate` is set, once it runs."""
    held = asyncio.create_task(offload.run(5, wait_then_log, gate, log, "held"))
    await until(lambda: offload.lanes["small"].running == 1)
    return held


def test_a_small_program_never_waits_behind_a_big_one(offloads):
    """Issue 21: six 20k-node requests made a 1.3k-character program wait 10.4 s."""
    offload, gate, log = offloads(max_waiting=4, big_source_chars=1_000)

    async def scenario() -> None:
        big = asyncio.create_task(offload.run(20_000, wait_then_log, gate, log, "big"))
        await until(lambda: offload.lanes["big"].running == 1)
        assert await offload.run(999, log_name, log, "small") == "small"
        assert list(log) == ["small"]  # while the big one still holds its helper
        gate.set()
        assert await big == "big"

    run(scenario())
    assert list(log) == ["small", "big"]


def test_in_a_lane_the_shortest_waiting_program_goes_first(offloads):
    offload, gate, log = offloads()

    async def scenario() -> None:
        lane = offload.lanes["small"]
        held = await holding(offload, gate, log)
        queued = [
            asyncio.create_task(offload.run(size, log_name, log, str(size)))
            for size in (300, 100, 200)
        ]
        await until(lambda: len(lane.waiting) == 3)
        gate.set()
        await asyncio.gather(held, *queued)

    run(scenario())
    assert list(log) == ["held", "100", "200", "300"]


def test_a_full_lane_refuses_at_once_and_healthz_shows_the_queue(offloads):
    offload, gate, log = offloads(max_waiting=2)
    server = SimpleNamespace(offload=offload, graphviz=Graphviz("dot"), graphviz_version="2.43")

    async def scenario() -> None:
        lane = offload.lanes["small"]
        held = await holding(offload, gate, log)
        waiting = [asyncio.create_task(offload.run(9, log_name, log, "w")) for _ in range(2)]
        await until(lambda: len(lane.waiting) == 2)
        with pytest.raises(ApiError) as refused:
            await offload.run(7, log_name, log, "refused")
        assert refused.value.status_code == 503 and refused.value.type == "Busy"
        assert refused.value.headers == {"Retry-After": "5"}
        assert refused.value.message == (
            "the server is busy with as many big programs as it queues; try again in 5 s"
        )
        detail = (await healthz(server)).detail
        assert detail.offload.small.model_dump() == {"waiting": 2, "running": 1}
        assert detail.offload.big.model_dump() == {"waiting": 0, "running": 0}
        assert detail.offload.threads.model_dump() == {"waiting": 0, "running": 0}
        assert (detail.graphviz_running, detail.graphviz_slots) == (0, 2)
        gate.set()
        await asyncio.gather(held, *waiting)
        assert lane.depth() == {"waiting": 0, "running": 0}

    run(scenario())
    assert "refused" not in list(log)


def test_a_request_that_goes_away_while_waiting_leaves_the_queue(offloads):
    offload, gate, log = offloads(max_waiting=1)

    async def scenario() -> None:
        lane = offload.lanes["small"]
        held = await holding(offload, gate, log)
        gone = asyncio.create_task(offload.run(9, log_name, log, "gone"))
        await until(lambda: len(lane.waiting) == 1)
        gone.cancel()
        await until(lambda: gone.done())
        assert lane.waiting == []  # its place is free for another
        late = asyncio.create_task(offload.run(9, log_name, log, "late"))
        gate.set()
        await asyncio.gather(held, late)

    run(scenario())
    assert list(log) == ["held", "late"]


DESCENT = {
    "source": "w = 2.0\nb = 0.5\n"
    + "L = "
    + " + ".join(f"(w*{i} + b - {i})**2" for i in range(40)),
    "parameters": ["w", "b"],
    "lr": 0.0001,
    "steps": 20,
}


def test_a_long_descent_runs_in_a_helper_and_answers_as_in_a_thread(make_client):
    """Issue 21: 10k nodes × 200 steps ran 5.2 s in a worker thread, stalling its process."""
    offloaded = make_client(offload_min_source_chars=100)
    in_thread = make_client()
    assert len(DESCENT["source"]) >= 100
    response = offloaded.post("/api/descend", json=DESCENT)
    assert response.status_code == 200
    assert offloaded.app.state.server.offload.lanes["small"].pool is not None
    assert in_thread.app.state.server.offload.lanes["small"].pool is None
    assert response.json() == in_thread.post("/api/descend", json=DESCENT).json()


def test_short_programs_are_traced_a_few_threads_at_once_the_shortest_first():
    """In the worker's own threads too: each trace holds the GIL, so at most `threads` run,
    and a preset never waits behind a queue of long programs."""
    offload = Offload(processes=1, max_waiting=8, big_source_chars=10**9, threads=2)
    first, then = threading.Event(), threading.Event()  # the first two traces, the others
    started: list[str] = []
    lock = threading.Lock()
    running = [0, 0]  # now, most at once

    def trace(name: str) -> str:
        with lock:
            started.append(name)
            running[0] += 1
            running[1] = max(running)
        (first if name in ("long0", "long1") else then).wait(30)
        with lock:
            running[0] -= 1
        return name

    async def scenario() -> list[str]:
        jobs = [asyncio.create_task(offload.in_thread(400, trace, f"long{i}")) for i in range(4)]
        # Both long traces started (in their threads, held), two more wait.
        await until(lambda: offload.threads.depth() == {"waiting": 2, "running": 2})
        await until(lambda: len(started) == 2)
        jobs.append(asyncio.create_task(offload.in_thread(30, trace, "preset")))
        await until(lambda: len(offload.threads.waiting) == 3)
        first.set()
        # The two slots freed go to two of the waiting three, which hold them: which two does
        # not depend on which of their threads happens to start first.
        await until(lambda: len(started) == 4)
        admitted = set(started[2:4])
        then.set()
        return admitted, await asyncio.gather(*jobs)

    admitted, done = run(scenario())
    assert done == ["long0", "long1", "long2", "long3", "preset"]
    # The two slots freed at once went to the preset and the first long one queued: the preset
    # went ahead of long3, queued before it (first come, first served would start it last).
    assert admitted == {"preset", "long2"} and started[4] == "long3", started
    assert running[1] == 2


def test_trace_threads_idle_give_back_memory_once_and_not_while_busy(monkeypatch):
    """The pages a trace freed go back to the system (malloc_trim) once the trace threads have
    been idle for IDLE_TRIM_S: once for a burst of work, never while a trace runs, and not at
    all when nothing was traced since the last time."""
    from chainrule.app.http import offload as offload_module

    trims: list[int] = []  # the number of traces running at each trim
    offload = Offload(processes=1, max_waiting=8, big_source_chars=10**9, threads=2)
    monkeypatch.setattr(offload_module, "IDLE_TRIM_S", 0.05)
    monkeypatch.setattr(
        offload_module, "MALLOC_TRIM", lambda pad: trims.append(offload.threads.running) or 1
    )
    release = threading.Event()

    async def scenario() -> None:
        # A burst: three traces back to back, one held past the idle delay.
        await asyncio.gather(*(offload.in_thread(10, str, i) for i in range(2)))
        assert offload.trim is not None  # idle: a trim is due after IDLE_TRIM_S
        held = asyncio.create_task(offload.in_thread(10, release.wait, 30))
        # The timer fired while the third trace ran: it gave nothing back.
        await until(lambda: offload.trim is None and offload.threads.running == 1)
        assert trims == []
        release.set()
        await held
        await until(lambda: len(trims) == 1)
        # Nothing traced since: no trim is due, and none will be.
        assert trims == [0] and offload.trim is None and not offload.worked

    try:
        run(scenario())
    finally:
        offload.close()
