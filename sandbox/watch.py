"""Watching the learner's code run: the line running (reported when it changes, looked at every
REPORT_EVERY events, at most once every REPORT_GAP_S seconds, so a worker stopped at its time
limit can say where it was), each `backward()` call (its Value, its line, every node's data and
grad at that moment) and each `draw_dot(...)` argument.

Python 3.12+ (Pyodide) watches with `sys.monitoring`, cheaply: function starts everywhere, but
switched off at once for every function that is not a `backward` or a `draw_dot` (micrograd's
inner calls cost nothing after their first); line events on the cell's own top level; and jumps
(a loop's every turn) in every function the cell defines, whose line is looked up only when it
is reported. So a line of a `Value.__mul__` is never watched, yet a loop that never ends is found
on its line. Older Pythons (the tests' CPython 3.11) use `sys.settrace`: every line, several
times slower, same facts.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import CodeType, FrameType
from typing import Any

from chainrule.engine.value_reader import is_value, nodes_under

CODE_FILE = "<your code>"
REPORT_EVERY = 256  # events between two looks at the running line (reported if it changed)
# At most one report in this many seconds (a changed line waits for the next look after it): the
# page stops a run whose worker sends it more messages a second than it expects (sandbox.js).
REPORT_GAP_S = 0.05
WATCHED = frozenset(("backward", "draw_dot"))
TOOL_NAME = "chainrule sandbox"


def as_float(x: Any) -> float:
    try:
        return float(x)
    except (TypeError, ValueError):
        return math.nan


@dataclass
class BackwardCall:
    """One `backward()` call: on which Value, from which line, every node's (data, grad) when
    it began, and how many backward() calls the run had made by then (this one included)."""

    root: Any
    line: int | None
    before: dict[int, tuple[float, float]]
    calls: int


class Watch:
    """What the run saw (the module docstring); `running(code)` watches while it runs."""

    def __init__(self, report_line: Callable[[int], Any] | None, max_nodes: int) -> None:
        self.report_line = report_line
        self.max_nodes = max_nodes
        self.line = 0  # the line running, as last looked at
        self.reported = 0
        self.reported_at = -math.inf  # time.monotonic() of the last report
        self.jumped: tuple[CodeType, int] | None = None  # the last jump, if after the last line
        self.events = 0
        self.calls = 0
        self.backward: BackwardCall | None = None
        self.drawn: Any = None

    @contextmanager
    def running(self, code: CodeType) -> Iterator[None]:
        """Watch while the body runs `code` (and anything it defines and calls)."""
        monitoring = getattr(sys, "monitoring", None)
        if monitoring is None:
            previous = sys.gettrace()
            sys.settrace(self._traced_call)
            try:
                yield
            finally:
                sys.settrace(previous)
            return
        tool = _free_tool(monitoring)
        events = monitoring.events
        monitoring.use_tool_id(tool, TOOL_NAME)
        try:
            monitoring.register_callback(tool, events.PY_START, self._started)
            monitoring.register_callback(tool, events.LINE, self._monitored_line)
            monitoring.register_callback(tool, events.JUMP, self._jumped)
            monitoring.set_events(tool, events.PY_START)
            monitoring.set_local_events(tool, code, events.LINE | events.JUMP)
            for each in _code_objects(code):
                if each is not code:
                    monitoring.set_local_events(tool, each, events.JUMP)
            monitoring.restart_events()  # what an earlier run switched off, on again
            yield
        finally:
            monitoring.set_events(tool, 0)
            for event in (events.PY_START, events.LINE, events.JUMP):
                monitoring.register_callback(tool, event, None)
            monitoring.free_tool_id(tool)

    def _started(self, code: CodeType, offset: int) -> Any:
        if code.co_name not in WATCHED:
            return sys.monitoring.DISABLE
        self._saw_call(sys._getframe(1))
        return None

    def _monitored_line(self, code: CodeType, line: int) -> None:
        self.line, self.jumped = line, None
        self.events += 1
        if self.events % REPORT_EVERY == 0:
            self._report()

    def _jumped(self, code: CodeType, offset: int, destination: int) -> None:
        self.jumped = (code, destination)
        self.events += 1
        if self.events % REPORT_EVERY == 0:
            self._report()

    def _report(self) -> None:
        if self.jumped is not None:
            code, offset = self.jumped
            self.line = _line_at(code, offset) or self.line
            self.jumped = None
        if self.report_line is None or self.line == self.reported:
            return
        now = time.monotonic()
        if now - self.reported_at >= REPORT_GAP_S:
            self.reported, self.reported_at = self.line, now
            self.report_line(self.line)

    def running_line(self) -> int:
        """The line running (or last run), as precisely as the watch knows it."""
        self._report()
        return self.line

    def _traced_call(self, frame: FrameType, event: str, arg: Any) -> Any:
        if frame.f_code.co_name in WATCHED:
            self._saw_call(frame)
        return self._traced_line if frame.f_code.co_filename == CODE_FILE else None

    def _traced_line(self, frame: FrameType, event: str, arg: Any) -> Any:
        if event == "line":
            self._monitored_line(frame.f_code, frame.f_lineno)
        return self._traced_line

    def _saw_call(self, frame: FrameType) -> None:
        code = frame.f_code
        if code.co_name == "draw_dot":
            drawn = frame.f_locals.get(code.co_varnames[0]) if code.co_argcount else None
            if is_value(drawn):
                self.drawn = drawn
            return
        root = frame.f_locals.get("self")
        if not is_value(root):
            return
        caller = frame.f_back
        line = caller.f_lineno if caller and caller.f_code.co_filename == CODE_FILE else None
        nodes = nodes_under(root)
        before = {}
        if len(nodes) <= self.max_nodes:  # a bigger graph is refused when read: keep nothing
            before = {id(n): (as_float(n.data), as_float(getattr(n, "grad", 0.0))) for n in nodes}
        self.calls += 1
        self.backward = BackwardCall(root, line, before, self.calls)


def _free_tool(monitoring: Any) -> int:
    """A sys.monitoring tool id no one uses (a debugger or a profiler may hold some)."""
    for tool in range(6):
        if monitoring.get_tool(tool) is None:
            return tool
    raise RuntimeError("every sys.monitoring tool id is in use")


def _line_at(code: CodeType, offset: int) -> int | None:
    """The line of the instruction at `offset` in `code`."""
    for start, end, line in code.co_lines():
        if start <= offset < end:
            return line
    return None


def _code_objects(code: CodeType) -> Iterator[CodeType]:
    """`code` and every code object defined in it (functions, classes, lambdas, generators)."""
    stack = [code]
    while stack:
        each = stack.pop()
        yield each
        stack.extend(c for c in each.co_consts if isinstance(c, CodeType))
