"""The Python API's traces: the `POST /api/graph` reply built in this process (the same trace,
layout and encoding as the server's), for a program or for a graph of Values."""

from __future__ import annotations

import ast
import inspect
import linecache
import os
import sys
import textwrap
from collections.abc import Generator, Iterator, Mapping
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from types import FrameType
from typing import Any

from chainrule.app.api.graph_body import build_reply, finished, limits_of, reply_stages
from chainrule.app.api.schemas import GraphRequest
from chainrule.app.layout.layouter import Layouter
from chainrule.app.layout.process import LayoutProcess
from chainrule.app.settings import get_settings
from chainrule.engine import Limits
from chainrule.engine.errors import BadLeaf, BadValue, ProgramError, quoted
from chainrule.engine.i18n import DEFAULT_LANG, check_lang, msg, warnings_in
from chainrule.engine.reply import first_view_reply
from chainrule.engine.tensor_graph import tensor_graph
from chainrule.engine.tensor_program import trace_tensors
from chainrule.engine.tensor_reader import is_tensor_program
from chainrule.engine.tensor_reply import fan_in_reply, tensor_reply
from chainrule.engine.tracing import written_parse
from chainrule.engine.value_reader import (
    NotAValue,
    Program,
    loop_targets,
    places_in,
    program_of,
)


@cache
def _layouter() -> Layouter:
    """The layouts of this process's traces: a big graph's in a helper process, beside the
    passes (app/layout/process.py)."""
    settings = get_settings()
    layouter = Layouter.from_settings(settings)
    layouter.process = LayoutProcess(settings, settings.layout_process_min_nodes)
    return layouter


def value_limits() -> Limits:
    """The limits of a graph read from a Value in the learner's own kernel: the program the
    reader wrote for it is no program the server parses, so no character count (the demo's
    65,818 nodes are written in 2,158,452 characters); its nodes are bounded
    (`max_value_nodes`), its nesting as any program's (the reader nests little)."""
    settings = get_settings()
    return Limits(
        max_source_chars=None, max_nodes=settings.max_value_nodes, max_depth=settings.max_depth
    )


def program_text(source: Any) -> Any:
    """A program given as a file's path (`chainrule.trace(Path("neuron.py"))`: a pathlib.Path, any
    os.PathLike) as the text the file holds; anything else as it is."""
    if isinstance(source, os.PathLike):
        return Path(source).read_text(encoding="utf-8")
    return source


def names_a_file(source: str) -> bool:
    """Whether a program's text is a file's path by all signs: one line, and a file by that name
    (`chainrule render neuron.py`, `chainrule.trace("neuron.py")`)."""
    try:
        return "\n" not in source and Path(source).is_file()
    except (OSError, ValueError):  # a name too long for a path, or holding a NUL: a program
        return False


@contextmanager
def said_of_a_file(source: Any) -> Iterator[None]:
    """A ProgramError of a program whose text names a file (`chainrule.trace("neuron.py")`) with
    a note saying how to read the file instead."""
    try:
        yield
    except ProgramError as error:
        if isinstance(source, str) and names_a_file(source):
            error.add_note(
                f"{source!r} names a file, read here as a program's text: "
                f"pass pathlib.Path({source!r}) to read the program it holds"
            )
        raise


def traced(
    source: str,
    values: dict[str, float] | None = None,
    *,
    expand_derived: bool = False,
    lang: str = DEFAULT_LANG,
    limits: Limits | None = None,
    checked: bool = True,
) -> dict[str, Any]:
    """The `/api/graph` reply for `source` under the server's limits (or `limits`), its words
    (narration, warnings) in `lang` (raises ProgramError); its size checked, unless the caller
    checks the bytes it encodes (not `checked`: the widget's `packed_trace`)."""
    if not isinstance(source, str):
        kind = type(source).__name__
        raise TypeError(f"expected a program (str) or a file's path (pathlib.Path); got {kind}")
    request = GraphRequest(
        source=source,
        values=leaf_values(values),
        expand_derived=expand_derived,
    )
    settings, lang = get_settings(), check_lang(lang)
    return build_reply(request, settings, _layouter(), lang, limits, checked=checked)


