"""Parse chainrule programs into statements of expression trees.

An operator-precedence parser driven by one table (`BINARY`) and two explicit stacks, so no
input can make it recurse: 10,000 nested parentheses give a LimitExceeded when a depth limit is
set, and parse (slowly growing only the heap) when it is not.
"""

from __future__ import annotations

import re
from difflib import get_close_matches
from typing import Any

from .errors import (
    QUOTE_MAX,
    ArgumentCount,
    BadFunction,
    LimitExceeded,
    LineIndex,
    ProgramError,
    SyntaxError_,
    UnknownFunction,
    quoted,
)
from .functions import MAX_FUNCTION_NODES, Function
from .i18n import Count, msg
from .lexer import (
    METHOD_LIST,
    NUMBER_STARTS,
    SUBSET,
    Token,
    line_tokens,
    needs_running,
    run_tokens,
    tokenize,
)
from .ops import BINARY, FUNCTIONS, NEGATION, OPS, SCRIPT_NAMES
from .paste import clean, line_note, shown

# BINARY: operator -> (precedence, right-associative), the table's; unary minus sits between `*`
# and `**`, so `-a**2` is `-(a**2)` and `-a*b` is `(-a)*b`.
NEG_PRECEDENCE = NEGATION
# `vpow(a, b)`: how chainrule's micrograd scripts write `a ** b` (micrograd's takes numbers only).
POWER_HELPER = OPS["**"].helper
_FUNCTIONS = frozenset(FUNCTIONS)
AUGMENTED = {"+=": "+", "-=": "-", "*=": "*", "/=": "/", "**=": "**"}
_BLANKS = " \t\f\v"  # the blanks around an operator of a `run` token
# A decimal comma (`0,5`, as Estonian and Russian write it): the digits on each side of a `,`
# that no call holds, neither side part of a name or of more numbers (`1,2,3`).
_DIGITS_BEFORE = re.compile(r"(?<![\w.])\d+\Z", re.ASCII)
_DIGITS_AFTER = re.compile(r"\d+(?![\w.,])", re.ASCII)
# A run's operator, by the text between two operands (alone, or with a space either side, as
# most are written): (its op, its precedence, the precedence above which an operator before it
# is reduced first: its own for a right-associative one, else just below it).
_RUN_OPS = {
    f"{before}{symbol}{after}": (op, BINARY[op][0], BINARY[op][0] - (0 if BINARY[op][1] else 0.5))
    for symbol, op in (("+", "+"), ("-", "-"), ("*", "*"), ("/", "/"), ("**", "**"), ("^", "**"))
    for before in ("", " ")
    for after in ("", " ")
}
# Where a statement ends too early, as its error says it: `error.end_of_input.needs_right`, …
_END = {"eof": "end_of_input", "newline": "end_of_line"}
# The micrograd dialect's statements that are read as notes are said by
# `warning.skipped.<kind>`, the lexer's kind of skipped statement, or the kind it stands for here.
_SKIPPED_AS = {"render": "draw", "zero_grad": "grad_reset"}
# Python's own functions a pasted program may call: code that must run (never "unknown function").
_BUILTINS = frozenset(
    "abs all any dict enumerate filter float int isinstance len list map max min print range "
    "reversed round set sorted str sum tuple zip".split()
)
# Names a program's own function may not take: the table's functions and what the page's
# micrograd and PyTorch scripts define or import besides the program's names.
RESERVED_FUNCTION_NAMES = frozenset(
    (*FUNCTIONS, *SCRIPT_NAMES, "Value", "math", "torch", *_BUILTINS)
)


class Expr:
    """A node of the expression tree.

    `kind` is `num` (value, text), `name` (text), `neg` (args = (operand,)), `binary`
    (op in + - * / **, args = (left, right)) or `call` (op = function name, args = (arg,)).
    `start`/`end` are offsets into the source (end exclusive), including any parentheses
    written around it (`parens` is then True).
    """

    __slots__ = ("kind", "op", "args", "start", "end", "value", "text", "parens")

    # Positional arguments in the hot paths (a call with keywords costs more per node).
    def __init__(
        self,
        kind: str,
        start: int,
        end: int,
        op: str | None = None,
        args: tuple[Expr, ...] = (),
        text: str = "",
        value: float = 0.0,
    ) -> None:
        self.kind = kind
        self.op = op
        self.args = args
        self.start = start
        self.end = end
        self.value = value
        self.text = text
        self.parens = False

    def __str__(self) -> str:
        """Compact S-expression: `2 ** 3 ** 2` -> `(** 2 (** 3 2))`; built without recursion."""
        done: list[str] = []
        stack: list[tuple[Expr, bool]] = [(self, False)]
        while stack:
            expr, expanded = stack.pop()
            if not expr.args:
                done.append(expr.text)
            elif not expanded:
                stack.append((expr, True))
                stack.extend((arg, False) for arg in reversed(expr.args))
            else:
                parts = done[len(done) - len(expr.args) :]
                del done[len(done) - len(expr.args) :]
                head = "neg" if expr.kind == "neg" else expr.op
                done.append(f"({head} {' '.join(parts)})")
        return done[0]

    __repr__ = __str__

    def names(self) -> list[Expr]:
        """Every `name` leaf of this tree, in source order."""
        found: list[Expr] = []
        stack = [self]
        while stack:
            expr = stack.pop()
            if expr.kind == "name":
                found.append(expr)
            stack.extend(reversed(expr.args))
        return found


# A label set by `x.label = '…'`: the name, the label, and the offsets of the statement.
Label = tuple[str, str, int, int]


class LabelledNumber(Expr):
    """A number written `Value(2.0, label='a')`: `label` is the node's display label."""

    __slots__ = ("label",)


