"""Live class bench: real servers on loopback, hundreds of WebSocket students; a markdown table.

    .venv/bin/python bench/classroom.py            # every scenario, about 3 minutes
    .venv/bin/python bench/classroom.py --only one # one of: one, redis, kill, deflate, page,
                                                   # restart, flood

- one: one process (the in-process hub), 300 students in one class. The teacher steps 20 times,
  5 a second: how long until every student has each step (p50/p99/max), how many never got it;
  then every student answers one question within 1 s: how long after the last answer the
  teacher's live count and the revealed board show them all; memory per connected student.
- redis: two server processes on two ports sharing one redis-server, 1,000 students (half on
  each), the teacher on the first: the same steps.
- kill: `uvicorn --workers 2` with Redis, 300 students answering a question while one worker is
  killed (SIGKILL, by pid): how long until its students are back on the current step, and
  whether every acknowledged answer is on the board.
- deflate: memory per student with uvicorn's default permessage-deflate (compare `one`).
- page: two server processes + Redis, 1,000 students that behave like the page (a new program:
  one POST /api/graph; new values of the same program: painted from the page's own numbers, no
  request; a question: an answer) and three real Chromium student pages. The teacher steps 20
  times, drags a slider through 40 moves (one every 25 ms) and changes the program: server CPU
  per student per teacher action, view delivery p50/p99, and the real pages' requests per drag.
- restart: two processes + a persisted Redis (append-only, fsync always: compose.yaml's), 1,000
  students, a question open and half of them answered; redis-server restarted (SIGTERM, then
  started on its port and folder); the teacher moves on and the other half answer: how long
  until every student is on the current step, and whether every acknowledged answer is on the
  board.
- flood: one process, a class of 30 real students; a script opens 2,000 sockets into it from
  one address: the 30 students' step delivery and /healthz meanwhile.
Every socket is on 127.0.0.1 and every loop is bounded in count and time. The load generator
shares the machine's cores with the servers, so every latency is an upper bound.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import random
import resource
import secrets
import signal
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import orjson
from websockets.asyncio.client import connect
from websockets.exceptions import WebSocketException

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests")]
from servers import start_redis, start_server, stop_server  # noqa: E402

DIAMOND = "a = 2\nb = a + 1\nc = a * 3\nd = b * c"
NO_DEFLATE = ("--ws-per-message-deflate", "false")
STEPS = 20
STEP_EVERY_S = 0.2
SETTLE_S = 5.0  # a step not seen this long after it was sent is lost
CONNECTING_AT_ONCE = 50


def dumps(message: dict) -> str:
    """A text frame, as the page sends (a binary one is no message of the protocol)."""
    return orjson.dumps(message).decode()


def raise_file_limit() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def cpu_s(pids: list[int]) -> float:
    """User + system CPU seconds the processes used so far."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total / ticks


def children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(p) for p in path.read_text().split()] if path.exists() else []


def uvicorn_workers(master: int) -> list[int]:
    """The worker processes of `uvicorn --workers N` (each has a helper child; the helper not)."""
    return [pid for pid in children(master) if "uvicorn" in Path(f"/proc/{pid}/cmdline").read_text()
            or children(pid)]  # fmt: skip


def sockets(pid: int) -> int:
    """How many sockets the process holds (its students' connections, mostly)."""
    fds = Path(f"/proc/{pid}/fd")
    return sum(1 for fd in fds.iterdir() if os.readlink(fd).startswith("socket:"))


def view(step: int) -> dict:
    return {"source": DIAMOND, "step": step}


# Every bench student connects from 127.0.0.1: the per-address cap on a class's students
# (300 by default) is lifted, as it would be for a room of 1,000 behind one NAT.
ONE_ADDRESS = {"CHAINRULE_CLASS_MAX_STUDENTS_PER_ADDRESS": "0",
               "CHAINRULE_CLASS_SOCKETS_PER_ADDRESS_PER_2S": "100000"}  # fmt: skip


def ws_url(base: str, code: str) -> str:
    return base.replace("http://", "ws://") + f"/api/class/{code}/live"


