"""No orphans: a uvicorn worker killed by SIGKILL takes its helper processes (the offload pool,
and with one worker its resource tracker) with it; none is left waiting forever."""

from __future__ import annotations

import os
import select
import signal
import stat
import threading
import time
from pathlib import Path

import httpx
import pytest
from servers import start_server, stop_server

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
    """Wait until none of `pids` is alive or the time is up; the survivors. A pidfd becomes
    readable when its process ends, so this waits on the processes themselves."""
    deadline = time.monotonic() + timeout_s
    for pid in pids:
        try:
            fd = os.pidfd_open(pid)
        except ProcessLookupError:
            continue
        try:
            select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        finally:
            os.close(fd)
    return {pid for pid in pids if alive(pid)}


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


@pytest.mark.parametrize(("workers", "used"), [(1, False), (2, True)])
def test_ctrl_c_stops_the_server_quietly_and_whole(workers, used, tmp_path):
    """Ctrl-C in the terminal of `make run` reaches its whole process group: uvicorn, its
    workers, their offload helpers. The server says it stopped and nothing more: an idle helper
    died on the KeyboardInterrupt with a 20-line traceback each, and one still starting (just
    after the server answers: the pools warm up then; not `used`) the same way; with two
    workers the resource tracker warned of 20 leaked semaphores (the pools' queues, never
    closed: a worker ends on the SIGTERM uvicorn raises again after its shutdown). No process
    is left."""
    log_path = tmp_path / "server.log"
    with log_path.open("w") as log:
        process, base_url = start_server(workers=workers, log=log, session=True)
        try:
            if used:
                use_the_offload_helper(base_url)
            processes = descendants(process.pid)
            assert sum(is_spawn_child(pid) for pid in processes) >= workers  # helpers (+ workers)
            os.killpg(process.pid, signal.SIGINT)
            assert process.wait(timeout=30) == 0
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
    said = log_path.read_text()
    assert said.count("Finished server process") == workers, said
    assert "Traceback" not in said and "KeyboardInterrupt" not in said, said
    assert "leaked" not in said, said
    assert wait_until_gone(processes) == set()


FAKE_DOT = """#!/bin/sh
# A Graphviz that answers -V, then takes forever: it says its pid through the FIFO first.
if [ "$1" = "-V" ]; then echo "dot - graphviz version 2.43.0 (a test's stand-in)" >&2; exit 0; fi
echo $$ > "$0.pid"
exec sleep 600
"""


def test_a_sigkilled_worker_takes_its_running_dot_with_it(tmp_path):
    """dot runs with a timeout that only the worker enforces: a worker killed by SIGKILL must
    not leave a dot drawing a big graph for minutes (the kernel kills it: PR_SET_PDEATHSIG)."""
    dot = tmp_path / "dot"
    dot.write_text(FAKE_DOT)
    dot.chmod(dot.stat().st_mode | stat.S_IXUSR)
    os.mkfifo(f"{dot}.pid")
    env = {"CHAINRULE_DOT_BINARY": str(dot), "CHAINRULE_DOT_TIMEOUT_S": "600"}
    process, base_url = start_server(env=env)
    try:

        def ask_for_a_layout() -> None:
            try:
                httpx.post(f"{base_url}/api/graph", json={"source": "a * b"}, timeout=60)
            except httpx.TransportError:
                pass  # expected: the worker dies with the request open

        request = threading.Thread(target=ask_for_a_layout, daemon=True)
        request.start()
        with open(f"{dot}.pid") as fifo:  # opens once the stand-in writes: dot is running
            dot_pid = int(fifo.read())
        assert alive(dot_pid) and dot_pid in children(process.pid)
        os.kill(process.pid, signal.SIGKILL)
        assert wait_until_gone({dot_pid}) == set()
    finally:
        if process.poll() is None:
            stop_server(process)
        else:
            process.wait()
