"""The real thing: uvicorn on a loopback port, spoken to over HTTP."""

from __future__ import annotations

import httpx
from conftest import strict_json


def test_the_real_server_answers_over_http(live_server):
    with httpx.Client(base_url=live_server, timeout=10) as http:
        page = http.get("/")
        assert page.status_code == 200
        assert page.headers["x-content-type-options"] == "nosniff"
        presets = http.get("/api/presets").json()
        graph = http.post("/api/graph", json={"source": presets[0]["source"]})
        assert graph.status_code == 200
        assert strict_json(graph.content)["layout"]["engine"] == "dot"
        error = http.post("/api/graph", json={"source": "a +"})
        assert error.status_code == 400
        assert error.json()["error"]["type"] == "SyntaxError"
        too_big = http.post("/api/graph", content=b"x" * 1_100_000)
        assert too_big.status_code == 413
        svg = http.post("/api/export?format=svg", json={"source": "a*b"})
        assert svg.headers["content-type"] == "image/svg+xml"