class FunctionCall(Expr):
    """A call of a function the program defines (`kind` "call", `op` its name, `args` its
    arguments): `function` is that Function (engine/functions.py)."""

    __slots__ = ("function",)


def plain_operand(text: str, start: int, end: int) -> Expr:
    """A plain operand as a `line` or `run` token holds it (engine/lexer.py): a number (it
    starts with a digit or a `.`) or a name."""
    if text[0] in NUMBER_STARTS:
        return Expr("num", start, end, None, (), text, float(text))
    return Expr("name", start, end, None, (), text)


class Statement:
    """`target = expr` (target is None for a bare expression), with the 1-based line.

    `postfix` lists the nodes of `expr` in post-order (each after its inputs, left to right),
    without the literal exponents of `**` (part of their node): the order in which the graph
    builds them, readable without walking the tree.

    `labels` lists the labels set right after the statement (`e.label = 'e'`), in order, as
    (name, label, start, end) with the offsets of the label statement."""

    __slots__ = ("target", "target_start", "target_end", "expr", "line", "postfix", "labels")

    def __init__(
        self,
        target: str | None,
        target_start: int,
        target_end: int,
        expr: Expr,
        line: int,
        postfix: list[Expr],
    ) -> None:
        self.target = target
        self.target_start = target_start
        self.target_end = target_end
        self.expr = expr
        self.line = line
        self.postfix = postfix
        self.labels: tuple[Label, ...] = ()  # mostly none: no list a statement

    def names(self) -> list[Expr]:
        """Every `name` leaf of the expression, in source order."""
        return [expr for expr in self.postfix if expr.kind == "name"]

    def __str__(self) -> str:
        return f"{self.target} = {self.expr}" if self.target else str(self.expr)


class _Pending:
    """An entry of the operator stack: a binary operator, unary minus, `(` or `f(`."""

    __slots__ = ("kind", "precedence", "token", "name", "arg_count")

    def __init__(self, kind: str, precedence: int, token: Token, name: Token | None = None):
        self.kind = kind
        self.precedence = precedence
        self.token = token
        self.name = name
        self.arg_count = 0


# How far `_closing_line` looks for a bracket's `)` (characters): an error's word, not a reading.
CLOSING_LOOKAHEAD = 10_000


def _closing_line(source: str, start: int) -> int | None:
    """The 1-based line of the `)` that closes a `(` ending at `start`, when it is on a later
    line within CLOSING_LOOKAHEAD characters (comments passed over), else None."""
    depth = 1
    i, stop = start, min(len(source), start + CLOSING_LOOKAHEAD)
    while i < stop:
        ch = source[i]
        if ch == "#":
            i = source.find("\n", i)
            if i == -1:
                return None
            continue
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                if "\n" not in source[start:i]:
                    return None
                return source.count("\n", 0, i) + 1
        i += 1
    return None


def parse(source: str, max_depth: int | None = None) -> list[Statement]:
    """The statements of `source` in order (blank lines and comments dropped).

    Raises a ProgramError subclass (SyntaxError_, UnknownFunction, ArgumentCount,
    LimitExceeded) at the first problem; never RecursionError, whatever the input.
    """
    return parse_program(source, max_depth)[0]


def parse_program(
    source: str, max_depth: int | None = None
) -> tuple[list[Statement], list[dict[str, Any]]]:
    """The statements of `source` and the notes about what it read as notes, by line: statements
    of micrograd code it skipped (warnings of type `skipped`: imports, print(...), draw_dot(x),
    `x.grad`, helper definitions, statements after `L.backward()`, which marks the root, …) and
    copy leftovers it read as blanks (type `pasted`: prompts, no-break spaces, a BOM)."""
    cleaned, pasted = clean(source)
    try:
        parser = _Parser(cleaned, max_depth)
        statements = parser.program()
    except ProgramError as error:
        error.shown_in(source)  # the snippet as typed, prompts and all
        raise
    notes = sorted(pasted + parser.notes, key=lambda note: (note["line"], note["column"]))
    return statements, notes


