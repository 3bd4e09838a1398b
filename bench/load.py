"""Load and fault bench: real uvicorn servers on loopback, bounded in time; prints a markdown table.

    .venv/bin/python bench/load.py                 # about 4.5 minutes
    .venv/bin/python bench/load.py --duration 10   # a quick look

(a) mixed preset traffic from 50 concurrent clients against `--workers 2`;
(b) the same while one client sends the worst hostile programs every second, with `/healthz`
    probed every 50 ms on its own connection;
(c) the same mixed traffic while both original workers are killed in turn (SIGKILL, by pid, at
    1/4 and 1/2 of the run): failures after each kill, how long until uvicorn starts a
    replacement and until it is ready, that the killed worker's helper processes die with it,
    and the requests served in the second half, when only replacements are left;
(d) a dot that hangs (CHAINRULE_DOT_BINARY points at a script that sleeps): the request gets the
    fallback layout, and how long it took;
(e) hostile layouts (issue 21): 16 clients posting `c*c*…*c` (about 200 factors, a new name,
    length and value every time, so no cache helps) beside 4 preset clients and the /healthz
    probe; /healthz and preset p50/p99 beside the same without the hostile clients, and the
    peak RSS of every Graphviz process the server started;
(f) hostile exports: 4 clients exporting the 2,000-factor `k*k*…*k` as PDF and least squares
    over 100 points as PNG (issue 21: 4.2 GB of dot each), beside the same probes;
(g) the costliest bounded mix (issue 36): 16 clients sending, in turn, a landscape and a descent
    at their work bounds, 3 paths through 16,000 × `y=y*y`, a 12,000-node graph, the 200-factor
    `k*k*…*k` as PDF and the composed functions `f1` … `f12`, beside the same probes; when the
    time is up the clients hang up mid-request (their work must end with them): how long until
    every lane of both workers is empty, and the server's memory (its processes' RSS summed)
    at the start and 10 s after the load.
Everything targets 127.0.0.1 and stops by itself; the load generator shares the machine's cores
with the server, so req/s is a floor for what the server alone can do.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import multiprocessing
import os
import random
import signal
import stat
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "app")]
# The one way we start a server, and the stand-in for a Graphviz that hangs.
from servers import start_server, stop_server  # noqa: E402
from test_resource_limits import HANGING_DOT  # noqa: E402

CLIENTS = 50
HEALTH_PROBE_EVERY_S = 0.05


def hostile_bodies(round_: int) -> list[tuple[str, dict | bytes]]:
    """The worst requests we know of, each answered with a 200, 400 or 413. The big ones get new
    values every round, so that no response cache spares the server the trace."""
    sum_20k = "a = 1\ns = a" + " + a" * 19_999  # exactly the node limit: the fallback layout
    fresh = {"a": 1 + round_ / 1000}
    return [
        ("20,000-node sum", {"source": sum_20k, "values": fresh}),
        ("20,001 nodes", {"source": sum_20k + " + a"}),
        ("9**9**9", {"source": "9**9**9"}),
        ("2**4000000", {"source": "2**4000000"}),
        ("10,000 nested parens", {"source": "(" * 10_000 + "a" + ")" * 10_000}),
        ("10,000 unary minus", {"source": "-" * 10_000 + "a", "values": fresh}),
        ("** chain of 5,000", {"source": "a" + "**a" * 5_000, "values": fresh}),
        ("source limit + 1", {"source": "a" * 100_001}),
        ("5,000-digit literal", {"source": "1" * 5_000}),
        ("1 MiB body", b'{"source": "' + b"a" * (1 << 20) + b'"}'),
        ("__import__", {"source": "__import__('os').system('true')"}),
    ]


@dataclass
class Record:
    """Latencies (s) and outcomes of one client population."""

    latencies: list[float] = field(default_factory=list)
    statuses: dict[str, int] = field(default_factory=dict)
    by_name: dict[str, set[str]] = field(default_factory=dict)  # hostile request → outcomes

    def add(self, outcome: str, latency: float) -> None:
        self.statuses[outcome] = self.statuses.get(outcome, 0) + 1
        self.latencies.append(latency)

    @property
    def count(self) -> int:
        return len(self.latencies)

    def failures(self, ok: tuple[str, ...] = ("200",)) -> int:
        return sum(n for outcome, n in self.statuses.items() if outcome not in ok)

    def percentile(self, q: float) -> float:
        if not self.latencies:
            return float("nan")
        if len(self.latencies) == 1:
            return self.latencies[0]
        return statistics.quantiles(self.latencies, n=1000, method="inclusive")[int(q * 10) - 1]


async def preset_clients(
    base_url: str, duration_s: float, record: Record, clients: int = CLIENTS
) -> None:
    """`clients` concurrent clients, each posting the presets round-robin until the time is up."""
    async with httpx.AsyncClient(base_url=base_url, timeout=30) as client:
        presets = (await client.get("/api/presets")).json()
    bodies = [{"source": p["source"], "values": p.get("values") or {}} for p in presets]
    jitter = random.Random(7)
    deadline = time.monotonic() + duration_s
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)

    async def one_client(client: httpx.AsyncClient, offset: int) -> None:
        i = offset
        while time.monotonic() < deadline:
            body = bodies[i % len(bodies)]
            i += 1
            if i % 2:  # a slider drag: new values, so a fresh trace (the layout is cached)
                values = {name: v + jitter.uniform(-1, 1) for name, v in body["values"].items()}
                body = {**body, "values": values}
            start = time.perf_counter()
            try:
                response = await client.post("/api/graph", json=body)
                outcome = str(response.status_code)
            except httpx.HTTPError as exc:
                outcome = type(exc).__name__
            record.add(outcome, time.perf_counter() - start)

    async with httpx.AsyncClient(base_url=base_url, timeout=30, limits=limits) as client:
        await asyncio.gather(*(one_client(client, n) for n in range(clients)))


def probe_health(base_url: str, duration_s: float) -> list[tuple[str, float]]:
    """GET /healthz every 50 ms on a connection of its own, as a load balancer would. Runs in a
    process of its own, so the load generator's busy event loop does not delay the probe."""
    results = []
    deadline = time.monotonic() + duration_s
    with httpx.Client(base_url=base_url, timeout=10) as client:
        while time.monotonic() < deadline:
            start = time.perf_counter()
            try:
                outcome = str(client.get("/healthz").status_code)
            except httpx.HTTPError as exc:
                outcome = type(exc).__name__
            elapsed = time.perf_counter() - start
            results.append((outcome, elapsed))
            time.sleep(max(0.0, HEALTH_PROBE_EVERY_S - elapsed))
    return results


