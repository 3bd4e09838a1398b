"""The page's generated module (static/js/compute/op-functions.js, written by `make bundle`):
the op table's formulas as JavaScript (ops.py `javascript_module`) and the engine's constants the
page computes with. Its own module, so that the sandbox's reader (which imports ops.py) does not
carry the modules the constants come from."""

from __future__ import annotations

import json
from dataclasses import fields

from . import errors, flags, gradcheck
from .descend import MAX_STEPS
from .ops import SCRIPT_NAMES, javascript_module
from .options import Options
from .tensor_graph import CONSTANT, LEAF
from .tensor_reader import TENSOR_PROGRAM_PATTERN


def request_options() -> dict[str, object]:
    """Every option of `POST /api/graph` by its name in a request body, with its default: what
    the page's request table (static/js/core/request.js) is checked against and starts from."""
    return {field.name.rstrip("_"): field.default for field in fields(Options)}


def page_constants() -> dict[str, object]:
    """The engine's constants the page computes with, by the name the generated module exports
    them under: the gradient check's bounds and rounding, the flags' thresholds, descent's
    steps a reply may hold, how long a quoted name may be, every name a micrograd script of
    ours defines (the sandbox reads such a script as data), and the request's options with their
    defaults, and what makes a program a tensor program (its lists are data: the sandbox leaves
    it to the server). Said here once, generated into the
    page's module, never copied by hand."""
    return {
        "GRADCHECK_MAX_LEAVES": gradcheck.MAX_LEAVES,
        "GRADCHECK_MAX_NODES": gradcheck.MAX_NODES,
        "GRADCHECK_EPS_RULE": gradcheck.EPS_RULE,
        "GRADCHECK_ROUNDING": gradcheck.ROUNDING_OPS * gradcheck.UNIT_ROUNDOFF,
        "FLAG_VANISHING": flags.VANISHING,
        "FLAG_EXPLODING": flags.EXPLODING,
        "FLAG_SATURATED": flags.SATURATED,
        "DESCENT_MAX_STEPS": MAX_STEPS,
        "QUOTE_MAX": errors.QUOTE_MAX,
        "SCRIPT_NAMES": list(SCRIPT_NAMES),
        "REQUEST_OPTIONS": request_options(),
        "TENSOR_PROGRAM": TENSOR_PROGRAM_PATTERN,
        "TENSOR_GRAPH_LEAF": LEAF,
        "TENSOR_GRAPH_CONSTANT": CONSTANT,
    }


def page_module() -> str:
    """The whole generated module: the table's functions, then the constants."""
    constants = [
        f"export const {name} = {json.dumps(value, ensure_ascii=False)};"
        for name, value in page_constants().items()
    ]
    return "\n".join(
        [
            javascript_module().rstrip("\n"),
            "// The engine's constants the page computes with (engine/page_module.py).",
            *constants,
            "",
        ]
    )
