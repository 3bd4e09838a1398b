"""Run a learner's code and read the Value graph it leaves (chainrule.sandbox's docstring says
where this runs; docs/sandbox.md what the page does with the result).

`Session.run(code)` executes the code as a notebook cell would (the last line's value is kept),
watching three things while it runs: the line running (reported every REPORT_EVERY lines, so a
worker stopped at its time limit can say where it was), each `backward()` call (its Value, its
line, and every node's data and grad at that moment), and each `draw_dot(...)` argument. Then:

- which Value is the graph: the one `backward()` was last called on, else the last `draw_dot`
  argument, else the last line's value (`Choice.kind`), and every variable holding a Value, to
  pick another (`Session.pick(name)`);
- the graph read as a program by the engine's reader (engine/value_reader.py), leaves at the data
  they had when `backward()` was called (a training loop updates them afterwards), nodes named
  by the variables that hold them when their label is no name;
- for the autograd check (static/js/sandbox/autograd-check.js): every node's own `grad` and
  `data`, and what the code did that the check can name (an op whose `_backward` was never
  set; gradients already there when `backward()` began).

Every result is a JSON-ready dict: {"ok": true, ...} or {"ok": false, "error": {...}}; numbers
that JSON cannot hold are the API's strings ("NaN", "Infinity", "-Infinity").
"""

from __future__ import annotations

import ast
import io
import json
import math
import traceback
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass, field
from typing import Any

from chainrule.engine.builder import MAX_DEPTH, MAX_NODES, MAX_VALUE_NODES, Limits
from chainrule.engine.errors import ProgramError, quoted
from chainrule.engine.i18n import DEFAULT_LANG, render, warnings_in
from chainrule.engine.value_reader import (
    KNOWN_OPS,
    NotAGraph,
    NotAValue,
    TooManyNodes,
    children_of,
    is_value,
    loop_targets,
    nodes_under,
    places_in,
    program_of,
)
from chainrule.sandbox.check import Check, reflected_fix
from chainrule.sandbox.stubs import Unavailable, _Nothing, sandbox_import, stub_modules
from chainrule.sandbox.watch import (
    CODE_FILE,
    BackwardCall,
    Watch,
    as_float,
)

# The page posts the program of a graph read here to the server, which takes up to its
# `max_nodes` (the page says it: Session's max_nodes; the engine's MAX_NODES by default). A bigger
# graph, up to MAX_VALUE_NODES (the notebook's `max_value_nodes`, as a Value read in a kernel), is
# traced and laid out here (chainrule/sandbox/local_trace.py); a bigger one still is refused.
OUTPUT_CHARS = 4_000  # the end of what the code printed, shown under it
MAGIC_PREFIXES = ("%", "!")  # notebook magics and shell lines: skipped, with a note


def json_number(x: Any) -> float | str | None:
    """`x` as the API writes a number: a float, or "NaN"/"Infinity"/"-Infinity"; None if it is
    no number at all."""
    try:
        x = float(x)
    except (TypeError, ValueError):
        return None
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    return x


class _Tail(io.StringIO):
    """A stdout that keeps only the end of what was written."""

    def write(self, text: str) -> int:
        written = super().write(text)
        if self.tell() > 4 * OUTPUT_CHARS:
            end = self.getvalue()[-OUTPUT_CHARS:]
            self.seek(0)
            self.truncate()
            super().write(end)
        return written

    def tail(self) -> str:
        return self.getvalue()[-OUTPUT_CHARS:]


def without_magics(code: str) -> tuple[str, list[dict[str, Any]]]:
    """`code` with notebook magics (`%matplotlib inline`) and shell lines (`!pip install …`)
    replaced by `pass` at their indentation (so line numbers stay), and a note for each."""
    lines = code.split("\n")
    notes = []
    for number, line in enumerate(lines, start=1):
        stripped = line.lstrip()
        if stripped.startswith(MAGIC_PREFIXES):
            notes.append({"line": number, "text": stripped.rstrip()[:80]})
            lines[number - 1] = line[: len(line) - len(stripped)] + "pass"
    return "\n".join(lines), notes


