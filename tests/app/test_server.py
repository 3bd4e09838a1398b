"""The real thing: uvicorn on a loopback port, spoken to over HTTP."""

from __future__ import annotations

import threading
import time

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


def test_healthz_stays_responsive_while_a_big_graph_is_laid_out(live_server):
    # 19,952 nodes: seconds of tracing and layout in a worker thread.
    lines = ["s0 = x", *(f"s{i} = {'-' * 49}s{i - 1} * y" for i in range(1, 400))]
    big = {"source": "\n".join(lines)}
    result: dict = {}

    def post_big() -> None:
        with httpx.Client(base_url=live_server, timeout=60) as http:
            result["response"] = http.post("/api/graph", json=big)

    worker = threading.Thread(target=post_big)
    worker.start()
    latencies = []
    with httpx.Client(base_url=live_server, timeout=5) as http:
        time.sleep(0.3)  # let the big request get going before probing
        while worker.is_alive() and len(latencies) < 40:
            started = time.perf_counter()
            assert http.get("/healthz").status_code == 200
            latencies.append(time.perf_counter() - started)
            time.sleep(0.05)
    worker.join()
    assert result["response"].status_code == 200
    assert len(latencies) >= 5, "the big request finished too fast to probe"
    assert max(latencies) < 0.2, latencies
