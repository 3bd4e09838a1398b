"""One request cannot take the server down or starve it: the biggest program allowed is traced
while /healthz keeps answering, and a Graphviz that hangs is killed at the timeout."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import httpx
from servers import start_server, stop_server

HANGING_DOT = """#!/bin/sh
# A Graphviz that answers `dot -V` and then hangs on every layout.
if [ "$1" = "-V" ]; then echo "dot - graphviz version 2.43.0 (hanging stand-in)" >&2; exit 0; fi
echo $$ >> "$(dirname "$0")/pids"
exec sleep 60
"""


BIG_REQUEST = """
import os, sys, httpx
# 20,000 nodes, the largest graph allowed; a value of its own, so that no cache answers it
source = f"c = {os.getpid()}\\ns = c" + " + c" * 19_999
response = httpx.post(sys.argv[1] + "/api/graph", json={"source": source}, timeout=120)
print(response.status_code, len(response.json()["nodes"]) if response.status_code == 200 else 0)
"""


def test_healthz_answers_while_a_20000_node_program_is_traced(live_server):
    """A trace on the event loop, or in this worker's thread holding the GIL, would hold every
    probe until it ended; in a helper process it does not. /healthz's detail says when its
    answer was made while the trace ran. (How fast it answers under load: bench/load.py.)"""
    during_trace = 0
    with httpx.Client(base_url=live_server, timeout=30) as client:
        client.get("/healthz")  # open the connection first
        # The big request comes from another process, so that reading its 21 MB answer does
        # not compete with this probe for this process's GIL.
        big = subprocess.Popen(
            [sys.executable, "-c", BIG_REQUEST, live_server], stdout=subprocess.PIPE, text=True
        )
        while big.poll() is None:
            health = client.get("/healthz")
            assert health.status_code == 200
            lanes = health.json()["detail"]["offload"]
            during_trace += lanes["big"]["running"]  # the 20,000-node program's lane
            try:  # pace the probe as a load balancer would, ending as soon as the request does
                big.wait(timeout=0.01)
            except subprocess.TimeoutExpired:
                pass
        assert client.get("/healthz").status_code == 200  # the worker is still there

    assert big.stdout.read().split() == ["200", "20000"]
    assert during_trace >= 3, "/healthz never answered while the big program was traced"


def children(pid: int) -> dict[int, bytes]:
    """Child processes of `pid` and their command lines, from /proc."""
    found = {}
    for entry in Path("/proc").iterdir():
        try:
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            if parent == pid:
                found[int(entry.name)] = (entry / "cmdline").read_bytes()
        except (OSError, ValueError, IndexError):
            continue
    return found


def test_big_programs_still_work_after_the_offload_process_is_killed():
    process, base_url = start_server(env={"CHAINRULE_OFFLOAD_MIN_SOURCE_CHARS": "100"})
    big = "a = 1\ns = a" + " + a" * 100
    try:
        with httpx.Client(base_url=base_url, timeout=60) as client:
            assert client.post("/api/graph", json={"source": big}).status_code == 200
            helpers = [pid for pid, cmd in children(process.pid).items() if b"spawn_main" in cmd]
            assert len(helpers) == 2  # the small and the big lane's (app/http/offload.py)
            for pid in helpers:
                os.kill(pid, signal.SIGKILL)  # as the kernel's OOM killer would
            statuses = [
                client.post("/api/graph", json={"source": big + " + a" * n}).status_code
                for n in range(1, 4)
            ]
    finally:
        stop_server(process)
    assert statuses == [200, 200, 200]


def test_a_hanging_dot_is_killed_at_the_timeout_and_the_fallback_layout_answers(tmp_path: Path):
    dot = tmp_path / "dot"
    dot.write_text(HANGING_DOT)
    dot.chmod(dot.stat().st_mode | stat.S_IXUSR)
    # 2 s, not less: on a loaded machine the shell may not have written its pid yet when a
    # shorter timeout kills it (the answer was then the fallback, but `pids` was missing).
    env = {"CHAINRULE_DOT_BINARY": str(dot), "CHAINRULE_DOT_TIMEOUT_S": "2"}
    process, base_url = start_server(env=env)
    try:
        health = httpx.get(f"{base_url}/healthz", timeout=5).json()
        # The stand-in sleeps 60 s: an answer within this client's 30 s means dot was killed,
        # not waited out (bench/load.py's scenario (d) measures how long the answer takes).
        response = httpx.post(
            f"{base_url}/api/graph",
            json={"source": "a = 2; b = -3; c = 10; (a + b) * c"},
            timeout=30,
        )
    finally:
        stop_server(process)
    assert health["graphviz"] is True  # the stand-in was taken for Graphviz
    assert response.status_code == 200
    assert response.json()["layout"]["engine"] == "sugiyama"
    started = (tmp_path / "pids").read_text().split()
    # The grouped layout's two runs (app/layout/groups.py: the insides and the collapsed graph,
    # and beside them the expanded graph when a second slot is free): each one was killed.
    assert 1 <= len(started) <= 2
    assert not any(Path(f"/proc/{pid}").exists() for pid in started), "dot was left running"
    assert os.environ.get("CHAINRULE_DOT_BINARY") is None  # nothing leaked into this process