def error_at(kind: str, message: str, code: str, line: int | None, column: int | None = None,
             end_column: int | None = None, **params: Any) -> dict[str, Any]:  # fmt: skip
    """The API's error shape for a line of the learner's code (`kind`: what the page says; the
    message is Python's own words), with the line's text and a caret under the column."""
    lines = code.split("\n")
    snippet = lines[line - 1] if line and 0 < line <= len(lines) else None
    caret = None
    if snippet is not None:
        start = column or (len(snippet) - len(snippet.lstrip()) + 1)
        width = max(1, (end_column or 0) - start) if end_column else len(snippet.strip()) or 1
        caret = " " * (start - 1) + "^" * width
        column = start
    return {"type": kind, "message": message, "line": line, "column": column,
            "snippet": snippet, "caret": caret, "params": params}  # fmt: skip


def _python_error(error: BaseException, code: str) -> dict[str, Any]:
    """Where the code stopped (the innermost frame of the learner's code) and Python's words."""
    if isinstance(error, SyntaxError) and error.filename == CODE_FILE:
        # Python's words without its own snippet and caret (the error box has them).
        end = error.end_offset if error.end_lineno == error.lineno else None
        end = end if end and error.offset and end - error.offset <= 1 else None
        message = f"{type(error).__name__}: {error.msg}"
        return error_at(
            "PythonSyntaxError",
            message,
            code,
            error.lineno,
            error.offset,
            end or (error.offset + 1 if error.offset else None),
        )
    message = "".join(traceback.format_exception_only(type(error), error)).strip()
    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename == CODE_FILE]
    where = frames[-1] if frames else None
    line = where.lineno if where else None
    column = (where.colno + 1) if where and where.colno is not None else None
    end = (where.end_colno + 1) if where and where.end_colno is not None else None
    if where and where.end_lineno != where.lineno:
        end = None
    if isinstance(error, Unavailable):
        return error_at("Unavailable", message, code, line, column, end, module=error.module)
    if isinstance(error, TypeError) and (fix := reflected_fix(message)) is not None:
        # `sum(values)` starts from 0: `0 + Value` needs the class's __radd__ (or __rsub__ …).
        return error_at("MissingReflected", message, code, line, column, end, **fix)
    return error_at("PythonError", message, code, line, column, end, name=type(error).__name__)


@dataclass
class Choice:
    """The Value shown as the graph, and why: "backward" (backward() was last called on it),
    "draw_dot" (the last draw_dot argument), "last" (the last line's value), "picked"."""

    value: Any
    kind: str
    line: int | None = None


