"""No orphans: a uvicorn worker killed by SIGKILL takes its helper processes (the offload pool,
and with one worker its resource tracker) with it; none is left waiting forever."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import httpx
import pytest
from conftest import start_server, stop_server

# Over the offload threshold (CHAINRULE_OFFLOAD_MIN_SOURCE_CHARS, 1,000): traced in the helper.
BIG_PROGRAM = "c = 1\ns = c" + " + c" * 400


def stat_fields(pid: int) -> list[str] | None:
    """The fields of /proc/<pid>/stat after the command name (state first), or None if gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None


def children(pid: int) -> set[int]:
    """The processes whose parent is `pid`."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (fields := stat_fields(int(entry.name))) is not None:
            if int(fields[1]) == pid:
                found.add(int(entry.name))
    return found


def alive(pid: int) -> bool:
    fields = stat_fields(pid)
    return fields is not None and fields[0] != "Z"  # a zombie has ended; only its entry is left


def is_spawn_child(pid: int) -> bool:
    try:
        return b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def wait_until_gone(pids: set[int], timeout_s: float = 10.0) -> set[int]:
    """Poll until none of `pids` is alive or the time is up; the survivors."""
    deadline = time.monotonic() + timeout_s
    survivors = {pid for pid in pids if alive(pid)}
    while survivors and time.monotonic() < deadline:
        time.sleep(0.05)
        survivors = {pid for pid in survivors if alive(pid)}
    return survivors


def use_the_offload_helper(base_url: str) -> None:
    response = httpx.post(f"{base_url}/api/graph", json={"source": BIG_PROGRAM}, timeout=60)
    assert response.status_code == 200
    assert len(response.json()["nodes"]) == 401


@pytest.mark.parametrize("workers", [1, 2])
def test_a_sigkilled_worker_leaves_no_process_behind(workers):
    process, base_url = start_server(workers=workers)
    try:
        use_the_offload_helper(base_url)
        if workers == 1:
            worker = process.pid  # uvicorn serves from its own process
        else:  # the supervisor's spawned children are the workers; take one with a helper
            worker = next(pid for pid in children(process.pid) if children(pid))
        helpers = children(worker)
        assert any(is_spawn_child(pid) for pid in helpers), "no offload process started"
        os.kill(worker, signal.SIGKILL)
        survivors = wait_until_gone(helpers)
        assert survivors == set(), [
            Path(f"/proc/{pid}/cmdline").read_bytes() for pid in survivors if alive(pid)
        ]
        if workers == 2:  # uvicorn replaces the worker, and the replacement has its helper
            use_the_offload_helper(base_url)
    finally:
        if process.poll() is None:
            stop_server(process)
        else:
            process.wait()


def descendants(pid: int) -> set[int]:
    found = set()
    pending = [pid]
    while pending:
        for child in children(pending.pop()):
            found.add(child)
            pending.append(child)
    return found


def test_a_stopped_server_leaves_no_process_behind():
    process, base_url = start_server(workers=2)
    try:
        use_the_offload_helper(base_url)
        processes = descendants(process.pid)
        assert sum(is_spawn_child(pid) for pid in processes) >= 3  # 2 workers, 1+ helper
    finally:
        stop_server(process)
    assert wait_until_gone(processes) == set()
