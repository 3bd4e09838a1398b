"""Issue 36: work ends when its client goes. A request whose client disconnects is cancelled,
running or waiting, in the trace threads and in the helper processes alike, and its lane is free
within a second; a server told to stop (SIGTERM) under such work answers it 503 and exits within
its grace period instead of waiting for the work without end.

The second is measured in the app's own event loop (the ASGI messages a server sends: the
request, then `http.disconnect`), where nothing but the work stands between the disconnect and
the free lane; against a real uvicorn server on loopback (tests/servers.py `start_server`) the
same is checked end to end, where each /healthz poll of a loaded 2-core machine takes its own
second. The work: a descent long enough to be cut short (the work bound raised for the test:
200 steps of the composed functions, about a minute)."""

from __future__ import annotations

import asyncio
import json
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from event_loops import run_in_own_loop
from servers import start_server, stop_server

from chainrule.app.main import create_app
from chainrule.app.settings import AppSettings

COMPOSED = "\n".join(
    ["f1(x) = x*0.5+0.25", *(f"f{k}(x) = f{k - 1}(f{k - 1}(x))" for k in range(2, 13))]
)
LONG = {  # about 80,000 node-steps a step: 200 steps are a minute of work
    "source": f"{COMPOSED}\na = 0.1\nb = 0.2\nL = f12(a) + f12(b)",
    "parameters": ["a"],
    "lr": 1e-9,
    "steps": 200,
}
UNBOUNDED = {"CHAINRULE_DESCEND_MAX_NODE_STEPS": str(10**9)}
# Docker's default grace between SIGTERM and SIGKILL.
GRACE_S = 10


def post(base_url: str, body: dict) -> socket.socket:
    """Send `POST /api/descend` with `body` on a socket of its own, not reading the answer."""
    host, port = base_url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)))
    payload = json.dumps(body).encode()
    head = (
        f"POST /api/descend HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(payload)}\r\n\r\n"
    )
    sock.sendall(head.encode() + payload)
    return sock


def lanes(base_url: str) -> dict[str, dict[str, int]]:
    return httpx.get(f"{base_url}/healthz", timeout=5).json()["detail"]["offload"]


def wait_for(condition: Callable[[], bool], seconds: float) -> float:
    """Poll `condition` until it holds; how long that took (fails past `seconds`)."""
    start = time.monotonic()
    while not condition():
        assert time.monotonic() - start < seconds, "the condition did not hold in time"
        time.sleep(0.02)  # polls the condition it then asserts
    return time.monotonic() - start


def scope_of(body: bytes) -> dict[str, Any]:
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    return {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
        "scheme": "http", "path": "/api/descend", "raw_path": b"/api/descend",
        "query_string": b"", "root_path": "", "headers": [(b"host", b"test"), *headers],
        "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 80),
    }  # fmt: skip


class Client:
    """One request sent to the app as a server sends it: the body, then (`leave`) the
    `http.disconnect` a server sends when the client goes. `sent`: what the app answered."""

    def __init__(self, app: Any, body: dict) -> None:
        payload = json.dumps(body).encode()
        self.messages = [{"type": "http.request", "body": payload, "more_body": False}]
        self.gone = asyncio.Event()
        self.sent: list[dict] = []
        self.task = asyncio.ensure_future(app(scope_of(payload), self.receive, self.send))

    async def receive(self) -> dict:
        if self.messages:
            return self.messages.pop(0)
        await self.gone.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: dict) -> None:
        self.sent.append(message)

    def leave(self) -> None:
        self.gone.set()


async def until(condition: Callable[[], bool], seconds: float) -> float:
    """Let the loop run until `condition` holds; how long that took (fails past `seconds`)."""
    loop = asyncio.get_running_loop()
    start = loop.time()
    while not condition():
        assert loop.time() - start < seconds, "the condition did not hold in time"
        await asyncio.sleep(0.005)  # polls the condition it then asserts
    return loop.time() - start


def in_loop(test: Callable[[Any], Any], **settings: Any) -> None:
    app = create_app(AppSettings(descend_max_node_steps=10**9, **settings))
    try:
        run_in_own_loop(test(app))
    finally:
        app.state.server.close()