@dataclass
class Session:
    """One learner's namespace in the sandbox: `run` replaces it, `pick` reads another of its
    Values."""

    report_line: Callable[[int], Any] | None = None
    # Called when the learner's code has run and its graph is being read (the page's time limit
    # for the code ends there, and the reading's starts: static/js/sandbox/sandbox.js).
    report_ran: Callable[[], Any] | None = None
    max_nodes: int = MAX_NODES
    max_value_nodes: int = MAX_VALUE_NODES
    max_depth: int = MAX_DEPTH
    lang: str = DEFAULT_LANG  # the page's: the reader's warnings are said in it
    namespace: dict[str, Any] = field(default_factory=dict)
    watch: Watch | None = None
    code: str = ""

    def run(self, code: str) -> dict[str, Any]:
        """Run `code` in a fresh namespace and read its graph (module docstring)."""
        self.code = code
        runnable, notes = without_magics(code)
        self.namespace = namespace = self._fresh_namespace()
        self.watch = watch = Watch(self.report_line, self.max_value_nodes)
        output = _Tail()
        last: Any = None
        try:
            body, tail, tail_line = _compiled(runnable)
            with redirect_stdout(output), redirect_stderr(output), watch.running(body):
                exec(body, namespace)  # noqa: S102 - the learner's code, in their browser
                if tail is not None:
                    last = eval(tail, namespace)  # noqa: S307 - its last line's value
        except BaseException as error:  # noqa: BLE001 - any of the learner's errors is said (exit() too)
            return {"ok": False, "error": _python_error(error, code), "output": output.tail(),
                    "notes": notes}  # fmt: skip
        self._ran()
        choice = self._choose(last, tail_line)
        if choice is None:
            return {"ok": False, "output": output.tail(), "notes": notes,
                    "error": error_at("NoValue", "", code, None)}  # fmt: skip
        result = self._read(choice)
        return {**result, "output": output.tail(), "notes": notes}

    def pick(self, name: str) -> dict[str, Any]:
        """The graph of the Value variable `name` holds, in the namespace of the last run."""
        self._ran()
        value = self.namespace.get(name)
        if not is_value(value):
            return {"ok": False, "error": error_at("NoValue", "", self.code, None, name=name)}
        return self._read(Choice(value, "picked"))

    def _ran(self) -> None:
        if self.report_ran is not None:
            self.report_ran()

    def _fresh_namespace(self) -> dict[str, Any]:
        stubs = stub_modules()
        builtins_ = dict(__builtins__ if isinstance(__builtins__, dict) else vars(__builtins__))
        builtins_["__import__"] = sandbox_import(stubs)
        # A lecture cell calls draw_dot(o) where chainrule draws: without its own draw_dot, this
        # one (which draws nothing) stands in, and its argument is watched like any other's.
        return {"__name__": "__main__", "__builtins__": builtins_, "draw_dot": draw_dot}

    def _choose(self, last: Any, last_line: int | None) -> Choice | None:
        watch = self.watch
        if watch and watch.backward is not None:
            return Choice(watch.backward.root, "backward", watch.backward.line)
        if watch and watch.drawn is not None:
            return Choice(watch.drawn, "draw_dot")
        if is_value(last):
            return Choice(last, "last", last_line)
        return None

    def _names(self) -> dict[int, str]:
        """{id(value): variable} for every variable holding a Value (the first one named)."""
        names: dict[int, str] = {}
        for name, value in self.namespace.items():
            if not name.startswith("_") and is_value(value):
                names.setdefault(id(value), name)
        return names

    def _places(self) -> dict[int, str]:
        """{id(value): where it lives} for every Value the namespace reaches (value_reader's
        places_in), a loop's variable naming nothing."""
        return places_in(self.namespace, exclude=loop_targets(without_magics(self.code)[0]))

    def _read(self, choice: Choice) -> dict[str, Any]:
        backward = self.watch.backward if self.watch else None
        # A class that keeps no number `grad` has none to check.
        checked = (
            backward is not None
            and choice.value is backward.root
            and isinstance(getattr(choice.value, "grad", None), (int, float))
        )
        names = self._names()
        places = self._places()
        try:
            with _data_at(backward.before if checked else {}, choice.value):
                program = program_of(choice.value, names=places, max_nodes=self.max_value_nodes)
                nodes = _node_facts(program, backward if checked else None)
                stale = _backward_facts(backward, program)["stale"] if checked else []
                check = (
                    _json_ready(Check(program, self.code, stale, backward.line).facts())
                    if checked
                    else None
                )
        except TooManyNodes:
            return {"ok": False, "error": error_at("TooManyNodes", "", self.code, choice.line,
                                                   limit=self.max_value_nodes)}  # fmt: skip
        except NotAValue as error:
            return {"ok": False, "error": error_at("NotAGraph", render(error.message, self.lang),
                                                   self.code, None)}  # fmt: skip
        except NotAGraph as error:
            kind = "UnknownOp" if error.op is not None else "NotAGraph"
            return {"ok": False, "error": error_at(kind, render(error.message, self.lang),
                                                   self.code, choice.line, op=error.op,
                                                   ops=KNOWN_OPS)}  # fmt: skip
        trace = None
        if len(program.objects) > self.max_nodes:  # more than the server takes: traced here
            try:
                trace = self._traced_here(program.source)
            except ProgramError as error:
                return {"ok": False, "error": error_at(error.type, render(error.message, self.lang),
                                                       self.code, choice.line)}  # fmt: skip
        return {
            "ok": True,
            "program": {
                "source": program.source,
                "values": {name: json_number(v) for name, v in program.values.items()},
                "leaves": program.leaves,
                "root": program.root,
                "warnings": warnings_in(program.warnings(), self.lang),
            },
            "choice": {
                "kind": choice.kind,
                "line": choice.line,
                "name": names.get(id(choice.value)),
            },  # fmt: skip
            "choices": [
                {"name": name, "data": json_number(value.data)}
                for name, value in self.namespace.items()
                if not name.startswith("_") and is_value(value)
            ],
            "nodes": nodes,
            "backward": _backward_facts(backward, program) if checked else None,
            "check": check if checked else None,
            # The Value backward() was last called on, by name, when the graph is another one.
            "backward_root": (
                names.get(id(backward.root))
                if backward and choice.value is not backward.root
                else None
            ),
            # The reply of `POST /api/graph` for the program, when the server would refuse it.
            "trace": trace,
        }

    def _traced_here(self, source: str) -> dict[str, Any]:
        """The reply for the reader's `source` made here (chainrule/sandbox/local_trace.py),
        under the limits of a graph read from a Value (raises ProgramError)."""
        # The engine's whole trace and the layout: imported only for such a graph (a cold start
        # imports the reader alone).
        from chainrule.sandbox.local_trace import traced_here

        limits = Limits(max_nodes=self.max_value_nodes, max_depth=self.max_depth)
        return traced_here(source, limits, self.lang)


