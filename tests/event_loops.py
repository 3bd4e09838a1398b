"""Running a test's coroutine to completion wherever the test runs.

`asyncio.run` refuses to start while the calling thread has a running event loop, and Playwright's
sync API keeps one in the main thread for as long as a browser fixture lives. Run in one process,
the browser tests come after these (tests/app sorts first); spread over pytest-xdist's workers,
a worker may reach them after a browser file. A thread of their own makes them independent of
the order.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any


def run_in_own_loop(coroutine: Coroutine[Any, Any, Any]) -> Any:
    """`asyncio.run(coroutine)` in a new thread; its result, or what it raised."""
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="test-loop") as pool:
        return pool.submit(asyncio.run, coroutine).result()