def leaf_values(values: Mapping[str, Any] | None) -> dict[str, float] | None:
    """The leaf values a caller gave (`values={"a": 2}`, numpy's numbers too) as floats, None
    for none; BadValue, as the API says it, for one that is no number (`{"a": "x"}`)."""
    if not values:
        return None
    numbers: dict[str, float] = {}
    for name, value in values.items():
        try:
            numbers[name] = float(value)
        except (TypeError, ValueError):
            said = msg("error.value_not_number", name=quoted(str(name)), type=type(value).__name__)
            raise BadValue(said) from None
    return numbers


def with_program(
    trace: dict[str, Any], program: Program, lang: str = DEFAULT_LANG
) -> dict[str, Any]:
    """`trace` of `program` with the reader's warnings on the program (merged operands, opaque
    nodes, a stale graph), said in `lang` as the trace's own are, and its `program`."""
    # Every line the reader writes is meant: a `skipped` note on its program is about a label
    # line (`t1.label = 'x1*w1'`) that a parser which does not read labels passes over.
    kept = [warning for warning in trace["warnings"] if warning["type"] != "skipped"]
    trace["warnings"] = [*warnings_in(program.warnings(), lang), *kept]
    trace["program"] = {"source": program.source, "leaves": program.leaves, "root": program.root}
    return trace


def fanned_in(
    source: str, values: dict[str, float] | None, tensor: str, index: list[int]
) -> dict[str, Any]:
    """`POST /api/fan-in`'s reply for element `index` of `tensor` (an id, `t1`, or a name) of a
    tensor program, under the server's limits: every term of the backward pass that adds to its
    gradient (docs/api.md). Raises ProgramError (BadLeaf for a scalar program, or an element
    that is not there)."""
    settings = get_settings()
    if not is_tensor_program(source):
        raise BadLeaf(msg("error.tensor.fan_in_scalar"))
    trace = trace_tensors(source, values, limits=limits_of(settings))
    return fan_in_reply(trace, tensor, index)


def _caller() -> FrameType | None:
    """The frame of the code that called chainrule (a notebook cell, a script, a function): the
    first on the stack outside chainrule's own modules."""
    frame = sys._getframe(1)
    while frame is not None and str(frame.f_globals.get("__name__", "")).startswith("chainrule"):
        frame = frame.f_back
    return frame


def _code_of(frame: FrameType, namespace: Mapping[str, Any]) -> str:
    """The source the caller ran, for its loop variables: every cell of an IPython session
    (`_ih`), else the function or module the frame runs ('' when it has none on disk)."""
    cells = namespace.get("_ih")
    if isinstance(cells, list) and all(isinstance(cell, str) for cell in cells):
        return "\n".join(cells)
    code = frame.f_code
    if code.co_name == "<module>":
        return "".join(linecache.getlines(code.co_filename, frame.f_globals))
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(code)))
    except (OSError, TypeError, SyntaxError):
        return ""
    # A function's own statements: its loops bind the variables the frame holds.
    body = tree.body[0].body if len(tree.body) == 1 and hasattr(tree.body[0], "body") else []
    return ast.unparse(ast.Module(body=body, type_ignores=[]))


def caller_places() -> dict[int, str]:
    """{id(value): where it lives} for the Values the caller's variables reach (its locals, then
    its globals: a notebook's namespace), named as the sandbox names them (`places_in`): by a
    variable, else by the place inside a list or an object (`n.layers[0].neurons[1].w[0]`), a
    loop's variable naming nothing. The caller's code decides, so it gives the same names on
    every run."""
    frame = _caller()
    if frame is None:
        return {}
    local, global_ = frame.f_locals, frame.f_globals
    namespace = {**local, **{k: v for k, v in global_.items() if k not in local}}
    try:
        return places_in(namespace, exclude=loop_targets(_code_of(frame, namespace)))
    finally:
        del frame, local, global_, namespace


