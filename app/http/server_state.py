"""What a server process keeps between requests: caches and facts found at startup.

Nothing here is shared between processes or needed by another request to be correct, so the
app scales out by workers and replicas.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request

from chainrule.app.http.cache import BoundedCache
from chainrule.app.http.offload import Offload
from chainrule.app.http.shared_work import SharedWork
from chainrule.app.layout.graphviz import Graphviz, GraphvizError, run_bounded
from chainrule.app.layout.layouter import Layouter
from chainrule.app.layout.shared import share_layouts
from chainrule.app.settings import AppSettings


def graphviz_version(dot_binary: str | None) -> str | None:
    """`"2.43.0"` from `dot -V`, or None when dot is missing or broken."""
    if dot_binary is None:
        return None
    try:  # bounded like every Graphviz run: a broken binary may hang or write without end
        output = run_bounded(
            [dot_binary, "-V"],
            b"",
            timeout_s=5.0,
            memory_bytes=256 << 20,
            output_bytes=4096,
            merge_stderr=True,
        )
    except GraphvizError:
        return None
    match = re.search(r"version\s+(\S+)", output.decode(errors="replace"))
    return match.group(1) if match else None


@dataclass
class ServerState:
    layouter: Layouter
    responses: BoundedCache[bytes]  # POST /api/graph's encoded bodies
    dot_binary: str | None
    graphviz_version: str | None
    graphviz: Graphviz  # this process's Graphviz slots, shared by the layout and the export
    offload: Offload
    graph_work: SharedWork  # POST /api/graph's work in progress, joined by the same request

    def close(self) -> None:
        """Stop the helper processes (waiting for a running job, so none is left orphaned)."""
        self.offload.close()

    @classmethod
    def from_settings(cls, settings: AppSettings) -> ServerState:
        dot_binary = settings.dot_binary or shutil.which("dot")
        version = graphviz_version(dot_binary)
        if version is None:
            dot_binary = None
        graphviz = Graphviz.from_settings(settings, binary=dot_binary or "")
        return cls(
            layouter=share_layouts(Layouter.from_settings(settings, graphviz), settings),
            # Bounded by total encoded bytes too: a 20,000-node response is ~20 MB.
            responses=BoundedCache(
                settings.response_cache_size,
                max_size=settings.response_cache_bytes,
                sizeof=len,
            ),
            dot_binary=dot_binary,
            graphviz_version=version,
            graphviz=graphviz,
            offload=Offload(
                processes=settings.offload_processes,
                max_waiting=settings.offload_max_waiting,
                big_source_chars=settings.offload_big_source_chars,
                threads=settings.trace_threads,
            ),
            graph_work=SharedWork(),
        )


async def get_state(request: Request) -> ServerState:
    return request.app.state.server


Server = Annotated[ServerState, Depends(get_state)]
