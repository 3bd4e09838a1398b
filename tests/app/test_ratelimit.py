"""The per-client rate limit: a sliding window per address, 429 in the one error shape."""

from __future__ import annotations

import httpx
import pytest
from servers import start_server, stop_server
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from chainrule.app.http.ratelimit import RateLimitMiddleware, SlidingWindowLimiter


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def limited_client(per_minute: int, clock: FakeClock, address: str = "203.0.113.7") -> TestClient:
    async def ok(_):
        return PlainTextResponse("ok")

    app = Starlette(routes=[Route("/api/graph", ok, methods=["POST"]), Route("/healthz", ok)])
    app.add_middleware(RateLimitMiddleware, per_minute=per_minute, clock=clock)
    return TestClient(app, client=(address, 50000))


def test_window_allows_the_limit_then_says_how_long_to_wait():
    clock = FakeClock()
    limiter = SlidingWindowLimiter(3, 60.0, clock)
    assert [limiter.hit("a") for _ in range(3)] == [0, 0, 0]
    clock.now += 20
    assert limiter.hit("a") == pytest.approx(40.0)
    assert limiter.hit("b") == 0  # clients are counted apart
    clock.now += 40
    assert limiter.hit("a") == 0  # the first hits left the window


def test_window_forgets_the_least_recent_client_beyond_its_capacity():
    limiter = SlidingWindowLimiter(1, 60.0, FakeClock(), max_clients=2)
    for client in ("a", "b", "c"):
        assert limiter.hit(client) == 0
    assert limiter.hit("a") == 0  # forgotten, so a fresh window
    assert limiter.hit("c") > 0


def test_over_the_limit_is_429_with_retry_after_in_the_error_shape():
    clock = FakeClock()
    client = limited_client(2, clock)
    assert [client.post("/api/graph").status_code for _ in range(2)] == [200, 200]
    clock.now += 15
    response = client.post("/api/graph")
    assert response.status_code == 429
    assert response.headers["retry-after"] == "45"
    assert response.json() == {
        "error": {
            "type": "RateLimited",
            "message": "Too many requests: at most 2 per minute per client. Retry in 45 s.",
            "line": None,
            "column": None,
            "end_line": None,
            "end_column": None,
            "snippet": "",
            "caret": "",
        }
    }
    clock.now += 45
    assert client.post("/api/graph").status_code == 200


def test_health_checks_are_never_limited():
    client = limited_client(1, FakeClock())
    assert client.post("/api/graph").status_code == 200
    assert client.post("/api/graph").status_code == 429
    assert [client.get("/healthz").status_code for _ in range(5)] == [200] * 5


def test_zero_means_no_limit():
    client = limited_client(0, FakeClock())
    assert {client.post("/api/graph").status_code for _ in range(50)} == {200}


def test_the_setting_turns_the_limit_on_in_a_real_server():
    process, base_url = start_server(env={"CHAINRULE_RATE_LIMIT_PER_MINUTE": "3"})
    try:
        with httpx.Client(base_url=base_url, timeout=10) as client:
            statuses = [client.get("/api/presets").status_code for _ in range(4)]
            limited = client.get("/api/presets")
            health = client.get("/healthz")
    finally:
        stop_server(process)
    assert statuses == [200, 200, 200, 429]
    assert limited.json()["error"]["type"] == "RateLimited"
    assert 1 <= int(limited.headers["retry-after"]) <= 60
    assert health.status_code == 200


def test_behind_a_trusted_proxy_each_forwarded_client_has_its_own_window():
    # uvicorn trusts X-Forwarded-For only from --forwarded-allow-ips (default 127.0.0.1): here
    # the test is the proxy, so the limit counts the addresses it forwards.
    process, base_url = start_server(env={"CHAINRULE_RATE_LIMIT_PER_MINUTE": "2"})
    try:
        with httpx.Client(base_url=base_url, timeout=10) as client:

            def status(address: str) -> int:
                headers = {"x-forwarded-for": address}
                return client.get("/api/presets", headers=headers).status_code

            first = [status("203.0.113.1") for _ in range(3)]
            second = [status("203.0.113.2") for _ in range(3)]
    finally:
        stop_server(process)
    assert first == second == [200, 200, 429]


def test_forwarded_addresses_from_an_untrusted_peer_are_ignored():
    env = {"CHAINRULE_RATE_LIMIT_PER_MINUTE": "2", "FORWARDED_ALLOW_IPS": "10.0.0.1"}
    process, base_url = start_server(env=env)
    try:
        with httpx.Client(base_url=base_url, timeout=10) as client:
            statuses = [
                client.get(
                    "/api/presets", headers={"x-forwarded-for": f"203.0.113.{n}"}
                ).status_code
                for n in range(3)
            ]
    finally:
        stop_server(process)
    assert statuses == [200, 200, 429]  # one client: a spoofed header buys nothing


def test_behind_a_root_path_the_api_is_still_limited(make_client):
    # uvicorn --root-path /chainrule: scope["path"] is "/chainrule/api/graph", the route path
    # is "/api/graph".
    from starlette.testclient import TestClient as AppClient

    app = make_client(rate_limit_per_minute=3).app
    with AppClient(app, root_path="/chainrule", raise_server_exceptions=False) as client:
        statuses = [
            client.post("/chainrule/api/graph", json={"source": "a*b"}).status_code
            for _ in range(4)
        ]
        page = client.get("/chainrule/")
    assert statuses == [200, 200, 200, 429]
    assert page.status_code == 200  # the page is never limited


def test_a_real_server_behind_a_root_path_limits_the_api():
    # The proxy strips the prefix; uvicorn puts it back in front of scope["path"].
    env = {"CHAINRULE_RATE_LIMIT_PER_MINUTE": "2", "UVICORN_ROOT_PATH": "/chainrule"}
    process, base_url = start_server(env=env)
    try:
        with httpx.Client(base_url=base_url, timeout=10) as client:
            statuses = [
                client.post("/api/graph", json={"source": "a"}).status_code for _ in range(3)
            ]
            health = [client.get("/healthz").status_code for _ in range(3)]
    finally:
        stop_server(process)
    assert statuses == [200, 200, 429]
    assert health == [200, 200, 200]
