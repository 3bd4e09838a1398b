"""The Python API's traces: the `POST /api/graph` reply built in this process (the same trace,
layout and encoding as the server's), for a program or for a graph of Values."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import orjson

from chainrule.app.api.graph_body import build_body
from chainrule.app.api.schemas import GraphRequest
from chainrule.app.layout.layouter import Layouter
from chainrule.app.settings import get_settings
from chainrule.engine.i18n import DEFAULT_LANG, check_lang
from chainrule.engine.value_reader import NotAValue, Program, program_of


@cache
def _layouter() -> Layouter:
    return Layouter.from_settings(get_settings())


def traced(
    source: str,
    values: dict[str, float] | None = None,
    *,
    expand_derived: bool = False,
    lang: str = DEFAULT_LANG,
) -> dict[str, Any]:
    """The `/api/graph` reply for `source` under the server's limits, its words (narration,
    warnings) in `lang` (raises ProgramError)."""
    request = GraphRequest(
        source=source,
        values={name: float(v) for name, v in values.items()} if values else None,
        expand_derived=expand_derived,
    )
    return orjson.loads(build_body(request, get_settings(), _layouter(), check_lang(lang)).now)


def with_program(trace: dict[str, Any], program: Program) -> dict[str, Any]:
    """`trace` of `program` with the program's merged-operand warnings and its `program`."""
    # Every line the reader writes is meant: a `skipped` note on its program is about a label
    # line (`t1.label = 'x1*w1'`) that a parser which does not read labels passes over.
    kept = [warning for warning in trace["warnings"] if warning["type"] != "skipped"]
    trace["warnings"] = [*program.warnings(), *kept]
    trace["program"] = {"source": program.source, "leaves": program.leaves, "root": program.root}
    return trace


def traced_value(value: Any, *, expand_derived: bool = False) -> dict[str, Any]:
    """`traced` of the program that builds the graph ending in `value`."""
    program = program_of(value)
    return with_program(traced(program.source, expand_derived=expand_derived), program)


def source_of(value_or_source: Any) -> tuple[str, Program | None]:
    """A program text and, for a graph of Values, the Program it was written as: a TypeError
    for what is neither, the reader's ValueError (NotAGraph: an unknown op, a cycle…) for a
    graph no program can say."""
    if isinstance(value_or_source, str):
        return value_or_source, None
    try:
        program = program_of(value_or_source)
    except NotAValue as error:
        raise TypeError(f"expected a program (str) or a Value; {error}") from None
    return program.source, program


def trace_of(
    value_or_source: Any, values: dict[str, float] | None = None, lang: str = DEFAULT_LANG
) -> dict[str, Any]:
    """The trace of a program text or of a graph of Values (with `values` for its leaves), its
    words in `lang`."""
    source, program = source_of(value_or_source)
    trace = traced(source, values, lang=lang)
    return with_program(trace, program) if program else trace


def save_html(
    value_or_source: Any,
    path: str | Path,
    values: dict[str, float] | None = None,
    lang: str = DEFAULT_LANG,
) -> Path:
    """Write the one-file interactive HTML of a program or a graph of Values to `path`, its
    words in `lang`."""
    from chainrule.app.export.onefile import build_html

    trace = trace_of(value_or_source, values, lang)
    path = Path(path)
    path.write_text(build_html(trace, title=path.stem, lang=lang), encoding="utf-8")
    return path