@dataclass
class Student:
    url: str
    sid: str = field(default_factory=lambda: secrets.token_urlsafe(16))
    seen: dict[int, float] = field(default_factory=dict)  # step → when first on it (or later)
    current: int = -1
    question: str | None = None
    acked: dict[str, float] = field(default_factory=dict)  # question → value acknowledged
    connections: int = 0
    welcomed: asyncio.Event = field(default_factory=asyncio.Event)
    closed_at: float | None = None
    socket: object = None
    headers: dict = field(default_factory=dict)  # X-Forwarded-For: another client address

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            try:
                async with connect(
                    self.url,
                    ping_interval=None,
                    open_timeout=30,
                    max_queue=256,
                    additional_headers=self.headers,
                ) as ws:
                    self.socket = ws
                    self.connections += 1
                    await ws.send(dumps({"type": "hello", "role": "student", "student": self.sid}))
                    async for raw in ws:
                        self.on(raw)
            except (OSError, WebSocketException, TimeoutError):
                pass
            self.socket = None
            self.closed_at = self.closed_at or time.perf_counter()
            await asyncio.sleep(random.uniform(0, 0.25))  # the page's first retries

    def on(self, raw: str | bytes) -> None:
        now = time.perf_counter()
        message = orjson.loads(raw)
        kind = message["type"]
        if kind == "welcome":
            self.sid = message["student"]  # the server's id for this student: said on reconnection
        elif kind == "snapshot":
            step = message["view"]["step"]
            for k in range(self.current + 1, step + 1):
                self.seen.setdefault(k, now)
            self.current = max(self.current, step)
            question = message["question"]
            self.question = question["id"] if question and question["open"] else None
            self.welcomed.set()
        elif kind == "ack":
            self.acked[message["question"]] = message["value"]

    async def answer(self, value: float) -> bool:
        if self.socket is None or self.question is None:
            return False
        body = {"type": "answer", "question": self.question, "value": value, "seq": 1}
        try:
            await self.socket.send(dumps(body))
        except WebSocketException:
            return False
        return True


@dataclass
class Teacher:
    url: str
    token: str
    socket: object = None
    counts: list[tuple[float, int]] = field(default_factory=list)
    boards: list[tuple[float, dict]] = field(default_factory=list)
    question: str | None = None
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    last_view: dict | None = None  # said again after a reconnection, as the page does

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            try:
                async with connect(self.url, ping_interval=None, open_timeout=30) as ws:
                    hello = {"type": "hello", "role": "teacher", "token": self.token}
                    await ws.send(dumps(hello))
                    self.socket = ws
                    async for raw in ws:
                        self.on(raw)
            except (OSError, WebSocketException, TimeoutError):
                pass
            self.socket = None
            await asyncio.sleep(0.05)

    def on(self, raw: str | bytes) -> None:
        now = time.perf_counter()
        message = orjson.loads(raw)
        if message["type"] == "snapshot":
            question = message["question"]
            self.question = question["id"] if question else None
            if message["board"]:
                self.boards.append((now, message["board"]))
            self.ready.set()
        elif message["type"] == "answers":
            self.counts.append((now, message["count"]))
        elif message["type"] in ("welcome", "store") and self.last_view is not None:
            if message["type"] == "store" and not message["up"]:
                return  # refused meanwhile: said again once the store is back, as the page does
            asyncio.get_running_loop().create_task(
                self.send({"type": "view", "view": self.last_view})
            )

    async def send(self, body: dict) -> None:
        if body["type"] == "view":
            self.last_view = body["view"]
        for _ in range(200):  # a teacher whose worker died reconnects first
            if self.socket is not None:
                try:
                    await self.socket.send(dumps(body))
                    return
                except WebSocketException:
                    pass
            await asyncio.sleep(0.05)
        raise RuntimeError("the teacher could not reach the class")


def create_class(base: str) -> dict:
    response = httpx.post(f"{base}/api/class", json={"view": view(0)}, timeout=30)
    response.raise_for_status()
    return response.json()


async def until(predicate, timeout_s: float) -> bool:
    deadline = time.perf_counter() + timeout_s
    while not predicate():
        if time.perf_counter() > deadline:
            return False
        await asyncio.sleep(0.01)
    return True


async def join_all(students: list[Student], stop: asyncio.Event) -> list[asyncio.Task]:
    """Connect every student, CONNECTING_AT_ONCE at a time, and wait for their first state."""
    tasks = []
    for i in range(0, len(students), CONNECTING_AT_ONCE):
        batch = students[i : i + CONNECTING_AT_ONCE]
        tasks += [asyncio.create_task(s.run(stop)) for s in batch]
        await asyncio.wait_for(asyncio.gather(*(s.welcomed.wait() for s in batch)), 60)
    return tasks