async def health_prober(base_url: str, duration_s: float, record: Record) -> None:
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        loop = asyncio.get_running_loop()
        for outcome, latency in await loop.run_in_executor(
            pool, probe_health, base_url, duration_s
        ):
            record.add(outcome, latency)


async def hostile_client(base_url: str, duration_s: float, record: Record) -> None:
    """Send the next worst request every second, without waiting for the previous ones (at most
    three outstanding, so a slow one cannot pile up more than a classroom's worth)."""
    deadline = time.monotonic() + duration_s
    outstanding = asyncio.Semaphore(3)

    async def send(client: httpx.AsyncClient, name: str, body: dict | bytes) -> None:
        async with outstanding:
            start = time.perf_counter()
            try:
                if isinstance(body, bytes):
                    headers = {"content-type": "application/json"}
                    response = await client.post("/api/graph", content=body, headers=headers)
                else:
                    response = await client.post("/api/graph", json=body)
                outcome = str(response.status_code)
            except httpx.HTTPError as exc:
                outcome = type(exc).__name__
            record.add(outcome, time.perf_counter() - start)
            record.by_name.setdefault(name, set()).add(outcome)

    async with httpx.AsyncClient(base_url=base_url, timeout=60) as client:
        tasks = []
        i = 0
        while time.monotonic() < deadline:
            bodies = hostile_bodies(i)
            tasks.append(asyncio.create_task(send(client, *bodies[i % len(bodies)])))
            i += 1
            await asyncio.sleep(1.0)
        await asyncio.gather(*tasks)


def child_pids(parent_pid: int, spawned_only: bool = False) -> set[int]:
    """The live children of a process (from /proc; a zombie has an empty command line), or only
    those started by multiprocessing spawn."""
    pids = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat_fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if int(stat_fields[1]) == parent_pid and cmdline:
            if b"spawn_main" in cmdline or not spawned_only:
                pids.add(int(entry.name))
    return pids


def worker_pids(supervisor_pid: int) -> set[int]:
    """uvicorn's worker processes: the supervisor's children started by multiprocessing spawn."""
    return child_pids(supervisor_pid, spawned_only=True)