def _json_ready(facts: Any) -> Any:
    """`facts` with every float as the API writes it (json_number)."""
    if isinstance(facts, dict):
        return {key: _json_ready(value) for key, value in facts.items()}
    if isinstance(facts, list):
        return [_json_ready(value) for value in facts]
    if isinstance(facts, float):
        return json_number(facts)
    return facts


def as_json(result: dict[str, Any]) -> str:
    """A result as the worker posts it (every number in it is finite or a string already)."""
    return json.dumps(result, allow_nan=False)


def draw_dot(root: Any, *args: Any, **kwargs: Any) -> Any:
    """The sandbox's stand-in for a lecture's `draw_dot`: chainrule draws the graph."""
    return _Nothing()


def _compiled(code: str) -> tuple[Any, Any, int | None]:
    """`code` compiled as a cell: its statements, and its last line's expression apart (or
    None) with its line, so that its value is kept, as a notebook shows it."""
    tree = ast.parse(code, CODE_FILE, "exec")
    if not tree.body or not isinstance(tree.body[-1], ast.Expr):
        return compile(tree, CODE_FILE, "exec"), None, None
    last = tree.body.pop()
    tail = compile(ast.Expression(last.value), CODE_FILE, "eval")
    return compile(tree, CODE_FILE, "exec"), tail, last.lineno


class _data_at:  # noqa: N801 - used as a `with` statement, like contextlib's helpers
    """Within it, every leaf under `root` holds the data it had when `backward()` began (a
    training loop's update moves them afterwards); restored on the way out."""

    def __init__(self, before: dict[int, tuple[float, float]], root: Any) -> None:
        self.before, self.root, self.moved = before, root, []

    def __enter__(self) -> None:
        if not self.before:
            return
        for node in nodes_under(self.root):
            was = self.before.get(id(node))
            if was is not None and not children_of(node) and as_float(node.data) != was[0]:
                self.moved.append((node, node.data))
                node.data = was[0]

    def __exit__(self, *exc: Any) -> None:
        for node, data in self.moved:
            node.data = data


def _default_backward(program: Any) -> Any:
    """The code of the `_backward` a leaf of this graph has: an op with the same never set its
    own (the lecture's `lambda: None`)."""
    for node, inputs in zip(program.objects, program.inputs, strict=True):
        code = getattr(getattr(node, "_backward", None), "__code__", None)
        if not inputs and code is not None:
            return code
    return None


def _node_facts(program: Any, backward: BackwardCall | None) -> list[dict[str, Any]]:
    """Per node of the program, in the reader's order: how it is written (its first
    characters: a running sum's text grows with its terms, and a reply must stay linear in the
    nodes), its operands, its own data and grad (the code's), and whether its `_backward` was
    never set."""
    default = _default_backward(program)
    facts = []
    for node, text, inputs in zip(program.objects, program.texts, program.inputs, strict=True):
        backward_code = getattr(getattr(node, "_backward", None), "__code__", None)
        facts.append({
            "text": quoted(text),
            "label": str(getattr(node, "label", "") or ""),
            "op": str(getattr(node, "_op", getattr(node, "op", "")) or ""),
            "inputs": inputs,
            "data": json_number(node.data),
            "grad": json_number(getattr(node, "grad", None)) if backward else None,
            "no_backward": bool(inputs) and default is not None and backward_code is default,
        })  # fmt: skip
    return facts


def _backward_facts(backward: BackwardCall, program: Any) -> dict[str, Any]:
    """The last backward() call: its line, and the nodes (indices, not the root) that already
    held a gradient when it began: gradients not reset since an earlier backward()."""
    root = len(program.objects) - 1
    stale = []
    for i, node in enumerate(program.objects):
        grad = backward.before.get(id(node), (0.0, 0.0))[1]
        if i != root and grad != 0.0:  # a NaN is no reset either
            stale.append(i)
    return {"line": backward.line, "stale": stale, "calls": backward.calls}