def quantiles(samples: list[float]) -> tuple[float, float, float]:
    ordered = sorted(samples)
    if not ordered:
        return (float("nan"),) * 3
    p = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))]  # noqa: E731
    return p(0.5), p(0.99), ordered[-1]


async def step_through(
    teacher: Teacher, students: list[Student], first: int, servers: list[int]
) -> dict:
    """The teacher takes STEPS steps; each student's delay to each step, the lost ones, and the
    servers' CPU time per delivery."""
    sent: dict[int, float] = {}
    cpu0, wall0, server0 = time.process_time(), time.perf_counter(), cpu_s(servers)
    for k in range(first, first + STEPS):
        sent[k] = time.perf_counter()
        await teacher.send({"type": "view", "view": view(k)})
        await asyncio.sleep(STEP_EVERY_S)
    last = first + STEPS - 1
    await until(lambda: all(s.current >= last for s in students), SETTLE_S)
    busy = (time.process_time() - cpu0) / (time.perf_counter() - wall0)
    server_us = (cpu_s(servers) - server0) / (len(students) * STEPS) * 1e6
    delays = [
        (s.seen[k] - sent[k]) * 1000 for s in students for k in sent if k in s.seen
    ]  # fmt: skip
    lost = sum(1 for s in students for k in sent if k not in s.seen)
    p50, p99, worst = quantiles(delays)
    return {
        "p50": p50,
        "p99": p99,
        "max": worst,
        "lost": lost,
        "pairs": len(students) * STEPS,
        "generator_cpu": busy,
        "server_us": server_us,
    }


async def answer_round(teacher: Teacher, students: list[Student], spread_s: float = 1.0) -> dict:
    """Ask; every student answers once within `spread_s`; then reveal. Delays after the last
    answer: the live count reaching everyone, and the board (revealed once all are acked)."""
    await teacher.send({"type": "ask", "kind": "grad", "node": "n0", "label": "grad[a]"})
    await until(lambda: all(s.question for s in students), 10)
    question = students[0].question
    values = [random.choice([15.0, 6.0, 9.0, 15.0, 12.0]) for _ in students]

    async def one(student: Student, value: float) -> float:
        await asyncio.sleep(random.uniform(0, spread_s))
        await student.answer(value)
        return time.perf_counter()

    sent = await asyncio.gather(*(one(s, v) for s, v in zip(students, values, strict=True)))
    last = max(sent)
    n = len(students)
    await until(lambda: any(c >= n for _, c in teacher.counts), 10)
    counted = next((t for t, c in teacher.counts if c >= n), float("nan"))
    await until(lambda: all(question in s.acked for s in students), 10)
    acked = sum(question in s.acked for s in students)
    await teacher.send({"type": "reveal", "names": False})
    await until(lambda: teacher.boards and teacher.boards[-1][1]["question"] == question, 10)
    board_at, board = teacher.boards[-1]
    return {
        "acked": acked, "on_board": board["total"], "count_ms": (counted - last) * 1000,
        "board_ms": (board_at - last) * 1000,
    }  # fmt: skip


async def half_answered(teacher: Teacher, students: list[Student], answering: int) -> str:
    """Ask a question; the first `answering` students answer it; the question's id once every
    one of those answers is acknowledged."""
    await teacher.send({"type": "ask", "kind": "grad", "node": "n0", "label": "grad[a]"})
    await until(lambda: all(s.question for s in students), 10)
    question = students[0].question
    for i, s in enumerate(students[:answering]):
        await s.answer(float(i))
    await until(lambda: sum(question in s.acked for s in students) >= answering, 10)
    return question


def row(label: str, scale: str, result: str, target: str, fine: bool) -> list[str]:
    return [label, scale, result, target, "ok" if fine else "missed"]


def memory_row(label: str, before_kib: int, after_kib: int, students: int) -> list[str]:
    per = (after_kib - before_kib) * 1024 / students / 1000
    return row(label, f"{students} connected", f"{per:.1f} KB per student", "≤ 50 KB", per <= 50)


def comparison_row(label: str, before_kib: int, after_kib: int, students: int) -> list[str]:
    """A setting we do not run with, measured to show why."""
    per = (after_kib - before_kib) * 1024 / students / 1000
    return [label, f"{students} connected", f"{per:.1f} KB per student", "(why it is off)", ""]


