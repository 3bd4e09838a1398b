"""The real thing: uvicorn on a loopback port, spoken to over HTTP."""

from __future__ import annotations

import re

import httpx
from servers import strict_json


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


def test_the_real_server_serves_versioned_assets_for_good_and_the_page_fresh(live_server):
    with httpx.Client(base_url=live_server, timeout=10) as http:
        page = http.get("/")
        match = re.search(
            r'<script type="module" src="(/static/[0-9a-f]{10}/js/main\.js)">', page.text
        )
        assert match, page.text[:800]
        main = http.get(match.group(1))
        state = http.get(match.group(1).replace("main.js", "core/store.js"))
        api = http.get("/api/presets")
    assert page.headers["cache-control"] == "no-cache"
    assert main.status_code == state.status_code == 200
    assert main.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert state.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert api.headers["cache-control"] == "no-store"