class _Parser:
    def __init__(self, source: str, max_depth: int | None) -> None:
        self.source = source
        self.tokens = tokenize(source)
        self.pos = 0
        self.max_depth = max_depth
        self.line = 1
        self.postfix: list[Expr] = []  # the current expression's nodes in post-order
        self.depth = 0  # the current expression's open parentheses and calls
        self.notes: list[dict[str, Any]] = []  # skipped statements of micrograd code
        self.imported: set[str] = set()  # names the skipped imports bring (`np`, `MLP`)
        self.drawings: set[str] = set()  # names a skipped `dot = draw_dot(o)` assigns
        self.labels: tuple[Label, ...] = ()  # labels set before any statement
        self.functions: dict[str, Function] = {}  # the functions defined so far
        self.later: dict[str, Token] = {}  # functions defined further on: their names' tokens
        self.defining_name: Token | None = None  # the function whose body is being read
        self.taken: frozenset[str] | None = None  # names no run may hold (`special`), if known

    def at(self, pos: int) -> Token:
        """The token at `pos`, or the `eof` token past the end (a look-ahead never overruns)."""
        tokens = self.tokens
        return tokens[pos] if pos < len(tokens) else tokens[-1]

    def error(self, message: str, token: Token, end: int | None = None) -> SyntaxError_:
        return SyntaxError_(
            message, self.source, token.start, end or max(token.end, token.start + 1)
        )

    def note(self, start: int, line: int, message: str) -> None:
        """A `skipped` note about the statement at offset `start`, on `line`."""
        column = start - self.source.rfind("\n", 0, start)
        self.notes.append(line_note("skipped", message, line, column))

    def skipped(self, token: Token) -> None:
        """A statement of micrograd code read as a note: say so, never run it."""
        text = token.text.split("\n")[0].rstrip()
        name = text[3:].split("(")[0].strip() if token.value == "helper" else ""
        last = self.line + token.text.count("\n")
        kind = _SKIPPED_AS.get(token.value, token.value)
        if kind == "grad":
            kind = _grad_kind(text)
        elif kind == "import":
            self.imported.update(_imported_names(text))
        elif kind == "draw" and "=" in text.split("(")[0]:
            self.drawings.update(part.strip() for part in text.split("=")[0].split(","))
        message = msg(f"warning.skipped.{kind}", text=shown(text), name=name, last=last)
        self.note(token.start, self.line, message)
        self.line = last

    def label(self, token: Token, statements: list[Statement]) -> None:
        """`x.label = 'x1*w1'`: the display label of the node `x` names at this point."""
        name, label = token.value  # type: ignore[misc]
        labelled = (name, label, token.start, token.end)
        if statements:
            statements[-1].labels += (labelled,)
        else:
            self.labels += (labelled,)

    def shown_alone(self, statements: list[Statement]) -> list[Statement]:
        """Drop the statements that only show a value (a name alone on a line, as a notebook
        cell ends with `L`), with a note each, but for the last one, which is the result, as in
        the cell; a name a skipped `draw_dot` assigned is always dropped. Labels set after a
        dropped statement move to the one before it."""
        last = len(statements) - 1
        if all(statement.target is not None for statement in statements[:last]):
            if last < 0 or statements[last].expr.text not in self.drawings:
                return statements  # most programs: every statement but the last assigns
        kept: list[Statement] = []
        for index, statement in enumerate(statements):
            alone = statement.target is None and statement.expr.kind == "name"
            name = statement.expr.text
            if alone and (index < last or name in self.drawings):
                message = msg("warning.skipped.shown", text=shown(name))
                self.note(statement.target_start, statement.line, message)
                if kept:
                    kept[-1].labels += statement.labels
                else:
                    self.labels += statement.labels
                continue
            kept.append(statement)
        return kept

    def program(self) -> list[Statement]:
        tokens = self.tokens
        statements: list[Statement] = []
        backward: tuple[int, str, int] | None = None  # statements before it, root name, line
        self.later = self.definitions_ahead()
        self.taken = None
        while tokens[self.pos].kind != "eof":
            token = tokens[self.pos]
            if token.kind == "line":
                self.line_statements(token, statements)
                continue
            if token.kind == "newline":
                self.line += token.text != ";"
                self.pos += 1
                continue
            if token.kind == "skip":
                self.skipped(token)
                self.pos += 1
                continue
            if token.kind == "label":
                self.label(token, statements)
                self.pos += 1
                continue
            if self.is_backward(self.pos):
                expr = Expr("name", token.start, token.end, None, (), token.text)
                statements.append(Statement(None, token.start, token.end, expr, self.line, [expr]))
                backward = (len(statements), token.text, self.line)
                self.pos += 5
                continue
            if self.head_end(self.pos) is not None:
                self.definition()
                continue
            statements.append(self.statement(token))
        if backward is not None and backward[0] < len(statements):
            self.skip_after_backward(statements, *backward)
        statements = self.shown_alone(statements)
        if not statements and self.functions:
            first = next(iter(self.functions.values()))
            raise BadFunction(
                msg("error.function.nothing_computed", name=first.name),
                self.source,
                first.start,
                first.start + len(first.name),
            )
        if not statements and (self.notes or self.labels):
            raise SyntaxError_(msg("error.nothing_to_trace"), self.source, 0)
        if not statements:
            raise SyntaxError_(msg("error.empty_program"), self.source, 0)
        lines = LineIndex(self.source) if self.labels else None
        for name, _, start, end in self.labels:  # set before any statement: they name nothing
            text = shown(self.source[start:end])
            line = lines.position(start)[0]  # type: ignore[union-attr]
            self.note(start, line, msg("warning.skipped.label_unknown", text=text, name=name))
        return statements

    def statement(self, token: Token) -> Statement:
        """The statement starting at `token`: `c += expr`, `name = <number>` (a leaf), `name =
        expr` or an expression."""
        tokens = self.tokens
        target: Token | None = None
        if token.kind == "name" and tokens[self.pos + 1].text in AUGMENTED:
            return self.augmented(token)
        if token.kind == "name" and tokens[self.pos + 1].text == "=":
            target = token
            if token.text in FUNCTIONS or self.is_function(token.text):
                raise self.error(msg("error.function_assigned", name=token.text), token)
            self.pos += 2
            after = tokens[self.pos]
            if after.kind in ("newline", "eof"):
                raise self.error(msg(f"error.{_END[after.kind]}.needs_right", op="="), after)
            if self.signed_number(after):
                number = tokens[self.pos + 1]
                expr = Expr("num", after.start, number.end, value=number.value, text=number.text)
                self.pos += 2
                return Statement(target.text, target.start, target.end, expr, self.line, [expr])
        self.postfix = postfix = []
        expr = self.expression()
        if target is None:
            return Statement(None, expr.start, expr.end, expr, self.line, postfix)
        return Statement(target.text, target.start, target.end, expr, self.line, postfix)

    def line_statements(self, token: Token, statements: list[Statement]) -> None:
        """The statements of a `line` token (`y = a * 2`, `x = 0.5`, `a * b`, one a line:
        engine/lexer.py), the same as `statement` reads from their tokens, up to one where a
        name is a function's: that line and those after it are then read token by token (as
        `statement` says what is wrong)."""
        functions = self.special()  # no function is being defined: the table's and the program's
        append = statements.append
        start = token.start  # of the line being read
        line = self.line
        for target, equals, first, before_op, op, after_op, second, ends in token.value:
            at = start + len(target) + len(equals)
            end = at + len(first)
            if target in functions or first in functions or second in functions:
                break
            left = plain_operand(first, at, end)
            if op:
                at = end + len(before_op) + len(op) + len(after_op)
                end = at + len(second)
                right = plain_operand(second, at, end)
                expr = Expr("binary", left.start, end, op, (left, right))
                postfix = [left, right, expr]
            else:
                expr = left
                postfix = [left]
            if target:
                append(Statement(target, start, start + len(target), expr, line, postfix))
            else:  # a bare expression: its span stands for the target's, as `statement` says
                append(Statement(None, expr.start, expr.end, expr, line, postfix))
            start = end + len(ends)
            line += 1
        else:
            self.line = line - 1  # the last line's end is the next token
            self.pos += 1
            return
        self.line = line
        self.tokens[self.pos : self.pos + 1] = line_tokens(self.source, start, token.end)

    # ---- Functions the program defines: `softplus(x) = log(1 + exp(x))` ----------------------

    def is_function(self, name: str) -> bool:
        """Whether `name` is a function the program defines (above or below this point)."""
        return name in self.functions or name in self.later

    def head_end(self, pos: int) -> int | None:
        """Where the `=` of a definition's head `name(p, q) =` starting at `pos` is (the
        lexer gives Python's `def name(p, q): return` the same tokens), or None."""
        tokens = self.tokens
        if tokens[pos].kind != "name" or self.at(pos + 1).text != "(":
            return None
        i = pos + 2
        if self.at(i).text != ")":
            while True:
                if self.at(i).kind != "name" or self.at(i + 1).text not in (",", ")"):
                    return None
                i += 2
                if self.at(i - 1).text == ")":
                    break
        else:
            i += 1
        equals = self.at(i)
        return i if equals.kind == "op" and equals.value == "=" else None

    def definitions_ahead(self) -> dict[str, Token]:
        """The name tokens of every definition at a statement's start, first one of a name."""
        found: dict[str, Token] = {}
        tokens = self.tokens
        for pos, token in enumerate(tokens):
            if token.kind != "name":  # most tokens: what follows needs no look
                continue
            starts = pos == 0 or tokens[pos - 1].kind in ("newline", "skip", "label")
            if starts and self.head_end(pos) is not None:
                found.setdefault(token.text, token)
        return found

    def definition(self) -> None:
        """`name(p, q) = expr` (or `def name(p, q): return expr`): a function of the
        parameters, whose body uses only them and functions defined above it. Python's `def`
        that is no such function (it reads a global, calls itself, …) is code that must run,
        as any other `def`."""
        name = self.tokens[self.pos]
        equals = self.at(self.head_end(self.pos) or self.pos)
        if equals.text == "=":
            self.read_definition()
            return
        try:
            self.read_definition()
        except ProgramError as error:
            start = self.source.rfind("def", 0, name.start)
            raise needs_running("def", self.source, start, start + 3, word="def") from error

    def read_definition(self) -> None:
        tokens = self.tokens
        name = tokens[self.pos]
        equals_at = self.head_end(self.pos)
        assert equals_at is not None
        params = [t for t in tokens[self.pos + 2 : equals_at] if t.kind == "name"]
        self.check_function_name(name, params)
        self.later.pop(name.text, None)
        self.taken = None
        equals = tokens[equals_at]
        self.pos = equals_at + 1
        after = tokens[self.pos]
        if after.kind in ("newline", "eof"):
            raise self.error(msg(f"error.{_END[after.kind]}.needs_right", op="="), after)
        line = self.line
        self.line += equals.text.count("\n")  # `def f(x):` then `return` on the next line
        names = self.params_of(params)
        self.defining_name = name
        self.postfix = postfix = []
        try:
            body = self.expression()
        finally:
            self.defining_name = None
            self.taken = None
        for use in postfix:
            if use.kind == "name" and use.text not in names:
                raise self.function_error("unknown_parameter", use, name.text, params, use.text)
        if body.kind in ("name", "num"):
            raise self.function_error("trivial", body, name.text, params, body.text)
        text = " ".join(self.source[body.start : body.end].split())
        definition = f"{name.text}({', '.join(names)}) = {text}"
        function = Function(
            name.text, tuple(names), body, postfix, line,
            (name.start, body.end), definition,
        )  # fmt: skip
        if function.nodes > MAX_FUNCTION_NODES:
            message = msg(
                "error.function.too_large",
                name=name.text,
                nodes=Count(function.nodes),
                limit=Count(MAX_FUNCTION_NODES),
            )
            raise LimitExceeded(message, self.source, name.start, name.end)
        self.functions[name.text] = function
        self.taken = None

    @staticmethod
    def params_of(params: list[Token]) -> list[str]:
        return [p.text for p in params]

    def check_function_name(self, name: Token, params: list[Token]) -> None:
        """Refuse a definition whose name or parameters are taken or unusable."""
        if name.value in RESERVED_FUNCTION_NAMES or name.text != name.value:  # `torch.exp`
            kind = "builtin" if name.value in FUNCTIONS else "reserved"
            raise self.function_error(kind, name, str(name.value), params)
        if name.text in self.functions:
            earlier = self.functions[name.text]
            raise BadFunction(
                msg("error.function.defined_twice", name=name.text, line=earlier.line),
                self.source, name.start, name.end,
            )  # fmt: skip
        if not params:
            raise self.function_error("no_parameters", name, name.text, params)
        seen: set[str] = set()
        for param in params:
            kind = None
            if param.text in seen:
                kind = "repeated_parameter"
            elif param.value in RESERVED_FUNCTION_NAMES or self.is_function(param.text):
                kind = "parameter_is_function"
            if kind is not None:
                raise self.function_error(kind, param, name.text, params, param.text)
            seen.add(param.text)

    def function_error(
        self, kind: str, where: Token | Expr, name: str, params: list[Token], other: str = ""
    ) -> BadFunction:
        """The BadFunction of `kind` (`error.function.<kind>`) about the function `name`."""
        head = f"{name}({', '.join(self.params_of(params))})"
        message = msg(f"error.function.{kind}", name=name, head=head, other=quoted(other))
        return BadFunction(message, self.source, where.start, where.end)

    def function_call_error(self, token: Token) -> ProgramError:
        """The error for a call of a function the program defines below this point, or of the
        function whose body this is."""
        called = self.tokens[self.tokens.index(token) + 1].text == "("
        if not called:
            kind = "named_like_variable"
        elif self.defining_name is not None and token.text == self.defining_name.text:
            kind = "recursion"
        elif self.defining_name is not None:
            kind = "calls_later"
        else:
            kind = "used_before_defined"
        defined = self.later.get(token.text) or self.defining_name
        assert defined is not None
        line = self.source.count("\n", 0, defined.start) + 1
        caller = self.defining_name.text if self.defining_name is not None else ""
        message = msg(f"error.function.{kind}", name=token.text, line=line, caller=caller)
        return BadFunction(message, self.source, token.start, token.end)

    def skip_after_backward(
        self, statements: list[Statement], count: int, name: str, line: int
    ) -> None:
        """Drop the statements after `name.backward()` (the first `count` are kept), each with
        a note: micrograd code that reads the gradients is not part of the graph."""
        for later in statements[count:]:
            after = msg("warning.skipped.after_backward", name=name, backward_line=line)
            self.note(later.target_start, later.line, after)
        del statements[count:]

    def is_backward(self, pos: int) -> bool:
        """Whether a statement `name.backward()` starts at `pos`: it marks the root."""
        tokens = self.tokens
        return (
            tokens[pos].kind == "name"
            and [t.text for t in tokens[pos + 1 : pos + 5]] == [".", "backward", "(", ")"]
            and tokens[pos + 5].kind in ("newline", "eof")
        )

    def augmented(self, target: Token) -> Statement:
        """`c += expr` is `c = c + (expr)`: a new node (the name's next version)."""
        op_token = self.tokens[self.pos + 1]
        self.pos += 2
        after = self.tokens[self.pos]
        if after.kind in ("newline", "eof"):
            raise self.error(msg("error.needs_right", op=op_token.text), after)
        current = Expr("name", target.start, target.end, None, (), target.text)
        self.postfix = postfix = [current]
        rhs = self.expression()
        op = AUGMENTED[op_token.text]
        if op == "**" and rhs.kind == "num":
            postfix.pop()  # a literal exponent is part of its node
        combined = Expr("binary", target.start, rhs.end, op, (current, rhs))
        postfix.append(combined)
        return Statement(target.text, target.start, target.end, combined, self.line, postfix)

    def signed_number(self, token: Token) -> bool:
        """Whether `token` starts `+<number>` alone on the right of `name =`: a leaf's value may
        be signed either way (`a = +2` as `a = -2`); `+` is no operator elsewhere."""
        if token.text != "+":
            return False
        if self.tokens[self.pos + 1].kind != "num":
            return False
        return self.tokens[self.pos + 2].kind in ("newline", "eof")

    def expression(self) -> Expr:
        """One expression, up to (not including) the next newline, `;` or end of input."""
        tokens = self.tokens
        operands: list[Expr] = []
        pending: list[_Pending] = []
        self.depth = 0  # open parentheses and calls
        expect_operand = True
        pos = self.pos  # a local in the loop, stored back where other methods read it
        while True:
            token = tokens[pos]
            kind, value = token.kind, token.value
            if expect_operand:
                pos, expect_operand = self.operand(pos, operands, pending)
            elif kind == "op" and value in BINARY:
                self.binary(token, operands, pending)
                expect_operand = True
            elif value == ".":
                pos = self.method_call(operands, pos)
            elif value == ")":
                self.close(token, operands, pending)
            elif value == ",":
                self.reduce_group(operands, pending)
                if not pending or pending[-1].kind != "call":
                    raise self.stray_comma(token)
                pending[-1].arg_count += 1
                expect_operand = True
            elif kind in ("newline", "eof"):
                self.reduce_group(operands, pending)
                if pending:
                    raise self.unclosed(pending[-1].token, token)
                self.pos = pos
                return operands[0]
            else:
                raise self.unexpected(token, tokens[pos - 1])
            pos += 1

    def operand(self, pos: int, operands: list[Expr], pending: list[_Pending]) -> tuple[int, bool]:
        """Read the token at `pos`, where an operand belongs: a number, a name (or what starts
        with one), `(` or unary minus. Returns the position of the last token read and whether
        an operand is still expected (after an opening or a minus)."""
        token = self.tokens[pos]
        kind, value = token.kind, token.value
        if kind == "run":
            return self.run(pos, operands, pending), False
        if kind == "num":
            self.push(operands, Expr("num", token.start, token.end, None, (), token.text, value))
            return pos, False
        if kind == "name":
            return self.name_operand(pos, operands, pending)
        if value == "(":
            self.open(pending, _Pending("paren", 0, token))
            return pos, True
        if value == "-":
            pending.append(_Pending("neg", NEG_PRECEDENCE, token))
            return pos, True
        self.pos = pos
        raise self.missing_operand(token, pending)

    def name_operand(
        self, pos: int, operands: list[Expr], pending: list[_Pending]
    ) -> tuple[int, bool]:
        """A name where an operand belongs: `Value(…)`, a call's opening (a function's, or
        `vpow(` of chainrule's micrograd scripts), or a variable."""
        tokens = self.tokens
        token = tokens[pos]
        value = token.value
        follows_paren = tokens[pos + 1].text == "("
        if value == "Value" and follows_paren:
            operand, pos = self.value_literal(pos)
            self.push(operands, operand)
            return pos, False
        callable_ = value == POWER_HELPER or value in _FUNCTIONS or value in self.functions
        if callable_ and follows_paren:
            self.open(pending, _Pending("call", 0, tokens[pos + 1], token))
            return pos + 1, True
        defining = self.defining_name is not None and value == self.defining_name.text
        if follows_paren and (defining or value in self.later):
            raise self.function_call_error(token)
        if value in self.later and not defining:
            raise self.function_call_error(token)
        if value in _FUNCTIONS or self.is_function(value) or defining:
            raise self.error(msg("error.function_not_called", name=value), token)
        if follows_paren:
            raise self.unknown_function(token)
        self.push(operands, Expr("name", token.start, token.end, None, (), token.text))
        return pos, False

    def special(self) -> frozenset[str]:
        """The names `name_operand` refuses where no `(` follows: functions (the table's, the
        program's, those defined further on) and the one whose body is being read."""
        if self.taken is None:
            defining = () if self.defining_name is None else (self.defining_name.text,)
            self.taken = _FUNCTIONS.union(self.functions, self.later, defining)
        return self.taken

    def run(self, pos: int, operands: list[Expr], pending: list[_Pending]) -> int:
        """The `run` token at `pos` (`a0*b0 + a1*b1`: engine/lexer.py), where an operand
        belongs: each operand and operator as `operand` and `binary` read them, in one loop,
        the run's own operators on a stack of its own; those left on it go on `pending` at the
        end. A run holding a function's name is read token by token (which says what is
        wrong). Returns `pos`."""
        token = self.tokens[pos]
        parts: list[str] = token.value  # type: ignore[assignment]
        if not self.special().isdisjoint(parts):
            self.tokens[pos : pos + 1] = run_tokens(self.source, token.start, token.end)
            return self.operand(pos, operands, pending)[0]
        postfix = self.postfix
        push_operand = operands.append
        push_node = postfix.append
        # The run's operators not reduced yet: (op, precedence, offset of its blanks, them).
        own: list[tuple[str, float, int, str]] = []
        text = parts[0]
        at = token.start + len(text)
        leaf = plain_operand(text, token.start, at)
        push_operand(leaf)
        push_node(leaf)
        for between, text in zip(parts[1::2], parts[2::2], strict=True):
            read = _RUN_OPS.get(between)
            op, precedence, above = read or _RUN_OPS[between.strip(_BLANKS)]
            while True:
                if own:
                    if own[-1][1] <= above:
                        break
                    before = own.pop()[0]
                    right = operands.pop()
                    left = operands.pop()
                    if before == "**" and right.kind == "num":
                        postfix.pop()  # a literal exponent is part of its node
                    node = Expr("binary", left.start, right.end, before, (left, right))
                    push_operand(node)
                    push_node(node)
                elif pending and pending[-1].kind in ("binary", "neg"):
                    if pending[-1].precedence <= above:
                        break
                    self.reduce(operands, pending.pop())
                else:
                    break
            own.append((op, precedence, at, between))
            start = at + len(between)
            at = start + len(text)
            leaf = plain_operand(text, start, at)
            push_operand(leaf)
            push_node(leaf)
        for op, precedence, at, between in own:
            symbol = between.strip(_BLANKS)
            start = at + between.index(symbol)
            operator = Token("op", symbol, start, start + len(symbol), op)
            pending.append(_Pending("binary", precedence, operator))
        return pos

    def push(self, operands: list[Expr], operand: Expr) -> None:
        operands.append(operand)
        self.postfix.append(operand)

    def open(self, pending: list[_Pending], opener: _Pending) -> None:
        """Push a `(` or a call's opening, within the nesting limit."""
        self.depth += 1
        self.check_depth(self.depth, opener.token)
        pending.append(opener)

    def binary(self, token: Token, operands: list[Expr], pending: list[_Pending]) -> None:
        """A binary operator: reduce what binds tighter (or as tight, left-associative), then
        push it."""
        precedence, right = BINARY[token.value]  # type: ignore[index]
        while pending and pending[-1].kind in ("binary", "neg"):
            top = pending[-1].precedence
            if top > precedence or (top == precedence and not right):
                self.reduce(operands, pending.pop())
            else:
                break
        pending.append(_Pending("binary", precedence, token))

    def close(self, token: Token, operands: list[Expr], pending: list[_Pending]) -> None:
        """`)`: finish the group or the call it closes."""
        self.reduce_group(operands, pending)
        if not pending:
            raise self.error(msg("error.unmatched_close"), token)
        opener = pending.pop()
        self.depth -= 1
        if opener.kind == "paren":
            inner = operands[-1]
            inner.start, inner.end, inner.parens = opener.token.start, token.end, True
        else:
            self.finish_call(operands, opener, token)

    def unexpected(self, token: Token, previous: Token) -> SyntaxError_:
        """The error for `token` where an operator, `)` or the end of the statement belongs."""
        if token.kind == "run":  # its first operand is the token
            token = run_tokens(self.source, token.start, token.end)[0]
        if previous.kind == "run":  # its last operand is the token before
            previous = run_tokens(self.source, previous.start, previous.end)[-1]
        if token.value == "=":
            return self.error(msg("error.bad_assignment"), token)
        left, right = quoted(previous.text), quoted(token.text)
        if token.kind == "name" and len(previous.text) + len(token.text) < QUOTE_MAX:
            product = f"{previous.text}*{token.text}"
            message = msg("error.missing_operator_product", left=left, right=right, product=product)
        else:
            message = msg("error.missing_operator", left=left, right=right)
        return self.error(message, token)

    def check_depth(self, depth: int, token: Token) -> None:
        if self.max_depth is not None and depth > self.max_depth:
            raise LimitExceeded(
                msg("error.nesting_limit", limit=Count(self.max_depth)),
                self.source,
                token.start,
            )

    def unknown_function(self, token: Token) -> ProgramError:
        """UnknownFunction with the closest function's name; NeedsRunning for a function of
        Python's or one a skipped import brings (`sum(...)`, `MLP(2, [4, 1])`)."""
        if token.text in self.imported or token.text in _BUILTINS:
            kind = "imported" if token.text in self.imported else "builtin"
            return needs_running(kind, self.source, token.start, token.end, name=token.text)
        close = get_close_matches(token.text, FUNCTIONS, n=1) if len(token.text) < 40 else []
        if close:
            message = msg("error.unknown_function_close", name=quoted(token.text), close=close[0])
        else:
            message = msg(
                "error.unknown_function", name=quoted(token.text), functions=", ".join(FUNCTIONS)
            )
        return UnknownFunction(message, self.source, token.start, token.end)

    def missing_operand(self, token: Token, pending: list[_Pending]) -> SyntaxError_:
        previous = self.tokens[self.pos - 1] if self.pos else None
        top = pending[-1] if pending else None
        if token.kind in ("newline", "eof"):
            end = _END[token.kind]
            if top is not None and top.kind in ("paren", "call") and previous is top.token:
                return self.unclosed(top.token, token)
            if top is not None and top.kind == "neg":
                return self.error(msg(f"error.{end}.needs_operand", op="-"), token)
            shown = previous.text if previous is not None else ""
            if token.kind == "newline" and any(p.kind in ("paren", "call") for p in pending):
                # Python's continuation inside brackets: not this language's
                key = "error.end_of_line.needs_right_in_brackets"
                return self.error(msg(key, op=quoted(shown)), token)
            return self.error(msg(f"error.{end}.needs_right", op=quoted(shown)), token)
        if token.text == ")" and top is not None and previous is top.token:
            if top.kind == "call":
                assert top.name is not None
                if top.name.text in self.functions:
                    return self.function_arguments(top.name, 0, token)
                return ArgumentCount(
                    msg("error.one_argument", name=top.name.text, count=0),
                    self.source,
                    top.name.start,
                    token.end,
                )
            return self.error(msg("error.empty_parens"), top.token, token.end)
        if token.text == "+" and (previous is None or previous.kind in ("op", "newline")):
            if previous is None or previous.text in "(,=" or previous.kind == "newline":
                return self.error(msg("error.leading_plus"), token)
        if previous is None or previous.kind == "newline" or previous.text in ("(", "=", ","):
            if token.kind == "op" and token.value in BINARY:
                return self.error(msg("error.needs_left", op=token.text), token)
            return self.error(msg("error.expected_expression", found=quoted(token.text)), token)
        return self.error(
            msg("error.needs_right_found", op=quoted(previous.text), found=quoted(token.text)),
            token,
        )

    def unclosed(self, opener: Token, end: Token) -> SyntaxError_:
        """A `(` still open where its statement ends (`end`): closed on a later line, where
        Python would join the lines (a statement here ends with its line), or never."""
        line = _closing_line(self.source, opener.end) if end.kind == "newline" else None
        if line is None:
            return self.error(msg("error.unclosed_paren"), opener)
        return self.error(msg("error.paren_closed_later", line=line), opener)

    def stray_comma(self, token: Token) -> SyntaxError_:
        """A `,` outside a call's arguments; between digits, a decimal comma (`0,5`), said with
        the number to write (`0.5`)."""
        source, at = self.source, token.start
        before, after = _DIGITS_BEFORE.search(source, 0, at), _DIGITS_AFTER.match(source, at + 1)
        if before is None or after is None:
            return self.error(msg("error.stray_comma"), token)
        text = source[before.start() : after.end()]
        number = text.replace(",", ".", 1)
        message = msg("error.decimal_comma", text=text, number=number)
        return SyntaxError_(message, source, before.start(), after.end())

    def reduce_group(self, operands: list[Expr], pending: list[_Pending]) -> None:
        while pending and pending[-1].kind in ("binary", "neg"):
            self.reduce(operands, pending.pop())

    def reduce(self, operands: list[Expr], entry: _Pending) -> None:
        """Replace the operands of `entry` on the stack by their node; the nodes an operand
        completes are always the last in `postfix`, which is how a folded literal (`-2`) and
        a literal exponent leave it."""
        token = entry.token
        postfix = self.postfix
        if entry.kind == "neg":
            operand = operands.pop()
            literal = (
                operand.kind == "num"
                and not operand.parens
                and not operand.text.startswith("-")
                and _next_start(self.source, token.end) == operand.start
            )
            if literal:
                postfix.pop()
                folded = Expr(
                    "num", token.start, operand.end, value=-operand.value, text="-" + operand.text
                )
            else:
                folded = Expr("neg", token.start, operand.end, "neg", (operand,))
            operands.append(folded)
            postfix.append(folded)
            return
        right = operands.pop()
        left = operands.pop()
        if token.value == "**" and right.kind == "num":
            postfix.pop()  # a literal exponent is part of its node
        binary = Expr("binary", left.start, right.end, token.value, (left, right))
        operands.append(binary)
        postfix.append(binary)

    def value_literal(self, pos: int) -> tuple[Expr, int]:
        """`Value(2.0)` or `Value(-3.0, label='b')` at `pos`: a number (a leaf when it is all a
        statement assigns, else a constant); returns it and the position of its `)`."""
        self.one_by_one(pos, 8)
        at = self.at
        start = at(pos)
        i = pos + 2
        sign = at(i).text if at(i).text in ("-", "+") else ""
        i += bool(sign)
        number = at(i)
        close = i + 1
        label = None
        if at(close).text == ",":
            labelled = [at(close + k).text for k in (1, 2)] == ["label", "="]
            if labelled and at(close + 3).kind == "str":
                label = at(close + 3).value
                close += 4
        if number.kind != "num" or at(close).text != ")":
            bad = at(close) if number.kind == "num" else number
            raise self.error(msg("error.value_literal", subset=SUBSET), bad)
        value = -number.value if sign == "-" else number.value
        text = ("-" if sign == "-" else "") + number.text
        if label is None:
            return Expr("num", start.start, at(close).end, None, (), text, value), close
        literal = LabelledNumber("num", start.start, at(close).end, None, (), text, value)
        literal.label = label
        return literal, close

    def method_call(self, operands: list[Expr], pos: int) -> int:
        """`x.relu()` (any method of the table's functions) is `relu(x)`, binding tighter than
        every operator; returns the position of its `)`."""
        self.one_by_one(pos, 4)
        dot, method, opener, close = (self.at(pos + k) for k in range(4))
        if method.kind != "name":
            raise self.error(msg("error.dot_needs_method", methods=METHOD_LIST), dot)
        if method.text == "backward":
            raise self.error(msg("error.backward_inline"), dot, close.end)
        if method.text not in _FUNCTIONS or opener.text != "(":
            raise self.error(
                msg("error.attribute", name=quoted(method.text), subset=SUBSET), method
            )
        if close.kind in ("newline", "eof"):
            raise self.unclosed(opener, close)
        if close.text != ")":
            raise ArgumentCount(
                msg("error.method_no_argument", method=method.text),
                self.source,
                method.start,
                close.end,
            )
        operand = operands.pop()
        call = Expr("call", operand.start, close.end, method.text, (operand,))
        operands.append(call)
        self.postfix.append(call)
        return pos + 3

    def one_by_one(self, pos: int, count: int) -> None:
        """The `run` tokens among the `count` tokens from `pos` as their tokens, one by one,
        for a reading that looks at each of them."""
        tokens = self.tokens
        for at in range(pos, min(pos + count, len(tokens))):
            token = tokens[at]
            if token.kind == "run":
                tokens[at : at + 1] = run_tokens(self.source, token.start, token.end)

    def finish_call(self, operands: list[Expr], opener: _Pending, close: Token) -> None:
        name = opener.name
        assert name is not None
        count = opener.arg_count + 1
        if name.value == POWER_HELPER:
            if count != 2:
                raise ArgumentCount(
                    msg("error.vpow_arguments", count=count), self.source, name.start, close.end
                )
            right = operands.pop()
            left = operands.pop()
            if right.kind == "num":
                self.postfix.pop()  # a literal exponent is part of its node
            power = Expr("binary", name.start, close.end, "**", (left, right))
            operands.append(power)
            self.postfix.append(power)
            return
        function = self.functions.get(name.text)
        if function is not None:
            if count != len(function.params):
                raise self.function_arguments(name, count, close)
            args = tuple(operands[len(operands) - count :])
            del operands[len(operands) - count :]
            called = FunctionCall("call", name.start, close.end, name.text, args)
            called.function = function
            operands.append(called)
            self.postfix.append(called)
            return
        if count != 1:
            raise ArgumentCount(
                msg("error.one_argument", name=name.text, count=count),
                self.source,
                name.start,
                close.end,
            )
        arg = operands.pop()
        call = Expr("call", name.start, close.end, name.value, (arg,))  # type: ignore[arg-type]
        operands.append(call)
        self.postfix.append(call)

    def function_arguments(self, name: Token, count: int, close: Token) -> ArgumentCount:
        """The error for a call of the program's function `name` with `count` arguments."""
        function = self.functions[name.text]
        head = f"{function.name}({', '.join(function.params)})"
        message = msg(
            "error.function.arguments",
            name=function.name,
            head=head,
            expected=Count(len(function.params)),
            count=count,
            line=function.line,
        )
        return ArgumentCount(message, self.source, name.start, close.end)


