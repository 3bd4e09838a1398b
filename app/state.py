"""What a server process keeps between requests: caches and facts found at startup.

Nothing here is shared between processes or needed by another request to be correct, so the
app scales out by workers and replicas.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import os
import re
import shutil
import subprocess
import threading
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Annotated

from fastapi import Depends, Request

from chainrule.app.cache import BoundedCache
from chainrule.app.layout import Layouter
from chainrule.app.settings import AppSettings
from chainrule.app.shared_layouts import share_layouts
from chainrule.app.trace_body import GraphBody


def graphviz_version(dot_binary: str | None) -> str | None:
    """`"2.43.0"` from `dot -V`, or None when dot is missing or broken."""
    if dot_binary is None:
        return None
    try:
        result = subprocess.run([dot_binary, "-V"], capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    match = re.search(r"version\s+(\S+)", result.stderr + result.stdout)
    return match.group(1) if match and result.returncode == 0 else None


def exit_with_parent() -> None:
    """Initializer of each offload process: end it the moment the worker that started it dies.

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


@dataclass
class ServerState:
    layouter: Layouter
    responses: BoundedCache[GraphBody]
    dot_binary: str | None
    graphviz_version: str | None
    offload_processes: int = 1
    _pool: ProcessPoolExecutor | None = field(default=None, repr=False)

    def offload_pool(self) -> ProcessPoolExecutor:
        """Worker processes for big programs, started on first use ('spawn': no forked threads);
        each exits when this process dies, however it dies."""
        if self._pool is None:
            self._pool = ProcessPoolExecutor(
                self.offload_processes,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=exit_with_parent,
            )
        return self._pool

    def discard_pool(self, pool: ProcessPoolExecutor) -> None:
        """Forget a pool whose process died (killed, out of memory): the next big program
        starts a fresh one instead of failing on the broken pool forever."""
        if self._pool is pool:
            self._pool = None
        pool.shutdown(wait=False, cancel_futures=True)

    def close(self) -> None:
        """Stop the worker processes (waiting for a running job, so none is left orphaned)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    @classmethod
    def from_settings(cls, settings: AppSettings) -> ServerState:
        dot_binary = settings.dot_binary or shutil.which("dot")
        version = graphviz_version(dot_binary)
        if version is None:
            dot_binary = None
        return cls(
            layouter=share_layouts(
                Layouter(
                    dot_timeout_s=settings.dot_timeout_s,
                    dot_max_nodes=settings.dot_max_nodes,
                    cache_size=settings.layout_cache_size,
                    dot_binary=dot_binary or "",
                ),
                settings,
            ),
            # Bounded by total encoded bytes too: a 20,000-node response is ~20 MB.
            responses=BoundedCache(
                settings.response_cache_size,
                max_size=settings.response_cache_bytes,
                sizeof=lambda body: len(body.trace_json),
            ),
            dot_binary=dot_binary,
            graphviz_version=version,
            offload_processes=settings.offload_processes,
        )


async def get_state(request: Request) -> ServerState:
    return request.app.state.server


Server = Annotated[ServerState, Depends(get_state)]
