"""Pausing CPython's cycle collector around graph builds, safely across threads."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_pause_lock = threading.Lock()
_pause_count = 0  # callers inside cycle_collector_paused, across all threads
_pause_reenables = False  # whether the last one out re-enables the collector


@contextmanager
def cycle_collector_paused() -> Iterator[None]:
    """Pause CPython's cycle collector: our graphs hold no reference cycles (refcounting frees
    them), so scanning the many new nodes of a large build is pure overhead (about 15% of a
    trace).

    The collector is process-wide and request threads overlap, so entries are counted under a
    lock: the first one in disables it, the last one out re-enables it, and only if it was
    enabled when the first one came in. A caller that disabled it keeps it disabled.
    """
    global _pause_count, _pause_reenables
    with _pause_lock:
        if _pause_count == 0:
            _pause_reenables = gc.isenabled()
            gc.disable()
        _pause_count += 1
    try:
        yield
    finally:
        with _pause_lock:
            _pause_count -= 1
            if _pause_count == 0 and _pause_reenables:
                _promote_survivors()
                gc.enable()


def _promote_survivors() -> None:
    """Move every object the collector tracks to its oldest generation, unscanned, and reset
    the count of new ones. While paused, the collector still counts new objects: the first
    allocation after it resumes would scan every survivor of the pause at once (a trace kept
    by its caller: 100,000 nodes, a quarter of a second) and again on each promotion. Unscanned
    they are safe: none is in a cycle (engine objects never are), and a full collection would
    still find one. `freeze` empties the young generations into the permanent one and resets
    their count; `unfreeze` puts them all in the oldest (both a splice of lists). Not when the
    process froze objects of its own (a server that forks its workers after `gc.freeze()`, a
    test's frozen heap): `unfreeze` would hand every one of them back to the collector."""
    if gc.get_freeze_count():
        return
    gc.freeze()
    gc.unfreeze()
