"""Real servers for tests, and a strict JSON reader: a uvicorn server on a free loopback port
(`start_server`, `stop_server`), shared by the root conftest's `live_server` fixture and imported
by the tests that start servers of their own (`from servers import start_server`: a module of its
own name, never `conftest`, which names a different file in each test folder)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(
    env: dict[str, str] | None = None,
    workers: int = 1,
    args: tuple[str, ...] = (),
    log: Any = None,
    session: bool = False,
) -> tuple[subprocess.Popen, str]:
    """Start `uvicorn app.main:app` on a free port (with more uvicorn `args`); return the
    process and its base URL. With `log` (a file), the server logs every request it receives
    there (uvicorn's access log, at level info). With `session`, it leads a process group of
    its own, as `make run` in a terminal does (a test sends the group a Ctrl-C)."""
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
            # ... and opens hundreds of class sockets from there in a second (the bound on
            # sockets an address opens is tested there too).
            "CHAINRULE_CLASS_SOCKETS_PER_ADDRESS_PER_2S": "100000",
            **(env or {}),
        },
        stdout=log,
        stderr=log,
        start_new_session=session,
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
