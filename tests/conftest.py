"""Fixtures shared by every test folder: a real uvicorn server on a free loopback port."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(env: dict[str, str] | None = None, workers: int = 1) -> tuple[subprocess.Popen, str]:
    """Start `uvicorn app.main:app` on a free port; return the process and its base URL."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "app.main:app", "--host", "127.0.0.1",
         "--port", str(port), "--workers", str(workers), "--log-level", "warning"],
        cwd=ROOT,
        env={**os.environ, **(env or {})},
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
            time.sleep(0.05)  # polling for readiness, not waiting for a result
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
    """Base URL of a real server shared by the whole session."""
    process, base_url = start_server()
    yield base_url
    stop_server(process)
