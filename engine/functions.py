"""The functions a program defines: `softplus(x) = log(1 + exp(x))`.

A call `softplus(a*b)` is one node, tagged with the function's name, like a derived row of the
table (engine/ops.py): its data is the body's value and its local derivatives (one per
parameter) are the body's gradients, both computed by building the body's Value nodes from
the parameters, with the table's own ops, and running the engine's one backward pass on them.
So nothing about a function's derivative is written anywhere: no formula copied, no
approximation. `expand_derived` draws the body's nodes instead (engine/builder.py), which give
the same data exactly.

A function is data the parser reads (engine/parser.py `definition`); the program's other rules
(no recursion: a body calls only functions defined above it) are the parser's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from .cancel import check as check_cancelled
from .ops import CALL, OPS, Op, OpResult
from .value import Value

if TYPE_CHECKING:
    from .parser import Expr

# The most nodes one call may stand for (its body with every call in it expanded): a chain of
# functions each calling the one before twice doubles at each line, and 40 lines would be a
# trillion nodes to evaluate for one call.
MAX_FUNCTION_NODES = 10_000

# What a node of a call's body costs, in plain nodes, where work is bounded (docs/api.md,
# "Limits"): a call evaluates its body through Value objects and its own backward pass, about
# 45 µs a body node on this machine, where the gradient check and the loss landscape recompute
# a plain node with a C operator (0.8 µs: 55 times less) and descent rebuilds a plain node with
# its backward pass (12 µs: 4 times less). Measured with tests/scenarios/test_work_bounds.py's
# composed functions (f12: 8,192 body nodes a call).
CALL_COST_RECOMPUTED = 60
CALL_COST_BUILT = 5

# The most arguments a local derivative's formula names (then `…` and the last one), and the
# most characters of a definition a step's narration repeats (cut with `…`): each of a call's
# contributions says them, so a function of many parameters must not say all of them each time.
SPELLED_ARGUMENTS = 4
NARRATED_DEFINITION = 80

# How a node of a body is made from its inputs (the builder's, or plain Values) and how a
# constant of the body is.
MakeNode = Callable[["Expr", tuple[Value, ...]], Value]
MakeConstant = Callable[["Expr"], Value]


class Function:
    """A function the program defines: its `name`, `params`, `body` (an expression tree whose
    names are the parameters) and `postfix` (the body's nodes, each after its inputs), where it
    is defined (`line`; `start`/`end`: offsets of the whole definition) and `definition` (its
    text, `softplus(x) = log(1 + exp(x))`). `nodes`: how many nodes a call stands for when
    expanded. `row`: its row of the table, as ops.OPS rows are (spellings, `apply`)."""

    def __init__(
        self,
        name: str,
        params: tuple[str, ...],
        body: Expr,
        postfix: list[Expr],
        line: int,
        span: tuple[int, int],
        definition: str,
    ) -> None:
        self.name = name
        self.params = params
        self.body = body
        self.postfix = postfix
        self.line = line
        self.start, self.end = span
        self.definition = definition
        self.nodes = sum(_nodes_of(expr) for expr in postfix if expr.kind != "name") or 1
        self.row = _row(self)

    def __repr__(self) -> str:
        return f"Function({self.definition!r})"

    def apply(self, data: Sequence[float], exponent: float = 0.0) -> OpResult:
        """(data, local grads, warning) of a call on `data`: the body built on leaves holding
        the arguments and differentiated by the one backward pass; the warning of the body's
        first node that warned, when the result is not finite (as a row's apply warns)."""
        check_cancelled()
        params = tuple(Value(float(x)) for x in data)
        root = self.build(params, _plain_node, _plain_constant)
        order = root.backward()
        local_grads = tuple(param.grad for param in params)
        warning = None
        if root.data - root.data != 0:
            warning = next((node.warning for node in order if node.warning), None)
        return root.data, local_grads, warning

    def build(self, arguments: tuple[Value, ...], make: MakeNode, constant: MakeConstant) -> Value:
        """The body's value on `arguments`, its nodes made by `make` and `constant` in
        post-order (the builder draws them; `apply` only computes)."""
        results: list[Value] = []
        for expr in self.postfix:
            if expr.kind == "name":
                results.append(arguments[self.params.index(expr.text)])
            elif expr.kind == "num":
                results.append(constant(expr))
            else:
                count = operand_count(expr)
                inputs = tuple(results[len(results) - count :])
                del results[len(results) - count :]
                results.append(make(expr, inputs))
        return results[0]


def narrated_definition(function: Function) -> str:
    """The definition as a step's narration repeats it: at most NARRATED_DEFINITION
    characters, cut with `…` (the reply's `functions` holds it whole)."""
    text = function.definition
    return text if len(text) <= NARRATED_DEFINITION else text[: NARRATED_DEFINITION - 1] + "…"


def operand_count(expr: Expr) -> int:
    """How many built nodes an operation of the tree takes: a literal exponent (`x ** 2`) is
    part of its node, not an input."""
    if expr.kind == "binary" and expr.op == "**" and expr.args[1].kind == "num":
        return 1
    return len(expr.args)


def function_of(expr: Expr) -> Function | None:
    """The program's function an expression calls, or None (a table's op, or no call)."""
    return getattr(expr, "function", None)


def call_value(function: Function, inputs: tuple[Value, ...]) -> Value:
    """A node calling `function` on `inputs`: its data and local derivatives from the body."""
    data, local_grads, warning = function.apply([node.data for node in inputs])
    node = Value(data, inputs, local_grads, function.name, None, warning)
    node.function = function
    return node


def _plain_node(expr: Expr, inputs: tuple[Value, ...]) -> Value:
    """A body's operation as a bare Value (what `apply` computes with)."""
    function = function_of(expr)
    if function is not None:
        return call_value(function, inputs)
    if operand_count(expr) != len(expr.args):  # `x ** 2`
        return Value.make("**k", inputs, expr.args[1].value)
    return Value.make("neg" if expr.kind == "neg" else expr.op or "", inputs)


def _plain_constant(expr: Expr) -> Value:
    return Value.constant(expr.value)


def _nodes_of(expr: Expr) -> int:
    """The nodes an entry of a body's post-order stands for when expanded."""
    function = function_of(expr)
    return function.nodes if function is not None else 1


def _row(function: Function) -> Op:
    """The function's row of the table: spelled as a call of its name everywhere (a micrograd
    or PyTorch script defines it with `def`), its local derivatives said as the partial
    derivative with respect to each parameter, at the call's arguments."""
    count = len(function.params)
    arguments = ", ".join(f"{{{i}}}" for i in range(count))
    called = f"{function.name}({arguments})"
    # A partial derivative names the first arguments and the last past SPELLED_ARGUMENTS: a
    # function of 4,000 parameters has 4,000 of them, and each naming every argument made
    # its `locals` (and the reply) grow with the square of the parameters.
    if count > SPELLED_ARGUMENTS:
        arguments = ", ".join([*(f"{{{i}}}" for i in range(SPELLED_ARGUMENTS - 1)), "…"])
        arguments += f", {{{count - 1}}}"
    partials = tuple(f"\u2202{function.name}/\u2202{p}({arguments})" for p in function.params)
    return Op(
        len(function.params), function.name, CALL, function.name, called, called, partials,
        function.name, function.name, called, called, apply=function.apply,
    )  # fmt: skip


# How tightly a name or a number binds: tighter than any call.
ATOM = CALL + 10
Spelled = tuple[str, int]  # a text and how tightly it binds


def row_of_expr(expr: Expr) -> Op:
    """The row of the table (or of the program's function) an operation of a body applies."""
    function = function_of(expr)
    if function is not None:
        return function.row
    if expr.kind == "neg":
        return OPS["neg"]
    return OPS["**k" if operand_count(expr) < len(expr.args) else expr.op]  # type: ignore[index]


def spelled(
    function: Function,
    column: str,
    argument: Callable[[int], Spelled],
    constant: Callable[[Expr], Spelled],
    exponent: Callable[[float], str],
) -> str:
    """The body of `function` written in the table's `column` (`shape` for narration,
    `micrograd`, `torch` for the scripts), parameter `i` as `argument(i)` says and numbers as
    `constant` does, in brackets only where the grammar needs them (Python's, which narration's
    formulas follow too). Built from the body's post-order: no body is too deep to write."""
    texts: list[Spelled] = []
    for expr in function.postfix:
        if expr.kind == "name":
            texts.append(argument(function.params.index(expr.text)))
        elif expr.kind == "num":
            texts.append(constant(expr))
        else:
            row = row_of_expr(expr)
            count = operand_count(expr)
            operands = texts[len(texts) - count :]
            del texts[len(texts) - count :]
            template: str = getattr(row, column)
            parts = [
                f"({text})" if _needs_brackets(row, template, index, binds) else text
                for index, (text, binds) in enumerate(operands)
            ]
            k = exponent(expr.args[1].value) if count < len(expr.args) else ""
            called = template.endswith(")")
            texts.append((template.format(*parts, k=k), CALL if called else row.precedence))
    return texts[0][0]


def _needs_brackets(row: Op, template: str, index: int, binds: int) -> bool:
    """Whether operand `index`, binding `binds`, needs brackets in `template` (a spelling of
    `row`): under a method call anything looser than a call (`(a*b).relu()`); never as a
    call's argument; under an operator anything looser, and as tight on the side it does not
    group from (`a - (b - c)`, `(a ** b) ** c`, `-(-a)`)."""
    if template.startswith("{0}."):
        return index == 0 and binds < CALL
    if template.endswith(")"):
        return False
    wrong_side = row.arity == 1 or (index == 0) == row.right
    return binds < row.precedence or (binds == row.precedence and wrong_side)


def script_body(function: Function, column: str) -> str:
    """The expression a micrograd (`column` "micrograd") or PyTorch ("torch") script's `def`
    returns: its numbers as the page's scripts write constants (`Value(1)` for micrograd)."""

    def constant(expr: Expr) -> Spelled:
        text = f"Value({expr.text})" if column == "micrograd" else expr.text
        negative = column != "micrograd" and text.startswith("-")
        return text, OPS["neg"].precedence if negative else ATOM

    return spelled(
        function, column, lambda i: (function.params[i], ATOM), constant, lambda k: repr(float(k))
    )


def ops_used(function: Function) -> list[str]:
    """The keys of the table's rows the body applies (not the program's functions), in order."""
    keys: list[str] = []
    for expr in function.postfix:
        if expr.kind not in ("name", "num") and function_of(expr) is None:
            key = next(name for name, row in OPS.items() if row is row_of_expr(expr))
            if key not in keys:
                keys.append(key)
    return keys
