"""Work that ends when nobody waits for it any more: a request whose client went away, a server
shutting down. The server runs a request's trace in one of its threads with a cancel event
bound to that thread (`cancellable`); the engine's long loops call `check()` (a statement
built, a call of the program's function evaluated, a leaf checked, a row of a landscape, a step
of descent, a stage of a trace), which raises `Cancelled` once the event is set. A thread cannot
be stopped from outside without risking the state it holds (locks, the paused cycle collector),
so it stops itself at the next of these points: well within a second.

Outside the server (no event bound) `check()` does nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager


class Cancelled(BaseException):  # noqa: N818 - what happened, not an error of the program
    """The work was cancelled: its request went away, or the server is stopping. A
    BaseException, so no `except Exception` on the way turns it into an answer."""


_bound = threading.local()


def check() -> None:
    """Raise Cancelled if the work this thread runs was cancelled."""
    event = getattr(_bound, "event", None)
    if event is not None and event.is_set():
        raise Cancelled


@contextmanager
def cancellable(event: threading.Event) -> Iterator[None]:
    """Run the block with `event` as this thread's cancel event."""
    previous = getattr(_bound, "event", None)
    _bound.event = event
    try:
        yield
    finally:
        _bound.event = previous
