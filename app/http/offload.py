"""Work too big for a request's thread (tracing and laying out long programs, long descents),
run in helper processes: a trace pauses its process for garbage collection, and /healthz and
every other request of the worker would wait with it.

Fair and bounded: two lanes, each its own processes, so that a short program never waits behind
the 20,000-node ones, and a third for the short programs traced in the worker's own threads (a
few at once: each holds the GIL while it traces, and the event loop needs it too); in a lane the
shortest waiting program goes first; and a lane holds at most `max_waiting` programs waiting,
past which a request is refused at once (503 `Busy`, with Retry-After), never queued without
bound. The helpers end when their worker dies, however it dies (exit_with_parent).

Work ends when nobody waits for it (issue 36): a request cancelled (its client went away, the
server is stopping; app/http/inflight.py) leaves its lane's queue at once if it waits; if it runs
in a
trace thread, its cancel event is set and the engine stops at its next check (engine/cancel.py),
the slot held until then (a fraction of a second); if it runs in a helper process, that process
is killed and the lane starts a fresh one for the next program.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import heapq
import itertools
import multiprocessing
import multiprocessing.connection
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import Any, TypeVar

from chainrule.app.http.errors import ApiError
from chainrule.engine.cancel import cancellable
from chainrule.engine.i18n import msg

T = TypeVar("T")
RETRY_AFTER_S = 5  # about one big program's time: 20,000 nodes take 3 to 5 s
# How long a trace thread may hold the GIL while the event loop waits for it (CPython's default:
# 5 ms). Under bench/load.py (g), two traces at once made /healthz wait its turn behind both:
# p99 25 to 134 ms with 5 ms, 23 to 61 ms with 1 ms (presets p99 139-202 ms then 170-200).
SWITCH_INTERVAL_S = 0.001
# A worker whose trace threads have been idle this long gives back the memory their work left
# (give_back_memory): 8 MB of a worker's 118 after the costliest mix of bench/load.py (g).
IDLE_TRIM_S = 1.0
# How long a closing worker waits for each pool it killed to be taken down (its manager thread
# finds the helpers dead and closes the queues: well under a second).
CLOSE_WAIT_S = 5.0


def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's malloc_trim, which hands the heap's free pages back to the system; None elsewhere."""
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None


MALLOC_TRIM = _malloc_trim()


def give_back_memory() -> None:
    """Return to the system the heap pages traced programs freed: a graph is freed as soon as
    its request ends (it holds no cycles: engine/gc_pause.py), but glibc's allocator keeps the
    pages for itself until malloc_trim. A millisecond or two, without the GIL. (A full
    collection would free a few more MB, of exceptions' tracebacks, for 60 ms of the GIL.)"""
    if MALLOC_TRIM is not None:
        MALLOC_TRIM(0)