def process_alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


async def wait_until_gone(pids: set[int], timeout_s: float) -> set[int]:
    """Poll until none of `pids` is alive or the time is up; the survivors."""
    deadline = time.monotonic() + timeout_s
    while (
        survivors := {pid for pid in pids if process_alive(pid)}
    ) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    return survivors


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process, from /proc/<pid>/stat."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def kill_workers_in_turn(
    supervisor_pid: int, duration_s: float, kills: list[dict[str, float]]
) -> None:
    """At 1/4 of the run SIGKILL the busiest worker; at 1/2 the other original one, so that for
    the second half only replacements can serve. Each kill records when it happened, how long
    until uvicorn (which checks its workers every 0.5 s) had started the replacement process and
    until that was ready (its startup starts its offload helper, just before it serves), how
    many of the killed worker's helpers were alive 5 s later, and how many originals were left."""
    started = time.monotonic()
    originals = worker_pids(supervisor_pid)
    for fraction in (1 / 4, 1 / 2):
        await asyncio.sleep(max(0.0, fraction * duration_s - (time.monotonic() - started)))
        alive = worker_pids(supervisor_pid)
        victim = max(alive & originals, key=cpu_seconds)  # the busiest original worker
        helpers = child_pids(victim)
        os.kill(victim, signal.SIGKILL)
        kill = {"at": time.monotonic(), "restart_s": float("nan"), "ready_s": float("nan")}
        kills.append(kill)
        replacement = None
        while time.monotonic() < kill["at"] + 30:
            if replacement is None and (new := worker_pids(supervisor_pid) - alive):
                replacement = new.pop()
                kill["restart_s"] = time.monotonic() - kill["at"]
            if replacement is not None and child_pids(replacement, spawned_only=True):
                kill["ready_s"] = time.monotonic() - kill["at"]
                break
            await asyncio.sleep(0.05)
        kill["helpers_left"] = len(await wait_until_gone(helpers, 5.0))
        kill["originals_left"] = len(worker_pids(supervisor_pid) & originals)


async def timed_preset_clients(
    base_url: str, duration_s: float, record: Record, timeline: list[tuple[float, str]]
) -> None:
    """Like preset_clients, but also keeps (start time, outcome) of every request."""

    class TimelineRecord(Record):
        def add(self, outcome: str, latency: float) -> None:
            super().add(outcome, latency)
            timeline.append((time.monotonic() - latency, outcome))

    inner = TimelineRecord()
    await preset_clients(base_url, duration_s, inner)
    record.latencies, record.statuses = inner.latencies, inner.statuses


def row(name: str, record: Record, duration_s: float, ok: tuple[str, ...] = ("200",)) -> str:
    ms = 1000
    return (
        f"| {name} | {record.count} | {record.failures(ok)} | {record.count / duration_s:.0f} | "
        f"{record.percentile(50) * ms:.0f} | {record.percentile(95) * ms:.0f} | "
        f"{record.percentile(99) * ms:.0f} | {max(record.latencies, default=0) * ms:.0f} |"
    )


def scenario_a(duration_s: float) -> list[str]:
    process, base_url = start_server(workers=2)
    try:
        record = Record()
        asyncio.run(preset_clients(base_url, duration_s, record))
    finally:
        stop_server(process)
    return [row(f"(a) presets, {CLIENTS} clients, {duration_s:.0f} s", record, duration_s)]


def scenario_b(duration_s: float) -> list[str]:
    process, base_url = start_server(workers=2)
    presets, health, hostile = Record(), Record(), Record()

    async def run() -> None:
        await asyncio.gather(
            preset_clients(base_url, duration_s, presets),
            health_prober(base_url, duration_s, health),
            hostile_client(base_url, duration_s, hostile),
        )

    try:
        asyncio.run(run())
    finally:
        stop_server(process)
    hostile_ok = ("200", "400", "413")
    server_errors = sum(
        n for r in (presets, hostile) for s, n in r.statuses.items() if s.startswith("5")
    )
    return [
        row(f"(b) presets + hostile, {duration_s:.0f} s", presets, duration_s),
        row("(b) hostile client, 1/s", hostile, duration_s, hostile_ok)
        + " "
        + "; ".join(f"{name}: {'/'.join(sorted(o))}" for name, o in hostile.by_name.items()),
        row("(b) /healthz every 50 ms", health, duration_s)
        + f" p99 {'≤' if health.percentile(99) <= 0.1 else '>'} 100 ms; 5xx: {server_errors}",
    ]