def _grad_kind(text: str) -> str:
    """How a statement setting a gradient is said: the seed (`o.grad = 1.0`), a reset (`= 0`)
    or a gradient set by hand (anything else)."""
    op, _, value = text.partition("=")
    if op.rstrip().endswith(".grad"):  # `=`, not `+=`
        try:
            number = float(value.split("#")[0])
        except ValueError:
            return "grad_set"
        if number == 1:
            return "grad_seed"
        if number == 0:
            return "grad_reset"
    return "grad_set"


def _imported_names(text: str) -> list[str]:
    """The names an import statement brings: `np` of `import numpy as np`, `MLP` of `from
    micrograd.nn import Neuron, MLP`, `micrograd` of `import micrograd.engine`."""
    words = text.replace("(", " ").replace(")", " ").split()
    if words[0] == "from":
        words = words[words.index("import") + 1 :] if "import" in words else []
    else:
        words = words[1:]
    names = []
    for part in " ".join(words).split(","):
        said = part.split()
        if len(said) == 3 and said[1] == "as":
            names.append(said[2])
        elif said:
            names.append(said[0].split(".")[0])
    return names


def _next_start(source: str, offset: int) -> int:
    """Offset of the first non-blank character at or after `offset` on the same line."""
    while offset < len(source) and source[offset] in " \t\r\f\v":
        offset += 1
    return offset