def exit_with_parent() -> None:
    """Initializer of each helper process: end it the moment the worker that started it dies.

    A worker killed by SIGKILL (or the out-of-memory killer) runs no shutdown, and its helper
    would otherwise wait on the job queue forever: the spawn pipe's other end, held only by the
    worker, becomes readable when the worker is gone, and a daemon thread waiting on it exits.
    Ctrl-C in the terminal of `make run` reaches the whole process group: the helper leaves it
    to its worker, which stops it (`Offload.close`), instead of dying on a KeyboardInterrupt
    whose traceback (20 lines a helper) ends the server's log. It was started with SIGINT
    blocked (`_submitted`): a Ctrl-C while it imported is pending, and dropped here.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
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


def run_then_trim(work: Callable[..., T], *args: Any) -> T:
    """`work(*args)` in a helper, which then gives back the memory it freed: a helper that
    traced a 12,000-node graph held its pages (100 MB and more) until it was next killed."""
    try:
        return work(*args)
    finally:
        give_back_memory()


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

    def kill(self, pool: ProcessPoolExecutor) -> None:
        """End the pool's helpers now (their work is abandoned) and forget the pool. With more
        than one helper in the lane, the others' programs fail as a dead helper's do and are
        retried once in the fresh pool (Offload.run)."""
        _kill_helpers(pool)
        self.discard(pool)


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
        # The trace threads' own executor: its threads are the `threads` slots' (the event
        # loop's default executor serves Starlette's other blocking calls).
        self.executor = ThreadPoolExecutor(threads, thread_name_prefix="trace")
        self.warm_up: Callable[[], None] | None = None
        self.worked = False  # a program was traced here since memory was last given back
        self.trim: asyncio.TimerHandle | None = None

    def lane(self, size: int) -> Lane:
        return self.lanes["big" if size >= self.big_source_chars else "small"]

    async def by_size(self, size: int, min_chars: int, work: Callable[..., T], *args: Any) -> T:
        """`work(*args)` off the event loop: in a helper process for a program of `min_chars`
        characters or more (`offload_min_source_chars`), else in a thread of this process."""
        if size >= min_chars:
            return await self.run(size, work, *args)
        return await self.in_thread(size, work, *args)

    async def in_thread(self, size: int, work: Callable[..., T], *args: Any) -> T:
        """`work(*args)` in a worker thread of this process when one of the `threads` slots is
        free for a program of `size` characters (ApiError 503 Busy when too many wait).
        Cancelled (the request went away), the work is told to stop (engine/cancel.py) and the
        slot is given back when it has: the thread is the slot's."""
        await self.threads.enter(size)
        stop = threading.Event()

        def run() -> T:
            with cancellable(stop):
                return work(*args)

        job = asyncio.get_running_loop().run_in_executor(self.executor, run)
        try:
            result = await asyncio.shield(job)
        except asyncio.CancelledError:
            if job.done():
                self.left_thread()
            else:  # the slot is free when the thread is
                stop.set()
                job.add_done_callback(lambda done: (_consume(done), self.left_thread()))
            raise
        except BaseException:
            self.left_thread()
            raise
        self.left_thread()
        return result

    def left_thread(self) -> None:
        """A trace thread's slot is free: when all are (none waits either), memory is given
        back after IDLE_TRIM_S of quiet, in a trace thread (the event loop never pauses for it)."""
        self.threads.leave()
        self.worked = True
        if self.trim is None and not self.threads.running and not self.threads.waiting:
            self.trim = asyncio.get_running_loop().call_later(IDLE_TRIM_S, self.trim_if_idle)

    def trim_if_idle(self) -> None:
        self.trim = None
        if self.threads.running or self.threads.waiting:
            return  # the last of them to leave asks again
        if self.worked:
            self.worked = False
            self.executor.submit(give_back_memory)

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
                    return await self._in(lane, pool, _submitted(pool, run_then_trim, work, *args))
                except BrokenProcessPool:
                    lane.discard(pool)
            raise ApiError(503, "Unavailable", msg("api.unavailable"))
        finally:
            lane.leave()

    async def _in(self, lane: Lane, pool: ProcessPoolExecutor, job: Future[T]) -> T:
        """The result of `job`; if the request goes away first, the job is cancelled, or its
        helper killed if it runs: nobody waits for what it would answer."""
        waited = asyncio.wrap_future(job)
        try:
            return await asyncio.shield(waited)
        except asyncio.CancelledError:
            waited.add_done_callback(_consume)  # its helper's death, which nobody reads
            if not job.cancel() and not job.done():
                lane.kill(pool)
                if self.warm_up is not None:  # a fresh helper, ready for the next program
                    _warm(lane, self.warm_up)
            raise

    def depth(self) -> dict[str, dict[str, int]]:
        """Per lane, how many programs wait and how many run (/healthz's detail)."""
        return {"threads": self.threads.depth()} | {
            name: lane.depth() for name, lane in self.lanes.items()
        }

    def start(self, warm_up: Callable[[], None]) -> None:
        """Start every helper now, so that the first big program does not pay for it; the
        process's trace threads yield the GIL to its event loop every SWITCH_INTERVAL_S."""
        self.warm_up = warm_up
        sys.setswitchinterval(SWITCH_INTERVAL_S)  # the trace threads yield to the event loop sooner
        for lane in self.lanes.values():
            _warm(lane, warm_up)

    def close(self) -> None:
        """Stop the helpers and the trace threads' executor. Work still running was cancelled
        with its request (app/http/inflight.py); the helpers are killed, busy or not, never waited
        for: a spawned helper's own exit took 7 s of a loaded machine's SIGTERM, 0.3 s killed."""
        if self.trim is not None:
            self.trim.cancel()
        for lane in self.lanes.values():
            if lane.pool is not None:
                pool, lane.pool = lane.pool, None
                _kill_helpers(pool)
                _taken_down(pool)
        self.executor.shutdown(wait=False, cancel_futures=True)


def _submitted(pool: ProcessPoolExecutor, work: Callable[..., T], *args: Any) -> Future[T]:
    """`pool.submit(work, *args)`, SIGINT blocked in this thread meanwhile: a helper that the
    submission starts (spawned: fork and exec keep the signal mask) begins with it blocked,
    until `exit_with_parent` ignores it. A Ctrl-C while a helper still imported killed it with
    a traceback (the pools warm up as the server starts)."""
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        return pool.submit(work, *args)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _kill_helpers(pool: ProcessPoolExecutor) -> None:
    """SIGKILL each of `pool`'s helpers still alive (none after its shutdown)."""
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        if process.is_alive():
            process.kill()


def _taken_down(pool: ProcessPoolExecutor) -> None:
    """Shut `pool` down, its helpers killed, waiting (at most CLOSE_WAIT_S) until its queues
    are closed and their semaphores given back. A worker of several (`--workers 2`) ends on
    the SIGTERM uvicorn raises again once it has shut down, which runs no exit handler: a pool
    left to close in the background leaked its five semaphores, and the resource tracker
    warned of them as the server stopped."""
    closing = threading.Thread(
        target=pool.shutdown, kwargs={"wait": True, "cancel_futures": True}, daemon=True
    )
    closing.start()
    closing.join(CLOSE_WAIT_S)


def _warm(lane: Lane, warm_up: Callable[[], None]) -> None:
    """Start `lane`'s helper now with `warm_up`. Its outcome is read (a helper killed while it
    warms up breaks its pool: nobody waits for that, and it is not logged as never retrieved)."""
    started = _submitted(lane.executor(), warm_up)
    started.add_done_callback(lambda done: done.cancelled() or done.exception())


def _consume(job: asyncio.Future[Any]) -> None:
    """Read a cancelled request's job's outcome (its Cancelled, or a result nobody wants), so
    asyncio does not log it as never retrieved."""
    if not job.cancelled():
        job.exception()
