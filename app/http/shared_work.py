"""The same work asked for while it runs is joined, not done again.

A class of a thousand phones whose teacher types a new program sends a thousand identical
`POST /api/graph` at once: the response cache answers only once the first is done, so without
this each would queue for a trace thread (and past the lane's bound, get a 503). `SharedWork`
runs the work of a key once, in a task of its own, and every request for that key meanwhile
awaits the same task. Work still ends when its clients go (issue 36): the task is cancelled
when the last request waiting for it is.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, TypeVar

T = TypeVar("T")


class _Flight(Generic[T]):
    __slots__ = ("task", "waiting")

    def __init__(self, task: asyncio.Task[T]) -> None:
        self.task = task
        self.waiting = 0


class SharedWork:
    """Work by key, done once for all who ask while it runs."""

    def __init__(self) -> None:
        self._flights: dict[Hashable, _Flight] = {}

    def running(self) -> int:
        """How many pieces of work run now."""
        return len(self._flights)

    async def join(self, key: Hashable, start: Callable[[], Awaitable[T]]) -> tuple[T, bool]:
        """The result of the work `key` names, started with `start()` unless it runs already
        (then this request joins it: the second value is True). Its exception, if it fails."""
        flight = self._flights.get(key)
        joined = flight is not None and not flight.task.done() and not flight.task.cancelling()
        if not joined:
            flight = _Flight(asyncio.ensure_future(start()))
            self._flights[key] = flight
            flight.task.add_done_callback(lambda _: self._forget(key, flight))
        assert flight is not None
        flight.waiting += 1
        try:
            return await asyncio.shield(flight.task), joined
        finally:
            flight.waiting -= 1
            if flight.waiting == 0 and not flight.task.done():
                flight.task.cancel()  # nobody waits for it any more

    def _forget(self, key: Hashable, flight: _Flight) -> None:
        if self._flights.get(key) is flight:
            del self._flights[key]
        if not flight.task.cancelled():
            flight.task.exception()  # retrieved: each waiter has raised it already