def scenario_c(duration_s: float) -> list[str]:
    process, base_url = start_server(workers=2)
    record, timeline, kills = Record(), [], []

    async def run() -> None:
        await asyncio.gather(
            timed_preset_clients(base_url, duration_s, record, timeline),
            kill_workers_in_turn(process.pid, duration_s, kills),
        )

    try:
        asyncio.run(run())
        workers_at_end = len(worker_pids(process.pid))
        processes = child_pids(process.pid) | {
            pid for worker in worker_pids(process.pid) for pid in child_pids(worker)
        }
    finally:
        stop_server(process)
    left_after_stop = len(asyncio.run(wait_until_gone(processes, 10.0)))
    notes = []
    for n, kill in enumerate(kills, 1):
        window = [o for t, o in timeline if kill["at"] <= t < kill["at"] + 5]
        notes.append(
            f"kill {n}: {sum(o != '200' for o in window)} failed of {len(window)} started in the "
            f"next 5 s, replacement started in {kill['restart_s']:.1f} s and ready in "
            f"{kill['ready_s']:.1f} s, helpers of the killed worker left {kill['helpers_left']}"
        )
    if timeline and len(kills) == 2:
        # Requests started after the second kill can only be served by replacements.
        first, last = min(t for t, _ in timeline), max(t for t, _ in timeline)
        before = sum(o == "200" for t, o in timeline if t < kills[0]["at"])
        after = [o for t, o in timeline if t >= kills[1]["at"]]
        served, seconds = sum(o == "200" for o in after), max(last - kills[1]["at"], 1e-9)
        notes.append(
            f"replacements only ({kills[1]['originals_left']} originals left): {served} of "
            f"{len(after)} served in {seconds:.0f} s, {served / seconds:.0f}/s "
            f"({before / (kills[0]['at'] - first):.0f}/s before any kill)"
        )
    notes.append(
        f"workers at the end: {workers_at_end}; processes left after stop: {left_after_stop}"
    )
    return [
        row(f"(c) presets, both workers SIGKILLed in turn, {duration_s:.0f} s", record, duration_s)
        + " "
        + "; ".join(notes)
    ]


def scenario_d(timeout_s: float = 0.5) -> list[str]:
    with tempfile.TemporaryDirectory() as tmp:
        dot = Path(tmp) / "dot"
        dot.write_text(HANGING_DOT)
        dot.chmod(dot.stat().st_mode | stat.S_IXUSR)
        env = {"CHAINRULE_DOT_BINARY": str(dot), "CHAINRULE_DOT_TIMEOUT_S": str(timeout_s)}
        process, base_url = start_server(env=env, workers=1)
        try:
            start = time.perf_counter()
            response = httpx.post(
                f"{base_url}/api/graph",
                json={"source": "a = 2; b = -3; c = 10; (a + b) * c"},
                timeout=30,
            )
            elapsed = time.perf_counter() - start
            engine = response.json().get("layout", {}).get("engine")
            pids_file = Path(tmp) / "pids"
            started = pids_file.read_text().split() if pids_file.exists() else []
            sleepers = [pid for pid in started if Path(f"/proc/{pid}").exists()]
        finally:
            stop_server(process)
    return [
        f"| (d) hanging dot, timeout {timeout_s} s | 1 | {int(response.status_code != 200)} | – | "
        f"{elapsed * 1000:.0f} | – | – | – | layout `{engine}`; dot started {len(started)}, "
        f"still running {len(sleepers)} |"
    ]


HOSTILE_CLIENTS = 16
QUIET_PRESET_CLIENTS = 4


def hostile_product(n: int) -> dict:
    """`c*c*…*c` of about 200 factors (399 characters; issue 21: 2 s of dot per request), with
    a new name, length and value each time: neither the response cache nor the layout cache
    (keyed by structure) can spare the server anything."""
    name, factors = f"c{n}", 192 + n % 17
    return {"source": f"{name} = {1 + n / 1e6}\n" + "*".join([name] * factors)}


