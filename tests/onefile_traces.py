"""The trace a one-file HTML carries (app/export/onefile.py), read back as the POST /api/graph
reply it was written from: what the file leaves out (`onefile` says which: the edges but their
local derivatives, the program's copy of the source) written back by docs/api.md's rules (edge k
is the k-th input of the nodes in order) with the kernel's reader (onefile.py `expanded_trace`;
tests/app/test_export_html.py runs it and the page's own, static/js/io/onefile-trace.js, against
the reply)."""

from __future__ import annotations

import base64
import json
import re
import zlib
from typing import Any

from chainrule.app.export.onefile import expanded_trace

DATA_BLOCK = r'<script type="application/zlib\+base64" id="chainrule-data-{}">(.*?)</script>'


def block_json(html: str, player: int = 0) -> str:
    """The JSON text player `player`'s data block packs: base64 of its zlib-compressed UTF-8."""
    found = re.search(DATA_BLOCK.format(player), html, re.S)
    assert found, f"no data block for player {player}"
    return zlib.decompress(base64.b64decode(found.group(1), validate=True)).decode("utf-8")


def file_data(html: str, player: int = 0) -> dict[str, Any]:
    """Player `player`'s data block of the file ({title, trace, graph?}), its trace as a reply."""
    data = json.loads(block_json(html, player))
    return dict(data, trace=expanded_trace(data["trace"]))
