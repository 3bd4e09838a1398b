"""The table of operations: everything chainrule knows about an op, in one row.

A primitive row says what the op computes and the local derivative of each input as formulas
(engine/formulas.py: `1 - out * out`); a derived row says how it is built from primitives, in
one line, as micrograd builds it (`a / b` is `a * b ** -1`), so its derivatives come from the
primitives' by the chain rule and no derivative is written twice. Then every spelling: the
program's (an operator with its precedence, or a function, also callable as a method), the
API's, narration's, the page's formula, local derivatives and glyph, micrograd's (the script's
expression, the `_op` its Value graphs carry), PyTorch's and the exported drawing's.

Everything that knows about ops reads this table: Value, the lexer's and the parser's names,
the builder's expansion of derived ops, narration, the gradient check, the API schema, the
export, the micrograd scripts (their helpers generated from the formulas) and the page (through
`page_table`, static/js/compute/ops.js). Adding an op is adding a row (docs/architecture.md).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import NamedTuple

from .formulas import (
    JAVASCRIPT_HELPERS,
    SCRIPT_HELPER_NAMES,
    Formula,
    a,
    b,
    compile_formula,
    compile_tuple,
    cos,
    equal,
    exp,
    folded,
    formula_of,
    helpers_used,
    is_one,
    javascript,
    javascript_exact,
    javascript_warning,
    javascript_warning_helpers,
    k,
    log,
    out,
    python,
    python_helpers,
    sin,
    substitute,
    tanh,
    warning_of,
    where,
)

OpResult = tuple[float, tuple[float, ...], str | None]
MINUS = "\u2212"  # the page's minus sign
CALL = 50  # the precedence of a call `f(x)` or a method call `x.f()`: tighter than any operator


class Op(NamedTuple):
    """One row of the table. Text columns are templates: `{0}`, `{1}` the inputs, `{k}` the
    constant exponent of `**k`, `{out}` the op's own result.

    What it computes: `forward` and `local_grads` (one per input), formulas of `a`, `b`, `k`,
    `out`, for a primitive; `expansion`, a formula of primitives, for a derived op.

    Spellings: `symbol` as a program writes it (an operator, or the function's name) with its
    `precedence` (CALL for a function) and associativity (`right`); `public` the op as the API
    names it (`**k` is `**` with `exponent` set); `shape` narration's formula; `formula`, `locals`
    and `glyph` the page's formula, local derivatives and card tag; `dot` the label of the
    exported drawing (micrograd's `draw_dot` writes `_op`); `micrograd` the expression in a
    micrograd script, calling `helper` (a function the script defines from the formulas:
    micrograd 0.1.0 has only `+ * ** relu - / neg`); `micrograd_ops` the `_op` a micrograd Value
    made by this op carries; `torch` PyTorch's spelling (a `torch.<name>({0})` call is also read in
    programs, as the lecture's PyTorch cell writes it); `dead_at_or_below` for an op that
    passes no gradient wherever its result is at or below that value (relu: a dead unit);
    `saturation` for an op with flat tails, a formula of `out` saying where the result is along
    its curve, −1 and 1 at the flat ends (tanh: `out`), which engine/flags.py flags past 0.999.

    `apply` is the engine's function, made from the formulas (`compile_row`)."""

    arity: int
    symbol: str
    precedence: int
    public: str
    shape: str
    formula: str
    locals: tuple[str, ...]
    glyph: str
    dot: str
    micrograd: str
    torch: str
    forward: Formula | None = None
    local_grads: tuple[Formula, ...] = ()
    expansion: Formula | None = None
    right: bool = False
    helper: str | None = None
    micrograd_ops: tuple[str, ...] = ()
    dead_at_or_below: float | None = None
    saturation: Formula | None = None
    apply: Callable[[Sequence[float], float], OpResult] | None = None

    @property
    def call(self) -> bool:
        """Whether programs call it as a function (`relu(x)`, or the method `x.relu()`)."""
        return self.precedence == CALL

    @property
    def derived(self) -> bool:
        """Whether it is built from primitives (`expand_derived` draws those instead)."""
        return self.expansion is not None


def function(
    name: str,
    forward: Formula,
    local_grad: Formula,
    local_text: str,
    *,
    glyph: str | None = None,
    micrograd: str | None = None,
    micrograd_ops: tuple[str, ...] | None = None,
    dead_at_or_below: float | None = None,
    saturation: Formula | None = None,
) -> Op:
    """A row for a function of one input, spelled `name(x)` everywhere unless told otherwise
    (a micrograd script calls the helper `name` it defines)."""
    called = f"{name}({{0}})"
    return Op(
        arity=1,
        symbol=name,
        precedence=CALL,
        public=name,
        shape=called,
        formula=called,
        locals=(local_text,),
        glyph=glyph or name,
        dot=name,
        micrograd=micrograd or called,
        torch=f"torch.{name}({{0}})",
        forward=forward,
        local_grads=(local_grad,),
        helper=None if micrograd else name,
        micrograd_ops=(name,) if micrograd_ops is None else micrograd_ops,
        dead_at_or_below=dead_at_or_below,
        saturation=saturation,
    )


def operator(
    symbol: str,
    precedence: int,
    local_texts: tuple[str, str],
    *,
    shape: str | None = None,
    formula: str | None = None,
    glyph: str | None = None,
    micrograd: str | None = None,
    forward: Formula | None = None,
    local_grads: tuple[Formula, ...] = (),
    expansion: Formula | None = None,
    right: bool = False,
    helper: str | None = None,
) -> Op:
    """A row for an infix operator `a <symbol> b`, written so everywhere unless told otherwise
    (narration's `shape`, the page's `formula` with its minus sign, the micrograd script, PyTorch,
    the drawing's label). A primitive gives its `forward` and `local_grads` (a micrograd Value
    made by it carries `_op` = the symbol); a derived one its `expansion`."""
    written = f"{{0}} {symbol} {{1}}"
    shape = shape or written
    return Op(
        arity=2,
        symbol=symbol,
        precedence=precedence,
        public=symbol,
        shape=shape,
        formula=formula or shape.replace("-", MINUS),
        locals=local_texts,
        glyph=glyph or symbol,
        dot=symbol,
        micrograd=micrograd or written,
        torch=written,
        forward=forward,
        local_grads=local_grads,
        expansion=expansion,
        right=right,
        helper=helper,
        micrograd_ops=() if expansion is not None else (symbol,),
    )


OPS: dict[str, Op] = {
    "+": operator("+", 10, ("1", "1"), forward=a + b, local_grads=(1.0, 1.0)),
    "*": operator(
        "*", 20, ("{1}", "{0}"), shape="{0}·{1}", glyph="×", forward=a * b, local_grads=(b, a)
    ),
    "**k": Op(
        arity=1,
        symbol="**",
        precedence=40,
        public="**",
        shape="{0}^{k}",
        formula="{0} ** {k}",
        locals=(f"{{k}}·{{0}}^({{k}} {MINUS} 1)",),
        glyph="**{k}",
        dot="**{k}",
        micrograd="{0} ** {k}",
        torch="{0} ** {k}",
        forward=a**k,
        local_grads=(where(equal(k, 0), 0, k * a ** (k - 1)),),
        right=True,
    ),
    "**": operator(
        "**",
        40,
        (f"{{1}}·{{0}}^({{1}} {MINUS} 1)", "{0}^{1}·ln {0}"),
        shape="{0}^{1}",
        formula="{0} ** {1}",
        micrograd="vpow({0}, {1})",
        forward=a**b,
        local_grads=(
            where(equal(b, 0), 0, b * a ** (b - 1)),
            # At a = 0 the result stays 0 (or 1 at b = 0) as b moves: PyTorch's convention.
            where(a > 0, out * log(a), where(equal(a, 0) & (b >= 0), 0, math.nan)),
        ),
        right=True,
        helper="vpow",
    ),
    "-": operator("-", 10, ("1", f"{MINUS}1"), glyph=MINUS, expansion=a + b * -1),
    "/": operator("/", 20, ("1/{1}", f"{MINUS}{{0}}/{{1}}²"), glyph="÷", expansion=a * b**-1),
    "neg": Op(
        arity=1,
        symbol="-",
        precedence=30,
        public="neg",
        shape="-{0}",
        formula=f"{MINUS}{{0}}",
        locals=(f"{MINUS}1",),
        glyph="neg",
        dot="neg",
        micrograd="-{0}",
        torch="-{0}",
        expansion=a * -1,
    ),
    "relu": function(
        "relu",
        where(a <= 0, 0, a),
        where(a > 0, 1, 0),
        "1 if {0} > 0 else 0",
        micrograd="{0}.relu()",
        micrograd_ops=("ReLU", "relu"),
        dead_at_or_below=0.0,
    ),
    "tanh": function("tanh", tanh(a), 1 - out * out, f"1 {MINUS} {{out}}²", saturation=out),
    "exp": function("exp", exp(a), out, "e^{0}"),
    "log": function("log", log(a), 1 / a, "1/{0}"),
    # Either branch keeps exp from overflowing.
    "sigmoid": function(
        "sigmoid",
        where(a >= 0, 1 / (1 + exp(-a)), exp(a) / (1 + exp(a))),
        out * (1 - out),
        f"{{out}}·(1 {MINUS} {{out}})",
        glyph="σ",
        saturation=2 * out - 1,
    ),
    "sin": function("sin", sin(a), cos(a), "cos({0})"),
    # An element passed on unchanged, as its own node: what a tensor op that only moves elements
    # makes (a view, a transpose, the rows `C[X]` picks, the element `max` chooses), so that each
    # tensor keeps its own gradient (engine/tensors.py). Programs cannot call it.
    "copy": Op(
        arity=1,
        symbol="copy",
        precedence=0,
        public="copy",
        shape="{0}",
        formula="{0}",
        locals=("1",),
        glyph="=",
        dot="copy",
        micrograd="{0}",
        torch="{0}",
        forward=a,
        local_grads=(1.0,),
    ),
}


# ---- Derived rows: their formulas from the primitives', by the chain rule -----------------


def expansion_step(node: Formula) -> tuple[str, tuple[Formula, ...], float]:
    """The op of one call of a derived row's expansion, its operands and constant exponent:
    `x + y` is `+`, `x * y` is `*`, `x ** -1` (a number) is `**k` with k = −1."""
    if node.head == "pow" and node.args[1].head == "num":
        return "**k", node.args[:1], node.args[1].value  # type: ignore[return-value]
    return {"add": "+", "mul": "*", "pow": "**"}[node.head], node.args, 0.0


def forward_of(node: Formula) -> Formula:
    """What an expansion computes, in primitives: each op's forward of its operands'."""
    if node.head in ("var", "num"):
        return node
    key, operands, exponent = expansion_step(node)
    return substitute(OPS[key].forward, _arguments(operands, exponent))  # type: ignore[arg-type]


def derivative_of(node: Formula, x: str) -> Formula | None:
    """∂node/∂x by the chain rule: each operand's local derivative (its op's row) times the
    operand's own derivative, summed over the operands that depend on x; None if none does."""
    if node.head in ("var", "num"):
        return formula_of(1.0) if node.head == "var" and node.value == x else None
    key, operands, exponent = expansion_step(node)
    row = OPS[key]
    values = {**_arguments(operands, exponent), "out": forward_of(node)}
    total = None
    for local, operand in zip(row.local_grads, operands, strict=True):
        inner = derivative_of(operand, x)
        if inner is not None:
            term = substitute(formula_of(local), values)
            term = inner if is_one(term) else term if is_one(inner) else term * inner
            total = term if total is None else total + term
    return total


def _arguments(operands: Sequence[Formula], exponent: float) -> dict[str, Formula]:
    values = {name: forward_of(operand) for name, operand in zip("ab", operands, strict=False)}
    return {**values, "k": formula_of(exponent)}


def derive(row: Op) -> Op:
    """A derived row with its forward and local derivatives worked out from its expansion."""
    inputs = ("a", "b")[: row.arity]
    local_grads = tuple(derivative_of(row.expansion, x) or formula_of(0.0) for x in inputs)  # type: ignore[arg-type]
    forward = forward_of(row.expansion)  # type: ignore[arg-type]
    return row._replace(forward=folded(forward), local_grads=tuple(map(folded, local_grads)))


# ---- The engine's functions, made from the formulas ---------------------------------------


def compile_row(row: Op) -> Callable[[Sequence[float], float], OpResult]:
    """`apply` of `row`: `(input data, constant exponent) → (data, local grads, warning)`,
    the warning from the primitive that failed (a non-finite result only)."""
    forward = row.forward
    value_of = compile_formula(forward)  # type: ignore[arg-type]
    local_grads_of = compile_tuple(row.local_grads)

    def apply(data: Sequence[float], exponent: float) -> OpResult:
        values = (data[0], data[1] if len(data) > 1 else 0.0, exponent, 0.0)
        result = value_of(values)
        values = (values[0], values[1], exponent, result)
        if result - result == 0:  # finite: no warning to look for
            return result, local_grads_of(values), None
        return result, local_grads_of(values), warning_of(forward, values)  # type: ignore[arg-type]

    return apply


for _key, _row in OPS.items():
    _row = derive(_row) if _row.derived else _row
    OPS[_key] = _row._replace(apply=compile_row(_row))

# The functions a program may call, in the table's order (the parser's allow-list).
FUNCTIONS = tuple(name for name, op in OPS.items() if op.call)
# The functions a program may also call as PyTorch spells them (`torch.tanh(x)`), by that
# spelling: the table's `torch` column where it is a call of the one input.
TORCH_FUNCTIONS = {
    op.torch[: -len("({0})")]: name
    for name, op in OPS.items()
    if op.call and op.torch.startswith("torch.") and op.torch.endswith("({0})")
}
DERIVED = frozenset(name for name, op in OPS.items() if op.derived)
# The ops a program writes with an operator between two operands (`a ** b` and `a ** 2` alike):
# symbol → (precedence, right-associative).
BINARY = {
    op.symbol: (op.precedence, op.right) for op in OPS.values() if op.arity == 2 and not op.call
}
NEGATION = OPS["neg"].precedence
# The ops whose local derivative closes (is 0) on part of their inputs: a relu at or below 0,
# a tanh or sigmoid whose flat tail rounded it to 0 (engine/flags.py: gradients that die there).
GATES = frozenset(
    name for name, op in OPS.items() if op.dead_at_or_below is not None or op.saturation
)
# Where a saturating op's result is along its curve, by op: a function of (a, b, k, out).
SATURATION = {name: compile_formula(op.saturation) for name, op in OPS.items() if op.saturation}
# Each op's forward alone, a function of (a, b, k, out): a node's data without its local
# derivatives (the reader's test of a graph's stored data, engine/value_reader.py).
FORWARD = {name: compile_formula(op.forward) for name, op in OPS.items()}  # type: ignore[arg-type]
# micrograd's `_op` spellings → our op (`**2.0` and other constant powers are `**k`).
MICROGRAD_OPS = {spelled: name for name, op in OPS.items() for spelled in op.micrograd_ops}


def key_of(public: str, exponent: object = None) -> str:
    """The table's key for an op as the API writes it (`**` with an exponent is `**k`)."""
    return "**k" if public == "**" and exponent is not None else public


# key_of for a node of a reply, in the page's module (a null or absent exponent is none).
JAVASCRIPT_KEY_OF = (
    "/** The table's key of a node of a reply: its op, or `**k` for `**` with a constant"
    " exponent. */\nexport const opKey = (node) =>"
    ' (node.op === "**" && node.exponent !== null && node.exponent !== undefined'
    ' ? "**k" : node.op);'
)


def row_of(node: object) -> Op:
    """The row of a node's op: the table's, or the row of the function the program defines
    that the node calls (engine/functions.py)."""
    function = node.function  # type: ignore[attr-defined]
    return OPS[node.op] if function is None else function.row  # type: ignore[attr-defined]


def public_op(op: str | None) -> str | None:
    """The op as the API names it (`**k` is `**` with `exponent` set); None for no op."""
    return None if op is None else OPS[op].public


def apply(op: str, data: Sequence[float], exponent: float = 0.0) -> OpResult:
    """(data, local_grads, warning) of `op` on input data; warning is domain, overflow,
    division_by_zero or None. Results that turn finite inputs into inf/nan always warn."""
    result, local_grads, warning = OPS[op].apply(data, exponent)  # type: ignore[misc]
    if warning is None and result - result != 0:
        if all(d - d == 0 for d in data):
            warning = "domain" if result != result else "overflow"
    return result, local_grads, warning


# ---- The micrograd script's helpers, from the formulas -------------------------------------


def script_helper(name: str) -> list[str]:
    """The Python lines of the function a micrograd script defines for op `name` (whose
    `helper` it is): its forward and its `_backward` from the row's own formulas, in
    micrograd's style (a closure over `out`); the `_name` helpers it calls are
    `script_prelude`'s."""
    row = OPS[name]
    inputs = ("a", "b")[: row.arity]
    names = {x: f"{x}.data" for x in (*inputs, "out")}
    data = python(row.forward, names)  # type: ignore[arg-type]
    children = f"({inputs[0]},)" if row.arity == 1 else "(a, b)"
    lines = [
        f"def {row.helper}({', '.join(inputs)}):",
        f"    out = Value({data}, {children}, {row.micrograd_ops[0]!r})",
        "",
        "    def _backward():",
    ]
    for x, local in zip(inputs, row.local_grads, strict=True):
        local_grad = python(formula_of(local), names, operand_of="mul")
        lines.append(f"        {x}.grad += {local_grad} * out.grad")
    return [*lines, "", "    out._backward = _backward", "    return out", ""]


def script_prelude(name: str) -> dict[str, list[str]]:
    """The IEEE helpers (`_pow`, `_log`, …) that op `name`'s script helper calls: the Python
    lines defining each, by name (a script defines each once)."""
    row = OPS[name]
    used: set[str] = set()
    for formula in (row.forward, *row.local_grads):
        used |= helpers_used(formula_of(formula))  # type: ignore[arg-type]
    return {helper: python_helpers({helper}) for helper in sorted(used)}


# Every name a micrograd script defines besides its variables: the ops' helpers and theirs.
SCRIPT_NAMES = (*(op.helper for op in OPS.values() if op.helper), *SCRIPT_HELPER_NAMES)


def page_table() -> dict[str, dict[str, object]]:
    """The columns of the table the page reads (embedded in the page as JSON), by op key:
    spellings, and the micrograd script's helper (`script`: its Python lines, `prelude`: the
    IEEE helpers it calls, by name, each defined once in `preludes`)."""
    return {
        name: {
            "arity": op.arity,
            "public": op.public,
            "glyph": op.glyph,
            "formula": op.formula,
            "locals": list(op.locals),
            "micrograd": op.micrograd,
            "torch": op.torch,
            "helper": op.helper,
            "call": op.call,
            "precedence": op.precedence,
            "right": op.right,
            "dead_at_or_below": op.dead_at_or_below,
            "script": script_helper(name) if op.helper else None,
            "prelude": script_prelude(name) if op.helper else {},
        }
        for name, op in OPS.items()
    }


def op_lists() -> dict[str, str]:
    """The table's lists as documents show them (between `<!-- ops:NAME -->` markers, written
    by `make bundle`): `functions`, what a program may call; `ops`, every op a node may carry."""
    return {
        "functions": " ".join(FUNCTIONS),
        "ops": " ".join(dict.fromkeys(op.public for op in OPS.values())),
    }


def exact_in_javascript(key: str) -> bool:
    """Whether row `key`'s formulas use IEEE arithmetic alone (no Math function of the page's,
    whose rounding is V8's own): the page's numbers are then the engine's to the bit."""
    op = OPS[key]
    return all(map(javascript_exact, [op.forward, *map(formula_of, op.local_grads)]))  # type: ignore[arg-type]


def javascript_module() -> str:
    """Every row as a JavaScript module (`export const OPS = {key: {arity, exact, gate, forward(a,
    b, k), locals(a, b, k, out), warning(a, b, k), saturation}}`), IEEE as the engine (a
    derived row's formulas are its primitives'), then `forwardInto`, every row's forward and
    locals in one function (javascript_forward_into). `warning` is `warning_of` the forward: the
    primitive a non-finite result is blamed on, or null; `exact` says that the row's formulas
    use arithmetic alone (the page's numbers are then the engine's to the bit); `gate` and
    `saturation` (a function of (a, b, k, out), or null) are GATES and SATURATION, for the
    gradient flags (engine/flags.py). The page's evaluator (static/js/compute/evaluator.js) runs
    it; `make bundle` writes it to static/js/compute/op-functions.js."""
    names = {name: name for name in ("a", "b", "k", "out")}
    rows = []
    for key, op in OPS.items():
        formulas = [op.forward, *map(formula_of, op.local_grads)]
        local_grads = ", ".join(javascript(local, names) for local in formulas[1:])  # type: ignore[arg-type]
        exact = exact_in_javascript(key)
        saturation = (
            f"(a, b, k, out) => {javascript(op.saturation, names)}" if op.saturation else "null"
        )
        rows += [
            f"  {key!r}: {{",
            f"    arity: {op.arity},",
            f"    exact: {str(exact).lower()},",
            f"    forward: (a, b, k) => {javascript(op.forward, names)},",  # type: ignore[arg-type]
            f"    locals: (a, b, k, out) => [{local_grads}],",
            f"    warning: (a, b, k) => {javascript_warning(op.forward, names)},",  # type: ignore[arg-type]
            f"    gate: {str(key in GATES).lower()},",
            f"    saturation: {saturation},",
            "  },",
        ]
    return "\n".join(
        [
            "// Generated from engine/ops.py (javascript_module, by make bundle): do not edit.",
            JAVASCRIPT_HELPERS,
            *javascript_warning_helpers(),
            "export const OPS = {",
            *rows,
            "};",
            JAVASCRIPT_KEY_OF,
            *javascript_forward_into(names),
            "",
        ]
    )


def javascript_forward_into(names: dict[str, str]) -> list[str]:
    """`forwardInto(code, data, i, left, right, exponents, local, edge)`: node `i`'s data (the
    row at place `code` of OPS, of `data[left]`, `data[right]` (0 when `right` < 0) and
    `exponents[i]`) written to `data[i]`, and its inputs' local derivatives to `local[edge]` (and
    `local[edge + 1]`): the rows' own formulas in one switch. The evaluator's pass over every
    node calls it: one function where a call through each row's own functions (a different one
    a node) cost most of a pass of micrograd's demo; and no number goes in or out as an
    argument or a result, which V8 would box as a new object each (two a node: 1.8 MB a pass)."""
    cases = []
    for code, op in enumerate(OPS.values()):
        writes = " ".join(
            f"local[{'edge' if j == 0 else f'edge + {j}'}] = "
            f"{javascript(formula_of(local), names)};"  # type: ignore[arg-type]
            for j, local in enumerate(op.local_grads)
        )
        forward = javascript(op.forward, names)  # type: ignore[arg-type]
        case = f"    case {code}: {{ const out = {forward}; data[i] = out; {writes} return; }}"
        cases.append(case)
    return [
        "/** Node `i`'s data written to `data[i]` and its local derivatives to `local` from `edge`"
        " on (engine/ops.py javascript_forward_into). */",
        "export function forwardInto(code, data, i, left, right, exponents, local, edge) {",
        "  const a = data[left];",
        "  const b = right < 0 ? 0 : data[right];",
        "  const k = exponents[i];",
        "  switch (code) {",
        *cases,
        "    default: throw new Error(`no row at ${code}`);",
        "  }",
        "}",
    ]
