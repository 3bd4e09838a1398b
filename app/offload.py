"""Work too big for a request's thread (tracing and laying out long programs, long descents),
run in helper processes: a trace pauses its process for garbage collection, and /healthz and
every other request of the worker would wait with it.

Fair and bounded: two lanes, each its own processes, so that a short program never waits behind
the 20,000-node ones; in a lane the shortest waiting program goes first; and a lane holds at most
`max_waiting` programs waiting, past which a request is refused at once (503 `Busy`, with
Retry-After), never queued without bound. The helpers end when their worker dies, however it
dies (exit_with_parent).
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import multiprocessing
import multiprocessing.connection
import os
import threading
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import Any, TypeVar

from chainrule.app.errors import ApiError
from chainrule.engine.i18n import msg

T = TypeVar("T")
RETRY_AFTER_S = 5  # about one big program's time: 20,000 nodes take 3 to 5 s


def exit_with_parent() -> None:
    """Initializer of each helper process: end it the moment the worker that started it dies.

    A worker killed by SIGKILL (or the out-of-memory killer) runs no shutdown, and its helper
    would otherwise wait on the job queue forever: the spawn pipe's other end, held only by the
    worker, becomes readable when the worker is gone, and a daemon thread waiting on it exits.
    """
    parent = multiprocessing.parent_process()
    if parent is None:
        return

    def watch() -> None:
        multiprocessing.connection.wait([parent.sentinel])
        os._exit(0)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def busy() -> ApiError:
    """The 503 of a full lane."""
    return ApiError(
        503,
        "Busy",
        msg("api.busy", seconds=RETRY_AFTER_S),
        headers={"Retry-After": str(RETRY_AFTER_S)},
    )


@dataclass
class Lane:
    """Helper processes started on first use ('spawn': no forked threads), the programs waiting
    for them (a heap: shortest first, then first come) and how many are running."""

    name: str
    processes: int
    max_waiting: int
    pool: ProcessPoolExecutor | None = None
    waiting: list[tuple[int, int, asyncio.Future[None]]] = field(default_factory=list)
    running: int = 0

    def executor(self) -> ProcessPoolExecutor:
        if self.pool is None:
            self.pool = ProcessPoolExecutor(
                self.processes,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=exit_with_parent,
            )
        return self.pool

    def discard(self, pool: ProcessPoolExecutor) -> None:
        """Forget a pool whose process died (killed, out of memory): the next program starts a
        fresh one instead of failing on the broken pool forever."""
        if self.pool is pool:
            self.pool = None
        pool.shutdown(wait=False, cancel_futures=True)

    def admit(self) -> None:
        """Wake the shortest waiting programs while a process is free."""
        while self.waiting and self.running < self.processes:
            _, _, turn = heapq.heappop(self.waiting)
            if not turn.done():  # its request may have gone away meanwhile
                self.running += 1
                turn.set_result(None)

    def depth(self) -> dict[str, int]:
        return {"waiting": len(self.waiting), "running": self.running}


class Offload:
    """The two lanes of one worker: programs shorter than `big_source_chars` go in `small`."""

    def __init__(self, *, processes: int, max_waiting: int, big_source_chars: int) -> None:
        self.big_source_chars = big_source_chars
        self.lanes = {
            "small": Lane("small", 1, max_waiting),
            "big": Lane("big", processes, max_waiting),
        }
        self._order = itertools.count()

    def lane(self, size: int) -> Lane:
        return self.lanes["big" if size >= self.big_source_chars else "small"]

    async def run(self, size: int, work: Callable[..., T], *args: Any) -> T:
        """`work(*args)` in a helper process of the lane for a program of `size` characters,
        when its turn comes: ApiError 503 `Busy` at once when the lane is full; if the helper
        dies (killed, out of memory), once more in a fresh one, then 503 `Unavailable`."""
        lane = self.lane(size)
        await self._turn(lane, size)
        try:
            for _attempt in range(2):
                pool = lane.executor()
                try:
                    return await self._in(lane, pool.submit(work, *args))
                except BrokenProcessPool:
                    lane.discard(pool)
            raise ApiError(503, "Unavailable", msg("api.unavailable"))
        finally:
            lane.running -= 1
            lane.admit()

    async def _turn(self, lane: Lane, size: int) -> None:
        """Wait until `lane` has a process free for this program."""
        if lane.running < lane.processes and not lane.waiting:
            lane.running += 1
            return
        if len(lane.waiting) >= lane.max_waiting:
            raise busy()
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        entry = (size, next(self._order), turn)
        heapq.heappush(lane.waiting, entry)
        try:
            await turn
        except asyncio.CancelledError:  # the request went away while it waited
            if entry in lane.waiting:
                lane.waiting.remove(entry)
                heapq.heapify(lane.waiting)
            elif not turn.cancelled():  # admitted just as it was cancelled: give the turn back
                lane.running -= 1
                lane.admit()
            raise

    async def _in(self, lane: Lane, job: Future[T]) -> T:
        """The result of `job`; the lane's process stays counted as busy until the job really
        ends, even if the request goes away first."""
        try:
            return await asyncio.shield(asyncio.wrap_future(job))
        except asyncio.CancelledError:
            lane.running += 1  # given back by run()'s finally; held until the job is done
            loop = asyncio.get_running_loop()
            job.add_done_callback(lambda _: loop.call_soon_threadsafe(self._release, lane))
            raise

    def _release(self, lane: Lane) -> None:
        lane.running -= 1
        lane.admit()

    def depth(self) -> dict[str, dict[str, int]]:
        """Per lane, how many programs wait and how many run (/healthz's detail)."""
        return {name: lane.depth() for name, lane in self.lanes.items()}

    def start(self, warm_up: Callable[[], None]) -> None:
        """Start every helper now, so that the first big program does not pay for it."""
        for lane in self.lanes.values():
            lane.executor().submit(warm_up)

    def close(self) -> None:
        """Stop the helpers (waiting for a running job, so none is left orphaned)."""
        for lane in self.lanes.values():
            if lane.pool is not None:
                lane.pool.shutdown(wait=True, cancel_futures=True)
                lane.pool = None
