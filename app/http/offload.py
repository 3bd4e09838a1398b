"""Work too big for a request's thread (tracing and laying out long programs, long descents),
run in helper processes: a trace pauses its process for garbage collection, and /healthz and
every other request of the worker would wait with it.

Fair and bounded: two lanes, each its own processes, so that a short program never waits behind
the 20,000-node ones, and a third for the short programs traced in the worker's own threads (a
few at once: each holds the GIL while it traces, and the event loop needs it too); in a lane the
shortest waiting program goes first; and a lane holds at most `max_waiting` programs waiting,
past which a request is refused at once (503 `Busy`, with Retry-After), never queued without
bound. The helpers end when their worker dies, however it dies (exit_with_parent).
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import multiprocessing
import multiprocessing.connection
import os
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import Any, TypeVar

from starlette.concurrency import run_in_threadpool

from chainrule.app.http.errors import ApiError
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
class Gate:
    """At most `slots` programs at once; the others wait, the shortest first (then first come),
    at most `max_waiting` of them: past that a program is refused at once (503 Busy)."""

    slots: int
    max_waiting: int
    waiting: list[tuple[int, int, asyncio.Future[None]]] = field(default_factory=list)
    running: int = 0
    _order: Iterator[int] = field(default_factory=itertools.count, repr=False)

    async def enter(self, size: int) -> None:
        """Wait for a slot for a program of `size` characters (ApiError 503 Busy if full)."""
        if self.running < self.slots and not self.waiting:
            self.running += 1
            return
        if len(self.waiting) >= self.max_waiting:
            raise busy()
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        entry = (size, next(self._order), turn)
        heapq.heappush(self.waiting, entry)
        try:
            await turn
        except asyncio.CancelledError:  # the request went away while it waited
            if entry in self.waiting:
                self.waiting.remove(entry)
                heapq.heapify(self.waiting)
            elif not turn.cancelled():  # admitted just as it was cancelled: give the turn back
                self.leave()
            raise

    def leave(self) -> None:
        """Free a slot: wake the shortest waiting programs while a slot is free."""
        self.running -= 1
        while self.waiting and self.running < self.slots:
            _, _, turn = heapq.heappop(self.waiting)
            if not turn.done():  # its request may have gone away meanwhile
                self.running += 1
                turn.set_result(None)

    def depth(self) -> dict[str, int]:
        return {"waiting": len(self.waiting), "running": self.running}


@dataclass
class Lane(Gate):
    """A Gate in front of helper processes started on first use ('spawn': no forked threads)."""

    pool: ProcessPoolExecutor | None = None

    def executor(self) -> ProcessPoolExecutor:
        if self.pool is None:
            self.pool = ProcessPoolExecutor(
                self.slots,
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


class Offload:
    """The lanes of one worker: `threads` for short programs in this process (few at once, so
    that /healthz and the event loop still get the GIL), then helper processes: `small` for
    programs shorter than `big_source_chars`, `big` for the rest."""

    def __init__(
        self, *, processes: int, max_waiting: int, big_source_chars: int, threads: int = 2
    ) -> None:
        self.big_source_chars = big_source_chars
        self.threads = Gate(threads, max_waiting * 8)
        self.lanes = {"small": Lane(1, max_waiting), "big": Lane(processes, max_waiting)}

    def lane(self, size: int) -> Lane:
        return self.lanes["big" if size >= self.big_source_chars else "small"]

    async def in_thread(self, size: int, work: Callable[..., T], *args: Any) -> T:
        """`work(*args)` in a worker thread of this process when one of the `threads` slots is
        free for a program of `size` characters (ApiError 503 Busy when too many wait)."""
        await self.threads.enter(size)
        try:
            return await run_in_threadpool(work, *args)
        finally:
            self.threads.leave()

    async def run(self, size: int, work: Callable[..., T], *args: Any) -> T:
        """`work(*args)` in a helper process of the lane for a program of `size` characters,
        when its turn comes: ApiError 503 `Busy` at once when the lane is full; if the helper
        dies (killed, out of memory), once more in a fresh one, then 503 `Unavailable`."""
        lane = self.lane(size)
        await lane.enter(size)
        try:
            for _attempt in range(2):
                pool = lane.executor()
                try:
                    return await self._in(lane, pool.submit(work, *args))
                except BrokenProcessPool:
                    lane.discard(pool)
            raise ApiError(503, "Unavailable", msg("api.unavailable"))
        finally:
            lane.leave()

    async def _in(self, lane: Lane, job: Future[T]) -> T:
        """The result of `job`; the lane's process stays counted as busy until the job really
        ends, even if the request goes away first."""
        try:
            return await asyncio.shield(asyncio.wrap_future(job))
        except asyncio.CancelledError:
            lane.running += 1  # given back by run()'s finally; held until the job is done
            loop = asyncio.get_running_loop()
            job.add_done_callback(lambda _: loop.call_soon_threadsafe(lane.leave))
            raise

    def depth(self) -> dict[str, dict[str, int]]:
        """Per lane, how many programs wait and how many run (/healthz's detail)."""
        return {"threads": self.threads.depth()} | {
            name: lane.depth() for name, lane in self.lanes.items()
        }

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
