"""Fixtures shared by every test folder: a real uvicorn server on a free loopback port, and an
in-process client of a fresh app with settings to taste."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parent.parent

# Several strategies build and trace whole programs while they draw (the engine is the oracle's
# input), so how long a draw takes says how busy the machine is, not that a strategy is wrong:
# Hypothesis' "input generation is slow" check failed four tests on a loaded 2-core machine.
settings.register_profile("chainrule", suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("chainrule")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(
    env: dict[str, str] | None = None,
    workers: int = 1,
    args: tuple[str, ...] = (),
    log: Any = None,
) -> tuple[subprocess.Popen, str]:
    """Start `uvicorn app.main:app` on a free port (with more uvicorn `args`); return the
    process and its base URL. With `log` (a file), the server logs every request it receives
    there (uvicorn's access log, at level info)."""
    port = free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "uvicorn",
            "chainrule.app.main:app",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--workers",
            str(workers),
            "--log-level",
            "warning" if log is None else "info",
            *args,
        ],
        cwd=ROOT,
        # Every test of a shared server starts and joins classes from 127.0.0.1, and the fuzzer
        # tries unknown codes from there too: the per-address limits on starting classes and on
        # guessing codes are tested in tests/app/test_live_class.py, not met here (CI failed two
        # raw-socket joins when the fuzzer's guesses of that minute had used the 20 up).
        env={
            **os.environ,
            "CHAINRULE_CLASS_CREATIONS_PER_MINUTE": "1000",
            "CHAINRULE_CLASS_JOIN_GUESSES_PER_MINUTE": "100000",
            **(env or {}),
        },
        stdout=log,
        stderr=log,
    )
    base_url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with code {process.returncode}")
        try:
            if httpx.get(f"{base_url}/healthz", timeout=1).status_code == 200:
                return process, base_url
        except httpx.TransportError:
            try:  # not listening yet: wait a little, or less if the process exits meanwhile
                process.wait(timeout=0.05)
            except subprocess.TimeoutExpired:
                pass
    process.kill()
    raise RuntimeError("server did not become healthy within 30 s")


def stop_server(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()


@pytest.fixture(scope="session")
def live_server() -> Iterator[str]:
    """Base URL of a real server shared by the whole session (its `.pid`: the server's)."""
    process, base_url = start_server()
    yield ServerUrl(base_url, process.pid)
    stop_server(process)


class ServerUrl(str):
    """A server's base URL that knows the server's process id (a test reads its memory)."""

    pid: int

    def __new__(cls, url: str, pid: int) -> ServerUrl:
        made = super().__new__(cls, url)
        made.pid = pid
        return made


def strict_json(text: str | bytes) -> Any:
    """Parse JSON that must be valid everywhere: the NaN/Infinity tokens are refused."""

    def refuse(token: str) -> None:
        raise ValueError(f"non-standard JSON token {token}")

    return json.loads(text, parse_constant=refuse)


@pytest.fixture
def make_client() -> Iterator[Callable[..., Any]]:
    """`make_client(max_nodes=10)`: a TestClient of a new app with those settings changed.

    Server exceptions become responses (as in production), so a 500 fails on its status code.
    """
    from fastapi.testclient import TestClient

    from chainrule.app.main import create_app
    from chainrule.app.settings import AppSettings

    clients: list[TestClient] = []

    def make(**overrides: Any) -> TestClient:
        client = TestClient(create_app(AppSettings(**overrides)), raise_server_exceptions=False)
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.app.state.server.close()
        client.close()


@pytest.fixture
def client(make_client: Callable[..., Any]) -> Any:
    """A TestClient of a new app with default settings."""
    return make_client()


REDIS_SERVER = "/usr/bin/redis-server"


def start_redis(
    port: int | None = None, data_dir: Path | None = None
) -> tuple[subprocess.Popen, str]:
    """Debian's redis-server on a free loopback port (or `port`), keeping nothing on disk (or,
    with `data_dir`, an append-only file there, written before each reply: the deployment's
    persistence, so a restart on the same port and folder loses nothing acknowledged); its
    process and `redis://` URL once it answers PING."""
    import redis

    port = port or free_port()
    persistence = (
        ["--appendonly", "yes", "--appendfsync", "always", "--dir", str(data_dir)]
        if data_dir is not None
        else ["--appendonly", "no"]
    )
    process = subprocess.Popen(
        [REDIS_SERVER, "--port", str(port), "--bind", "127.0.0.1", "--save", "", *persistence,
         "--daemonize", "no", "--logfile", ""],
        stdout=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"redis://127.0.0.1:{port}/0"
    client = redis.Redis.from_url(url, socket_timeout=1)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"redis-server exited with code {process.returncode}")
        try:
            if client.ping():
                client.close()
                return process, url
        except redis.ConnectionError:
            try:
                process.wait(timeout=0.05)
            except subprocess.TimeoutExpired:
                pass
    process.kill()
    raise RuntimeError("redis-server did not answer within 20 s")


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    """The URL of a Redis shared by the session (`make test-deps` installs redis-server)."""
    if not Path(REDIS_SERVER).exists():
        pytest.skip(f"{REDIS_SERVER} is missing (make test-deps installs it)")
    process, url = start_redis()
    yield url
    stop_server(process)


class RestartableRedis:
    """A redis-server of a test's own, persisted as the deployment persists it (compose.yaml:
    append-only, fsync before each reply), that the test stops and starts again on its port."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.process, self.url = start_redis(data_dir=data_dir)
        self.port = int(self.url.rsplit(":", 1)[1].split("/")[0])

    def stop(self) -> None:
        """SIGTERM, as `systemctl restart` or `docker restart` sends it; its clients see the
        connections close."""
        stop_server(self.process)

    def start(self) -> None:
        self.process, _ = start_redis(port=self.port, data_dir=self.data_dir)


@pytest.fixture
def own_redis(tmp_path) -> Iterator[RestartableRedis]:
    if not Path(REDIS_SERVER).exists():
        pytest.skip(f"{REDIS_SERVER} is missing (make test-deps installs it)")
    server = RestartableRedis(tmp_path)
    yield server
    server.stop()