async def class_with_teacher(base: str, stop: asyncio.Event) -> tuple[dict, Teacher]:
    """A new class on `base` and its teacher, connected and holding the class's first state."""
    info = create_class(base)
    teacher = Teacher(ws_url(base, info["code"]), info["token"])
    asyncio.create_task(teacher.run(stop))
    await teacher.ready.wait()
    return info, teacher


def two_servers(redis_url: str, more: dict | None = None) -> tuple:
    """Two server processes sharing the Redis at `redis_url`: (first, its URL, second, its URL)."""
    env = {"CHAINRULE_REDIS_URL": redis_url, **ONE_ADDRESS, **(more or {})}
    first, first_url = start_server(env, args=NO_DEFLATE)
    second, second_url = start_server(env, args=NO_DEFLATE)
    return first, first_url, second, second_url


async def one_process(deflate: bool = False) -> list[list[str]]:
    process, base = start_server(ONE_ADDRESS, args=() if deflate else NO_DEFLATE)
    stop = asyncio.Event()
    try:
        info, teacher = await class_with_teacher(base, stop)
        await asyncio.sleep(1.0)
        before = rss_kib(process.pid)
        students = [Student(ws_url(base, info["code"])) for _ in range(300)]
        await join_all(students, stop)
        await asyncio.sleep(1.0)
        after = rss_kib(process.pid)
        if deflate:
            label = "permessage-deflate on (uvicorn's default): server memory"
            return [comparison_row(label, before, after, len(students))]
        rows = [memory_row("one process: server memory", before, after, len(students))]
        steps = await step_through(teacher, students, 1, [process.pid])
        delivered = (
            f"p50 {steps['p50']:.0f} ms, p99 {steps['p99']:.0f} ms, max {steps['max']:.0f} ms, "
            f"lost {steps['lost']}; server CPU {steps['server_us']:.0f} µs per delivery"
        )
        fine = steps["p99"] <= 250 and steps["lost"] == 0
        rows.insert(
            0,
            row(
                "one process, 300 students: teacher step → every student has it",
                f"{steps['pairs']} deliveries",
                delivered,
                "p99 ≤ 250 ms, 0 lost",
                fine,
            ),
        )
        answers = await answer_round(teacher, students)
        counted = f"{answers['acked']} acknowledged, {answers['on_board']} on the board"
        delays = (
            f"live count +{answers['count_ms']:.0f} ms, board +{answers['board_ms']:.0f} ms "
            "after the last answer"
        )
        fine = answers["board_ms"] <= 1000 and answers["on_board"] == 300
        rows.insert(
            1,
            row(
                "one process, 300 students answer within 1 s",
                counted,
                delays,
                "≤ 1 s after the last",
                fine,
            ),
        )
        return rows
    finally:
        stop.set()
        stop_server(process)


async def two_processes() -> list[list[str]]:
    redis_process, redis_url = start_redis()
    first, first_url, second, second_url = two_servers(redis_url)
    stop = asyncio.Event()
    try:
        info, teacher = await class_with_teacher(first_url, stop)
        await asyncio.sleep(1.0)
        before = rss_kib(first.pid) + rss_kib(second.pid)
        students = [
            Student(ws_url((first_url, second_url)[i % 2], info["code"])) for i in range(1000)
        ]
        await join_all(students, stop)
        await asyncio.sleep(1.0)
        after = rss_kib(first.pid) + rss_kib(second.pid)
        steps = await step_through(teacher, students, 1, [first.pid, second.pid])
        delivered = (
            f"p50 {steps['p50']:.0f} ms, p99 {steps['p99']:.0f} ms, max {steps['max']:.0f} ms, "
            f"lost {steps['lost']}; server CPU {steps['server_us']:.0f} µs per delivery"
        )
        fine = steps["p99"] <= 400 and steps["lost"] == 0
        return [
            row("two processes + Redis, 1,000 students (half on each)",
                f"{steps['pairs']} deliveries", delivered, "p99 ≤ 400 ms, 0 lost", fine),
            memory_row("two processes + Redis: server memory", before, after, 1000),
        ]  # fmt: skip
    finally:
        stop.set()
        for process in (first, second, redis_process):
            stop_server(process)