def hostile_exports(n: int) -> tuple[str, dict]:
    """The exports that drove dot to 4.2 GB (issue 21), alternately."""
    if n % 2:
        return "pdf", {"source": "k = 1.0001\n" + "*".join(["k"] * 2000)}
    terms = [f"(w*{i / 100:.2f} + b - {(-1) ** i * 0.5:.1f})**2" for i in range(100)]
    return "png", {"source": "w = 0.5\nb = 0.1\nL = " + " + ".join(terms), "values": {"w": n}}


async def hostile_loop(
    base_url: str, duration_s: float, record: Record, clients: int, send: Callable
) -> None:
    """`clients` clients, each sending `send(client, n)` back to back until the time is up."""
    deadline = time.monotonic() + duration_s
    counter = iter(range(10**9))
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)

    async def one_client(client: httpx.AsyncClient) -> None:
        while time.monotonic() < deadline:
            start = time.perf_counter()
            try:
                outcome = str((await send(client, next(counter))).status_code)
            except httpx.HTTPError as exc:
                outcome = type(exc).__name__
            record.add(outcome, time.perf_counter() - start)

    async with httpx.AsyncClient(base_url=base_url, timeout=60, limits=limits) as client:
        await asyncio.gather(*(one_client(client) for _ in range(clients)))