def traced_value(
    value: Any,
    *,
    expand_derived: bool = False,
    names: Mapping[int, str] | None = None,
    lang: str = DEFAULT_LANG,
) -> dict[str, Any]:
    """`traced` of the program that builds the graph ending in `value`, its nodes named by
    `names` (`caller_places()` by default), under `value_limits` (more than `max_value_nodes`
    nodes: TooManyNodes, before any program is written), its words in `lang`. The reply stays
    Python objects in the caller's process, so it is never encoded to check its size (micrograd's
    demo: 0.09 s); whatever sends it on checks the bytes it sends (`show`'s widget, `save_html`)."""
    limits = value_limits()
    names = caller_places() if names is None else names
    program = program_of(value, names=names, max_nodes=limits.max_nodes, statements=True)
    _layouter().expect(len(program.objects))
    with written_parse(program.source, program.parsed):
        trace = traced(
            program.source, expand_derived=expand_derived, lang=lang, limits=limits, checked=False
        )
    return with_program(trace, program, lang)


def value_trace_stages(
    program: Program, lang: str = DEFAULT_LANG
) -> Generator[dict[str, Any] | None, None, dict[str, Any]]:
    """The trace of `program` (a graph read from a Value, under `value_limits`) in two stages:
    it yields the first view of its overview once its passes have run (engine/reply.py
    `first_view_reply`; None for a graph without an overview), and returns the whole trace
    with its program (`with_program`) when resumed (graph_body.py `finished`). Its size is
    not checked: the widget checks the bytes it sends (`packed_trace`)."""
    request = GraphRequest(source=program.source)
    settings, lang = get_settings(), check_lang(lang)
    stages = reply_stages(request, settings, _layouter(), lang, value_limits(), checked=False)
    with written_parse(program.source, program.parsed):
        trace, parts = next(stages)
    yield first_view_reply(trace, parts)  # (not held here while the rest is made)
    del trace, parts  # the stages hold them while they are needed
    return with_program(finished(stages), program, lang)


def source_of(value_or_source: Any) -> tuple[str, Program | None]:
    """A program text and, for a graph of Values, the Program it was written as: a TypeError
    for what is neither, the reader's ValueError (NotAGraph: an unknown op, a cycle…) for a
    graph no program can say."""
    if isinstance(value_or_source, str):
        return value_or_source, None
    try:
        program = program_of(
            value_or_source,
            names=caller_places(),
            max_nodes=value_limits().max_nodes,
            statements=True,
        )
    except NotAValue as error:
        raise TypeError(f"expected a program (str) or a Value; {error}") from None
    _layouter().expect(len(program.objects))
    return program.source, program


def trace_of(
    value_or_source: Any, values: dict[str, float] | None = None, lang: str = DEFAULT_LANG
) -> dict[str, Any]:
    """The trace of a program text or of a graph of Values (with `values` for its leaves), its
    words in `lang`."""
    source, program = source_of(value_or_source)
    if program is None:
        return traced(source, values, lang=lang)
    with written_parse(source, program.parsed):
        trace = traced(source, values, lang=lang, limits=value_limits())
    return with_program(trace, program, lang)


def save_html(
    value_or_source: Any,
    path: str | Path,
    values: dict[str, float] | None = None,
    lang: str = DEFAULT_LANG,
) -> Path:
    """Write the one-file interactive HTML of a program (a tensor program too) or a graph of
    Values to `path`, its words in `lang`."""
    from chainrule.app.export.onefile import build_html

    path = Path(path)
    if isinstance(value_or_source, str) and is_tensor_program(value_or_source):
        # A tensor program's file carries its scalar graph: its cells' drags recompute offline.
        tensors = trace_tensors(value_or_source, values)
        html = build_html(
            tensor_reply(tensors, lang), title=path.stem, lang=lang, graph=tensor_graph(tensors)
        )
    else:
        html = build_html(trace_of(value_or_source, values, lang), title=path.stem, lang=lang)
    path.write_text(html, encoding="utf-8")
    return path