async def kill_a_worker() -> list[list[str]]:
    redis_process, redis_url = start_redis()
    env = {"CHAINRULE_REDIS_URL": redis_url, **ONE_ADDRESS}
    master, base = start_server(env, workers=2, args=NO_DEFLATE)
    stop = asyncio.Event()
    try:
        info, teacher = await class_with_teacher(base, stop)
        url = ws_url(base, info["code"])
        students = [Student(url) for _ in range(300)]
        await join_all(students, stop)
        # Half answer before the kill; the kill; the other half answer while their worker is
        # gone or just back (an answer sent to a dying socket is not acknowledged, and retried).
        question = await half_answered(teacher, students, 150)
        workers = uvicorn_workers(master.pid)
        victim = max(workers, key=sockets)  # the worker serving the most students
        shares = "/".join(str(sockets(pid)) for pid in workers)
        for s in students:
            s.closed_at = None
        killed_at = time.perf_counter()
        os.kill(victim, signal.SIGKILL)
        await teacher.send({"type": "view", "view": view(50)})
        for i, s in enumerate(students[150:], start=150):
            await s.answer(float(i))
        await until(lambda: all(s.current >= 50 for s in students), 15)
        cut = [s for s in students if s.closed_at is not None and s.closed_at >= killed_at]
        if os.environ.get("BENCH_DEBUG"):
            late = [s for s in cut if 50 not in s.seen]
            connections = sorted({s.connections for s in late})
            steps = sorted({s.current for s in late})
            print(f"cut {len(cut)}, late {len(late)}: connections {connections}, steps {steps}",
                  file=sys.stderr)  # fmt: skip
        back = [(s.seen[50] - killed_at) for s in cut if 50 in s.seen]
        for _ in range(50):  # retry answers whose socket died under them
            missing = [s for s in students[150:] if question not in s.acked]
            if not missing:
                break
            for s in missing:
                await s.answer(float(students.index(s)))
            await asyncio.sleep(0.2)
        acked = [s for s in students if question in s.acked]
        await teacher.send({"type": "reveal", "names": False})
        await until(lambda: teacher.boards and teacher.boards[-1][1]["question"] == question, 10)
        board = teacher.boards[-1][1]
        on_board = board["total"]
        median, _, worst = quantiles(back)
        scale = f"{len(cut)} students cut off (sockets per worker {shares})"
        result = (
            f"back on the current step: p50 {median:.2f} s, max {worst:.2f} s, {len(back)} of "
            f"{len(cut)}; answers acknowledged {len(acked)}, on the board {on_board}"
        )
        fine = bool(back) and worst <= 5 and len(back) == len(cut) and on_board == len(acked)
        return [row("kill -9 one of two workers (`--workers 2` + Redis), 300 students", scale,
                    result, "≤ 5 s; no acknowledged answer lost", fine)]  # fmt: skip
    finally:
        stop.set()
        stop_server(master)
        stop_server(redis_process)


# The page scenario: the diamond shown whole (its last frame), a slider dragged, a program change.
DRAG_MOVES = 40
DRAG_EVERY_S = 0.025
REAL_PAGES = 3
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]  # fmt: skip


def last_frame(source: str) -> int:
    from chainrule import engine

    return len(engine.trace(source).to_dict()["steps"]["phase"]) - 1


@dataclass
class PageStudent(Student):
    """A student that does what the page does with a view: a new program is one POST
    /api/graph; new values of the same program are the page's own numbers (no request)."""

    http: object = None  # an httpx.AsyncClient of the student's server
    source: str | None = None
    requests: int = 0
    traced: float | None = None  # when the last program's trace came back
    seen_a: dict[float, float] = field(default_factory=dict)  # value of a → when first shown
    max_a: float = float("-inf")
    statuses: list[int] = field(default_factory=list)

    def on(self, raw: str | bytes) -> None:
        super().on(raw)
        message = orjson.loads(raw)
        if message["type"] != "snapshot":
            return
        shown = message["view"]
        if shown["source"] != self.source:
            self.source = shown["source"]
            self.traced = None
            asyncio.get_running_loop().create_task(self.trace(shown))
        a = shown["values"].get("a")
        if a is not None and a > self.max_a:
            self.max_a = a
            self.seen_a.setdefault(a, time.perf_counter())

    async def trace(self, shown: dict) -> None:
        self.requests += 1
        body = {"source": shown["source"], "values": shown["values"]}
        response = await self.http.post("/api/graph", json=body)
        self.statuses.append(response.status_code)
        if response.status_code == 200:
            self.traced = time.perf_counter()