def descendants(pid: int) -> set[int]:
    """Every live process below `pid` (workers, their helpers, their Graphviz)."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            parents.setdefault(parent, []).append(int(entry.name))
    found, stack = set(), [pid]
    while stack:
        for child in parents.get(stack.pop(), ()):
            found.add(child)
            stack.append(child)
    return found


def watch_graphviz(server_pid: int, stop: threading.Event, peaks: dict[int, int]) -> None:
    """Every 20 ms, the peak RSS (VmHWM, KiB) so far of every Graphviz process below the
    server, by pid: its last reading before it exits is within 20 ms of its true peak."""
    while not stop.is_set():
        for pid in descendants(server_pid):
            try:
                if Path(f"/proc/{pid}/comm").read_text().strip() not in ("dot", "neato"):
                    continue
                status = Path(f"/proc/{pid}/status").read_text()
            except OSError:
                continue
            for line in status.splitlines():
                if line.startswith("VmHWM:"):
                    peaks[pid] = max(peaks.get(pid, 0), int(line.split()[1]))
        stop.wait(0.02)


def rss_note(peaks: dict[int, int]) -> str:
    if not peaks:
        return "Graphviz processes: none started"
    mb = sorted(kb / 1024 for kb in peaks.values())
    return (
        f"Graphviz processes: {len(mb)}, peak RSS median {statistics.median(mb):.0f} MB, "
        f"max {mb[-1]:.0f} MB"
    )


def warm_up(base_url: str) -> None:
    """Lay every preset out in both workers (until it answers from a layout cache four times in
    a row, each on a new connection, which either worker may accept), so that the table
    measures the steady state, not the first dot of each preset."""
    fresh = httpx.Limits(max_keepalive_connections=0)
    with httpx.Client(base_url=base_url, timeout=60, limits=fresh) as client:
        for preset in client.get("/api/presets").json():
            in_a_row = 0
            for n in range(40):
                values = {name: v + n / 1000 for name, v in (preset.get("values") or {}).items()}
                body = {"source": preset["source"], "values": values}
                cached = client.post("/api/graph", json=body).json()["layout"]["cached"]
                in_a_row = in_a_row + 1 if cached else 0
                if in_a_row == 4:
                    break


def with_probes(duration_s: float, hostile=None) -> tuple[Record, Record, Record, dict[int, int]]:
    """QUIET_PRESET_CLIENTS preset clients and the /healthz probe on a fresh 2-worker server,
    beside `hostile(base_url, duration_s, record)` if given; the Graphviz peaks seen."""
    process, base_url = start_server(workers=2)
    warm_up(base_url)
    presets, health, hostile_record, peaks = Record(), Record(), Record(), {}
    stop = threading.Event()
    watcher = threading.Thread(target=watch_graphviz, args=(process.pid, stop, peaks))
    watcher.start()

    async def run() -> None:
        jobs = [
            preset_clients(base_url, duration_s, presets, QUIET_PRESET_CLIENTS),
            health_prober(base_url, duration_s, health),
        ]
        if hostile is not None:
            jobs.append(hostile(base_url, duration_s, hostile_record))
        await asyncio.gather(*jobs)

    try:
        asyncio.run(run())
    finally:
        stop.set()
        watcher.join()
        stop_server(process)
    return presets, health, hostile_record, peaks


def target_note(health: Record, presets: Record) -> str:
    p99_health, p99_presets = health.percentile(99) * 1000, presets.percentile(99) * 1000
    return (
        f"/healthz p99 {p99_health:.0f} ms ({'≤' if p99_health <= 100 else '>'} 100); "
        f"presets p99 {p99_presets:.0f} ms ({'≤' if p99_presets <= 300 else '>'} 300)"
    )


def scenario_e(duration_s: float) -> list[str]:
    async def hostile(base_url: str, seconds: float, record: Record) -> None:
        async def send(client: httpx.AsyncClient, n: int) -> httpx.Response:
            return await client.post("/api/graph", json=hostile_product(n))

        await hostile_loop(base_url, seconds, record, HOSTILE_CLIENTS, send)

    quiet_presets, quiet_health, _, quiet_peaks = with_probes(duration_s)
    presets, health, attack, peaks = with_probes(duration_s, hostile)
    n = QUIET_PRESET_CLIENTS
    return [
        row(f"(e) quiet: presets, {n} clients, {duration_s:.0f} s", quiet_presets, duration_s),
        row("(e) quiet: /healthz every 50 ms", quiet_health, duration_s)
        + f" {rss_note(quiet_peaks)}",
        row(f"(e) + {HOSTILE_CLIENTS} clients of `c*c*…*c`: presets", presets, duration_s),
        row("(e) + hostile: /healthz every 50 ms", health, duration_s)
        + f" {target_note(health, presets)}",
        row(f"(e) hostile `c*c*…*c`, {HOSTILE_CLIENTS} clients", attack, duration_s, ("200",))
        + f" {rss_note(peaks)}",
    ]


def scenario_f(duration_s: float, clients: int = 4) -> list[str]:
    async def hostile(base_url: str, seconds: float, record: Record) -> None:
        async def send(client: httpx.AsyncClient, n: int) -> httpx.Response:
            fmt, body = hostile_exports(n)
            return await client.post(f"/api/export?format={fmt}", json=body)

        await hostile_loop(base_url, seconds, record, clients, send)

    presets, health, attack, peaks = with_probes(duration_s, hostile)
    return [
        row(f"(f) + {clients} clients exporting: presets", presets, duration_s),
        row("(f) + hostile exports: /healthz every 50 ms", health, duration_s)
        + f" {target_note(health, presets)}",
        row(f"(f) hostile exports (k^2000 PDF, lsq100 PNG), {clients} clients", attack, duration_s)
        + f" outcomes {dict(sorted(attack.statuses.items()))}; {rss_note(peaks)}",
    ]


def costly_bodies(n: int) -> list[tuple[str, dict]]:
    """The costliest requests the bounds let through (docs/api.md, "Limits"), `n` varying the
    values so that no cache answers."""
    x = 1 + n / 1000
    leaves = 6000  # a 11,999-node sum: 16 steps of descent fit 200,000 node-steps
    big_sum = (
        "".join(f"a{i} = {i % 7}\n" for i in range(leaves))
        + "L = "
        + "+".join(f"a{i}" for i in range(leaves))
    )
    products = 2777  # an 11,107-node sum of products: 6 × 6 points fit 400,000 node-points
    landscape_source = "L = " + " + ".join(f"a{i}*b{i}" for i in range(products))
    composed = "\n".join(
        ["f1(x) = x*0.5+0.25", *(f"f{k}(x) = f{k - 1}(f{k - 1}(x))" for k in range(2, 13))]
    )
    return [
        ("/api/landscape", {"source": landscape_source, "parameters": ["a0", "b0"],
                            "x_range": [-x, x], "y_range": [-x, x], "points": 6}),
        ("/api/descend", {"source": big_sum, "parameters": ["a0"], "lr": 1e-3 * x, "steps": 16}),
        ("/api/paths", {"source": "y=0.5\n" + "y=y*y\n" * 16_000, "values": {"y": x / 2},
                        "leaf": "y", "limit": 3}),
        ("/api/graph", {"source": big_sum, "values": {"a0": x}}),
        ("/api/export?format=pdf", {"source": "k = 1\nL = " + "*".join(["k"] * 200),
                                    "values": {"k": x}}),
        ("/api/graph", {"source": f"{composed}\na = 0.1\nb = 0.2\nL = f12(a) + f12(b)",
                        "values": {"a": x / 10}}),
    ]  # fmt: skip


def tree_rss_mb(pid: int) -> float:
    """The resident memory of `pid` and every process below it, in MB."""
    total = 0
    for each in {pid} | descendants(pid):
        try:
            with open(f"/proc/{each}/status") as status:
                line = next(line for line in status if line.startswith("VmRSS:"))
            total += int(line.split()[1])
        except (OSError, StopIteration):
            pass
    return total / 1024


def lanes_empty_for(base_url: str, answers: int = 8, within_s: float = 30.0) -> float:
    """Seconds until `answers` /healthz in a row (new connections: either worker answers) say
    every lane of the worker that answered is empty; NaN if not within `within_s`."""
    started = time.monotonic()
    in_a_row = 0
    fresh = httpx.Limits(max_keepalive_connections=0)
    with httpx.Client(base_url=base_url, timeout=10, limits=fresh) as client:
        while time.monotonic() - started < within_s:
            offload = client.get("/healthz").json()["detail"]["offload"]
            empty = all(lane["waiting"] == 0 and lane["running"] == 0 for lane in offload.values())
            in_a_row = in_a_row + 1 if empty else 0
            if in_a_row == answers:
                return time.monotonic() - started
    return float("nan")


def scenario_g(duration_s: float, clients: int = HOSTILE_CLIENTS) -> list[str]:
    process, base_url = start_server(workers=2)
    warm_up(base_url)
    start_mb = tree_rss_mb(process.pid)
    presets, health, costly = Record(), Record(), Record()

    async def mix(seconds: float) -> None:
        async def send(client: httpx.AsyncClient, n: int) -> httpx.Response:
            path, body = costly_bodies(n)[n % 6]
            return await client.post(path, json=body)

        # The clients hang up mid-request when the time is up: their work must end with them.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(hostile_loop(base_url, 3600, costly, clients, send), seconds)

    async def run() -> None:
        await asyncio.gather(
            preset_clients(base_url, duration_s, presets, QUIET_PRESET_CLIENTS),
            health_prober(base_url, duration_s, health),
            mix(duration_s),
        )

    try:
        asyncio.run(run())
        ended = time.monotonic()
        empty_s = lanes_empty_for(base_url)
        time.sleep(max(0.0, ended + 10 - time.monotonic()))
        after_mb = tree_rss_mb(process.pid)
    finally:
        stop_server(process)
    memory = (
        f"server RSS {start_mb:.0f} MB at the start, {after_mb:.0f} MB 10 s after the load "
        f"({'≤' if after_mb <= 1.2 * start_mb else '>'} 120%)"
    )
    return [
        row(f"(g) + {clients} clients of the costliest mix: presets", presets, duration_s),
        row("(g) + costliest mix: /healthz every 50 ms", health, duration_s)
        + f" {target_note(health, presets)}",
        row(f"(g) costliest bounded mix, {clients} clients", costly, duration_s, ("200",))
        + f" outcomes {dict(sorted(costly.statuses.items()))}; every lane empty "
        f"{empty_s:.1f} s after the clients hung up ({'≤' if empty_s <= 5 else '>'} 5); {memory}",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--duration",
        type=float,
        default=60.0,
        help="seconds of scenarios (a) and (g); (b), (c), (e) and (f) half as long (default 60)",
    )
    parser.add_argument(
        "--scenarios", default="abcdefg", help="which scenarios to run, e.g. 'c' (default abcdefg)"
    )
    args = parser.parse_args()
    lines = [
        f"Load bench: uvicorn --workers 2 on 127.0.0.1, {os.cpu_count()} cores shared with the "
        "load generator.",
        "",
        "| scenario | requests | failures | req/s | p50 ms | p95 ms | p99 ms | max ms |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    started = time.monotonic()
    if "a" in args.scenarios:
        lines += scenario_a(args.duration)
    if "b" in args.scenarios:
        lines += scenario_b(args.duration / 2)
    if "c" in args.scenarios:
        lines += scenario_c(args.duration / 2)
    if "d" in args.scenarios:
        lines += scenario_d()
    if "e" in args.scenarios:
        lines += scenario_e(args.duration / 2)
    if "f" in args.scenarios:
        lines += scenario_f(args.duration / 2)
    if "g" in args.scenarios:
        lines += scenario_g(args.duration)
    lines += ["", f"Total bench time {time.monotonic() - started:.0f} s."]
    print("\n".join(lines))


if __name__ == "__main__":
    main()
