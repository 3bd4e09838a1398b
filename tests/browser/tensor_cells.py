"""What the tensor view's browser tests share: a cell's selector and a POST to the live server."""

from __future__ import annotations

import json
import urllib.request


def cell(tensor: str, grid: str, index: str) -> str:
    """The selector of element `index` (`"1,2"`, `""` for one number) of tensor `tensor`'s
    `grid` (`data` or `grad`)."""
    return (
        f"[data-testid=tensor-cell][data-tensor-id={tensor}]"
        f"[data-grid={grid}][data-index='{index}']"
    )


def post(live_server: str, path: str, body: dict) -> dict:
    """The JSON reply of `POST path` with `body` on the live server."""
    request = urllib.request.Request(
        f"{live_server}{path}",
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json"},
    )
    with urllib.request.urlopen(request) as response:
        return json.loads(response.read())