async def real_pages(bases: list[str], code: str, stop: asyncio.Event, counts: list[list[str]]):
    """REAL_PAGES student pages in headless Chromium (390×844), each counting its requests for
    a trace or numbers in `counts`; returns once every page follows the class."""
    from playwright.async_api import async_playwright

    playwright = await async_playwright().start()
    browser = await playwright.chromium.launch(executable_path="/usr/bin/chromium",
                                               args=CHROMIUM_ARGS)  # fmt: skip
    for k in range(REAL_PAGES):
        page = await browser.new_page(viewport={"width": 390, "height": 844})
        made: list[str] = []
        counts.append(made)
        page.on("request", lambda r, made=made: made.append(r.url)
                if "/api/values" in r.url or "/api/graph" in r.url else None)  # fmt: skip
        await page.goto(f"{bases[k % len(bases)]}/c/{code}")
        await page.wait_for_selector("[data-testid=class-status][data-state=following]",
                                     timeout=60_000)  # fmt: skip
        await page.wait_for_selector("svg[data-testid=graph][data-ready=true]", timeout=60_000)

    async def close_at_stop() -> None:
        await stop.wait()
        await browser.close()
        await playwright.stop()

    return asyncio.create_task(close_at_stop())


async def page_like() -> list[list[str]]:
    redis_process, redis_url = start_redis()
    # Room for the three real pages beside the thousand (a class takes 1,000 by default).
    first, first_url, second, second_url = two_servers(
        redis_url, {"CHAINRULE_CLASS_MAX_STUDENTS": "1003"}
    )
    servers = [first.pid, second.pid]
    stop = asyncio.Event()
    limits = httpx.Limits(max_connections=100)
    clients = [httpx.AsyncClient(base_url=b, timeout=60, limits=limits)
               for b in (first_url, second_url)]  # fmt: skip
    last = last_frame(DIAMOND)
    try:
        info, teacher = await class_with_teacher(first_url, stop)
        await teacher.send({"type": "view", "view": {**view(0), "values": {"a": 2.0}}})
        students = [
            PageStudent(ws_url((first_url, second_url)[i % 2], info["code"]), http=clients[i % 2])
            for i in range(1000)
        ]
        await join_all(students, stop)
        counts: list[list[str]] = []
        await real_pages([first_url, second_url], info["code"], stop, counts)
        await until(lambda: all(s.traced for s in students), 60)
        n = len(students) + REAL_PAGES
        rows = []

        steps = await step_through(teacher, students, 1, servers)
        rows.append(row(
            "1,000 page-like students + 3 Chromium pages, 2 processes + Redis: teacher step "
            "→ every student", f"{steps['pairs']} deliveries",
            f"p50 {steps['p50']:.0f} ms, p99 {steps['p99']:.0f} ms, lost {steps['lost']}; "
            f"server CPU {steps['server_us']:.0f} µs per student per step",
            "p99 ≤ 400 ms", steps["p99"] <= 400 and steps["lost"] == 0,
        ))  # fmt: skip

        # The drag: 40 moves of the slider, on the last frame (every number shown).
        before = [len(made) for made in counts]
        requests0 = sum(s.requests for s in students)
        server0 = cpu_s(servers)
        sent: dict[float, float] = {}
        for k in range(1, DRAG_MOVES + 1):
            a = 2.0 + k / 10
            sent[a] = time.perf_counter()
            await teacher.send({"type": "view", "view": {**view(last), "values": {"a": a}}})
            await asyncio.sleep(DRAG_EVERY_S)
        final = 2.0 + DRAG_MOVES / 10
        await until(lambda: all(s.max_a >= final for s in students), SETTLE_S)
        await asyncio.sleep(1.0)  # a page that asks once the drag pauses has asked by now
        server_us = (cpu_s(servers) - server0) / (n * DRAG_MOVES) * 1e6
        delays = []
        for s in students:
            shown = sorted(s.seen_a.items())
            for a, at in sent.items():
                first_after = next((t for value, t in shown if value >= a), None)
                if first_after is not None:
                    delays.append((first_after - at) * 1000)
        p50, p99, _ = quantiles(delays)
        per_page = [len(made) - b for made, b in zip(counts, before, strict=True)]
        per_student = (sum(s.requests for s in students) - requests0) / len(students)
        rows.append(row(
            f"the same, a {DRAG_MOVES}-move teacher drag", f"{len(delays)} deliveries",
            f"view delivery p50 {p50:.0f} ms, p99 {p99:.0f} ms; requests per Chromium page "
            f"per drag {max(per_page)} ({'/'.join(map(str, per_page))}), per page-like "
            f"student {per_student:.0f}; server CPU {server_us:.0f} µs per student per move",
            "≤ 1 request per student per drag; p99 ≤ 400 ms",
            max(per_page) <= 1 and p99 <= 400,
        ))  # fmt: skip

        # A new program: every page asks for its trace once.
        server0, started = cpu_s(servers), time.perf_counter()
        changed = DIAMOND.replace("a * 3", "a * 4")
        await teacher.send({"type": "view", "view": {"source": changed, "step": 0}})
        await until(lambda: all(s.source == changed and s.traced for s in students), 60)
        took = time.perf_counter() - started
        server_ms = (cpu_s(servers) - server0) / n * 1e3
        statuses = Counter(code for s in students for code in s.statuses[-1:])
        traced = sum(s.source == changed and s.traced is not None for s in students)
        rows.append(row(
            "the same, a new program (each page asks for its trace once)",
            f"{len(students)} POST /api/graph",
            f"{traced} students traced in {took:.1f} s (replies {dict(statuses)}); server CPU "
            f"{server_ms:.2f} ms per student",
            "every student traced", traced == len(students),
        ))  # fmt: skip
        return rows
    finally:
        stop.set()
        await asyncio.sleep(0.5)
        for client in clients:
            await client.aclose()
        for process in (first, second, redis_process):
            stop_server(process)