def test_a_request_whose_client_goes_frees_its_trace_thread_within_a_second() -> None:
    async def scenario(app: Any) -> None:
        threads = app.state.server.offload.threads
        running = Client(app, LONG)
        await until(lambda: threads.running == 1, 30)
        waiting = Client(app, LONG)
        await until(lambda: len(threads.waiting) == 1, 30)

        waiting.leave()
        assert await until(lambda: not threads.waiting, 5) < 1
        running.leave()
        assert await until(lambda: threads.running == 0, 5) < 1
        await asyncio.gather(running.task, waiting.task)
        assert running.sent == waiting.sent == []  # nobody to answer

    in_loop(scenario, trace_threads=1)


def test_a_request_whose_client_goes_kills_its_helper_process_within_a_second() -> None:
    async def scenario(app: Any) -> None:
        lane = app.state.server.offload.lanes["small"]
        warm = Client(app, {**LONG, "steps": 1})  # starts the lane's helper
        await warm.task
        assert warm.sent[0]["status"] == 200
        (helper,) = lane.pool._processes.values()
        running = Client(app, LONG)
        await until(lambda: lane.running == 1, 30)
        running.leave()
        assert await until(lambda: lane.running == 0, 5) < 1
        await until(lambda: not helper.is_alive(), 5)
        await running.task
        assert running.sent == []
        again = Client(app, {**LONG, "steps": 1})  # a fresh helper answers the next program
        await again.task
        assert again.sent[0]["status"] == 200

    in_loop(scenario, offload_min_source_chars=200)  # the descent's program goes to `small`


@pytest.fixture
def server() -> Iterator[tuple[subprocess.Popen, str]]:
    process, base_url = start_server({**UNBOUNDED, "CHAINRULE_TRACE_THREADS": "1"})
    yield process, base_url
    stop_server(process)


def test_a_disconnected_client_s_request_leaves_the_trace_threads(server) -> None:
    _, base_url = server
    running = post(base_url, LONG)
    wait_for(lambda: lanes(base_url)["threads"]["running"] == 1, 30)
    waiting = post(base_url, LONG)  # the one thread is taken: this one waits
    wait_for(lambda: lanes(base_url)["threads"]["waiting"] == 1, 30)

    waiting.close()
    wait_for(lambda: lanes(base_url)["threads"]["waiting"] == 0, 10)
    assert lanes(base_url)["threads"]["running"] == 1  # the other still runs

    running.close()
    wait_for(lambda: lanes(base_url)["threads"]["running"] == 0, 10)
    # The thread is free for the next program.
    reply = httpx.post(f"{base_url}/api/graph", json={"source": "a * b"}, timeout=10)
    assert reply.status_code == 200


def whole_answer(sock: socket.socket) -> str:
    """An HTTP answer read until its body is whole (its headers and its body may come in
    separate segments) or the server closes the connection."""
    received = b""
    while True:
        chunk = sock.recv(65536)
        received += chunk
        head, _, body = received.partition(b"\r\n\r\n")
        length = next(
            (int(line.split(b":")[1]) for line in head.split(b"\r\n")
             if line.lower().startswith(b"content-length:")),
            None,
        )  # fmt: skip
        if not chunk or (length is not None and len(body) >= length):
            return received.decode()


def test_sigterm_under_work_answers_503_and_exits_within_the_grace_period(server) -> None:
    process, base_url = server
    working = post(base_url, LONG)
    wait_for(lambda: lanes(base_url)["threads"]["running"] == 1, 30)
    started = time.monotonic()
    process.send_signal(signal.SIGTERM)
    working.settimeout(GRACE_S)
    answer = whole_answer(working)
    assert answer.startswith("HTTP/1.1 503 ")
    assert '"type":"Unavailable"' in answer
    assert "the server is restarting and stopped this request; send it again in 5 s" in answer
    process.wait(timeout=GRACE_S)
    assert time.monotonic() - started < GRACE_S
    working.close()
