"""The same work asked for while it runs is done once (app/http/shared_work.py): a class's
thousand pages asking for the teacher's new program at once, against a real server."""

from __future__ import annotations

import asyncio
import collections

import httpx
import pytest
from event_loops import run_in_own_loop
from servers import start_server, stop_server

from chainrule.app.http.shared_work import SharedWork


def test_work_asked_for_while_it_runs_is_done_once_and_shared():
    async def run() -> None:
        shared = SharedWork()
        started = []

        async def work() -> str:
            started.append(shared.running())  # every request below has joined by now
            return "body"

        # Scheduled in order: all fifty join before the work, started by the first, begins.
        results = await asyncio.gather(*(shared.join("k", work) for _ in range(50)))
        assert started == [1]
        assert sorted(joined for _, joined in results) == [False] + [True] * 49
        assert {body for body, _ in results} == {"body"}
        assert shared.running() == 0
        await shared.join("k", work)  # done: asked again, it runs again
        assert len(started) == 2

    run_in_own_loop(run())


def test_a_failure_reaches_everyone_waiting_and_is_not_kept():
    async def run() -> None:
        shared = SharedWork()
        calls = []

        async def work() -> str:
            calls.append(1)
            if len(calls) == 1:
                raise ValueError("bad program")
            return "body"

        results = await asyncio.gather(
            *(shared.join("k", work) for _ in range(3)), return_exceptions=True
        )
        assert [str(r) for r in results] == ["bad program"] * 3
        assert await shared.join("k", work) == ("body", False)

    run_in_own_loop(run())


def test_the_work_ends_when_the_last_request_waiting_for_it_goes():
    async def run() -> None:
        shared = SharedWork()
        started = asyncio.Event()
        ended = asyncio.Event()
        release = asyncio.Event()

        async def work() -> str:
            started.set()
            try:
                await release.wait()
                return "body"
            except asyncio.CancelledError:
                ended.set()
                raise

        first = asyncio.ensure_future(shared.join("k", work))
        second = asyncio.ensure_future(shared.join("k", work))
        await asyncio.wait_for(started.wait(), 1)  # both have joined before the work began
        first.cancel()  # one client goes: the work goes on for the other
        with pytest.raises(asyncio.CancelledError):
            await first
        release.set()
        assert await second == ("body", True)  # a cancelled work would raise here
        assert not ended.is_set()

        started.clear()
        release.clear()
        alone = asyncio.ensure_future(shared.join("j", work))
        await asyncio.wait_for(started.wait(), 1)
        alone.cancel()  # the only client goes: so does the work (issue 36)
        await asyncio.wait_for(ended.wait(), 1)
        with pytest.raises(asyncio.CancelledError):
            await alone

    run_in_own_loop(run())


@pytest.mark.timeout(120)
def test_a_rooms_identical_requests_at_once_all_get_the_trace():
    """200 pages ask for one new program at once, with room for 8 waiting traces: before, all
    but about ten were refused with 503 (bench/classroom.py's page scenario: 66 of 2,000)."""
    process, base_url = start_server({"CHAINRULE_OFFLOAD_MAX_WAITING": "1"})
    try:
        source = "a = 2\nb = a + 1\nc = a * 3\nd = b * c + tanh(a)"

        async def room() -> collections.Counter:
            limits = httpx.Limits(max_connections=200)
            async with httpx.AsyncClient(base_url=base_url, timeout=60, limits=limits) as http:
                replies = await asyncio.gather(
                    *(http.post("/api/graph", json={"source": source}) for _ in range(200))
                )
            assert {r.json()["nodes"][-1]["data"] for r in replies if r.status_code == 200} == {
                replies[0].json()["nodes"][-1]["data"]
            }
            return collections.Counter(r.status_code for r in replies)

        assert run_in_own_loop(room()) == {200: 200}
    finally:
        stop_server(process)