async def redis_restart() -> list[list[str]]:
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="bench-redis-"))
    redis_process, redis_url = start_redis(data_dir=folder)
    port = int(redis_url.rsplit(":", 1)[1].split("/")[0])
    first, first_url, second, second_url = two_servers(redis_url)
    stop = asyncio.Event()
    try:
        info, teacher = await class_with_teacher(first_url, stop)
        await teacher.send({"type": "view", "view": view(3)})
        students = [
            Student(ws_url((first_url, second_url)[i % 2], info["code"])) for i in range(1000)
        ]
        await join_all(students, stop)
        question = await half_answered(teacher, students, 500)
        stop_server(redis_process)  # SIGTERM: a restart
        redis_process, _ = start_redis(port=port, data_dir=folder)
        back_at = time.perf_counter()
        await teacher.send({"type": "view", "view": view(50)})
        for _ in range(100):  # the other half answer; an answer refused meanwhile is sent again
            missing = [s for s in students if question not in s.acked]
            if not missing:
                break
            for s in missing:
                await s.answer(float(students.index(s)))
            await asyncio.sleep(0.2)
        await until(lambda: all(s.current >= 50 for s in students), 15)
        on_step = [s.seen[50] - back_at for s in students if 50 in s.seen]
        acked = sum(question in s.acked for s in students)
        await teacher.send({"type": "reveal", "names": False})
        await until(lambda: teacher.boards and teacher.boards[-1][1]["question"] == question, 10)
        on_board = teacher.boards[-1][1]["total"] if teacher.boards else 0
        _, _, worst = quantiles(on_step)
        result = (
            f"every page on the current step {worst:.2f} s after Redis was back "
            f"({len(on_step)} of {len(students)}); answers acknowledged {acked}, on the board "
            f"{on_board}"
        )
        fine = len(on_step) == len(students) and worst <= 5 and on_board == acked
        return [row("Redis restarted mid-question (2 processes, persisted Redis), 1,000 students",
                    "500 answered before, 500 after", result,
                    "≤ 5 s; acknowledged answers lost: 0", fine)]  # fmt: skip
    finally:
        stop.set()
        for process in (first, second, redis_process):
            stop_server(process)


FLOOD_SOCKETS = 2_000
# GET /healthz every 0.1 s until a line comes on stdin; the latencies (ms) as JSON.
HEALTH_PROBE = """
import json, sys, threading, time
import httpx
done = threading.Event()
threading.Thread(target=lambda: (sys.stdin.readline(), done.set()), daemon=True).start()
latencies = []
with httpx.Client(base_url=sys.argv[1], timeout=30) as http:
    while not done.is_set():
        started = time.perf_counter()
        http.get("/healthz")
        latencies.append((time.perf_counter() - started) * 1000)
        done.wait(0.1)
print(json.dumps(latencies))
"""


async def socket_flood() -> list[list[str]]:
    """A class of 30; a script's 2,000 sockets from one address (the default per-address cap:
    300 students) while the teacher steps: the 30 real students' delivery, /healthz. Each
    client's address is said in X-Forwarded-For (the test server, as uvicorn by default, trusts
    it from 127.0.0.1): the students each their own, the script one."""
    # The server's defaults for one address: 300 students, 300 sockets opened in 2 s.
    defaults = {"CHAINRULE_CLASS_SOCKETS_PER_ADDRESS_PER_2S": "300"}
    process, base = start_server(defaults, args=NO_DEFLATE)
    stop = asyncio.Event()
    try:
        info, teacher = await class_with_teacher(base, stop)
        url = ws_url(base, info["code"])
        students = [Student(url, headers={"X-Forwarded-For": f"198.51.100.{k}"})
                    for k in range(30)]  # fmt: skip
        await join_all(students, stop)
        refused = Counter()
        script = {"X-Forwarded-For": "203.0.113.66"}

        async def intruder() -> None:
            heard = False
            try:
                async with connect(url, ping_interval=None, open_timeout=30,
                                   additional_headers=script) as ws:  # fmt: skip
                    await ws.send(dumps({"type": "hello", "role": "student"}))
                    async for raw in ws:
                        message = orjson.loads(raw)
                        heard = True
                        if message["type"] == "error":
                            refused[message["error"]["type"]] += 1
                        if stop.is_set():
                            return
            except (OSError, WebSocketException, TimeoutError) as error:
                if not heard:
                    refused[f"refused at the handshake ({type(error).__name__})"] += 1

        flood = []
        for _ in range(0, FLOOD_SOCKETS, CONNECTING_AT_ONCE):
            flood += [asyncio.create_task(intruder()) for _ in range(CONNECTING_AT_ONCE)]
            await asyncio.sleep(0.01)
        # /healthz from a process of its own: in this one, its latency would be this load
        # generator's (2,000 sockets on one event loop), not the server's.
        prober = await asyncio.create_subprocess_exec(
            sys.executable, "-c", HEALTH_PROBE, base, stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
        )  # fmt: skip
        steps = await step_through(teacher, students, 1, [process.pid])
        stop.set()
        out, _ = await prober.communicate(b"stop\n")
        health = orjson.loads(out)
        latecomer = Student(url, headers={"X-Forwarded-For": "198.51.100.200"})
        asyncio.create_task(latecomer.run(asyncio.Event()))
        joined = await until(lambda: latecomer.welcomed.is_set(), 10)
        _, health_p99, _ = quantiles(health)
        result = (
            f"students' step p50 {steps['p50']:.0f} ms, p99 {steps['p99']:.0f} ms, lost "
            f"{steps['lost']}; /healthz p99 {health_p99:.0f} ms; the script's sockets refused "
            f"{dict(refused)}; a latecomer {'joined' if joined else 'did not join'}"
        )
        fine = steps["p99"] <= 250 and health_p99 <= 100 and joined
        return [row(f"{FLOOD_SOCKETS:,} sockets from one address into a class of 30",
                    f"{steps['pairs']} deliveries", result,
                    "step p99 ≤ 250 ms; /healthz p99 ≤ 100 ms", fine)]  # fmt: skip
    finally:
        stop.set()
        stop_server(process)


def machine() -> str:
    lines = Path("/proc/cpuinfo").read_text().splitlines()
    cpu = next((line.split(":", 1)[1].strip() for line in lines if line.startswith("model name")),
               platform.processor())  # fmt: skip
    load = os.getloadavg()[0]
    return (
        f"{os.cpu_count()} cores ({cpu}), Python {platform.python_version()}, "
        f"load average {load:.1f} at the start"
    )


async def main(only: str | None) -> None:
    raise_file_limit()
    scenarios = {"one": one_process, "redis": two_processes, "kill": kill_a_worker,
                 "deflate": lambda: one_process(deflate=True), "page": page_like,
                 "restart": redis_restart, "flood": socket_flood}  # fmt: skip
    print(f"Machine: {machine()}\n")
    print("| measurement | scale | result | target | |")
    print("| --- | --- | --- | --- | --- |")
    for name, scenario in scenarios.items():
        if only and name != only:
            continue
        for row in await asyncio.wait_for(scenario(), 240):
            print("| " + " | ".join(row) + " |", flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--only", choices=["one", "redis", "kill", "deflate", "page", "restart", "flood"]
    )
    asyncio.run(main(parser.parse_args().only))
