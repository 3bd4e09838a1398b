"""Read a tensor program (docs/tensors.md) into statements of expression trees.

The scalar language's reader (lexer.py, parser.py) is tuned for scalar programs of 100,000
lines, and refuses what tensors need (`[`, `@`, attributes, keyword arguments), which its errors
explain to the scalar language's users. A program that builds a tensor (`is_tensor_program`)
is read here instead, with the same pieces: the lexer's Token and numbers, the table's
operators and their precedences (`BINARY`, `@` beside `*` as in Python), the one error
hierarchy with its caret. A Pratt parser: short, with positions everywhere, its nesting
bounded (MAX_NESTING) so no input overflows the stack.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Callable
from typing import NamedTuple

from .errors import LimitExceeded, LineIndex, SyntaxError_
from .i18n import Count, msg
from .lexer import _RUNS, Token, needs_running, unexpected
from .ops import BINARY, NEGATION

MAX_NESTING = 200  # brackets and calls inside one another (the server's max_depth is lower)
MATMUL = "@"
# The binary operators by precedence (the table's), and `@` with `*`, as Python has it.
PRECEDENCE = {**{op: precedence for op, (precedence, _) in BINARY.items()}, MATMUL: BINARY["*"][0]}
RIGHT = {op for op, (_, right) in BINARY.items() if right}
POSTFIX = 50  # a call, an attribute, an index: tighter than any operator
AUGMENTED = {"+=": "+", "-=": "-", "*=": "*", "/=": "/", "**=": "**", "@=": MATMUL}

# What makes a program a tensor program: a call that builds a tensor, or `@` between operands
# (not a decorator). `torch.tensor([2.0])`, one number, is the micrograd lecture's scalar.
_MAKERS = (
    "tensor", "randn", "randint", "zeros", "ones", "arange", "one_hot", "softmax",
    "cross_entropy", "Generator",
)  # fmt: skip
# `tensor([…])` but not `tensor([2.0])`, or a call of another maker.
_NOT_ONE_NUMBER = r"(?!\s*[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?\s*\])"
_CALLS = "|".join(word for word in _MAKERS if word != "tensor")
_MAKER_CALL = re.compile(rf"(?:tensor\s*\(\s*\[{_NOT_ONE_NUMBER}|(?:{_CALLS})\s*\()")
# The same rule as one pattern, for the page (engine/page_module.py writes it into the page's
# generated module): a tensor program's lists are data the server reads, not code to run.
TENSOR_PROGRAM_PATTERN = (
    rf"tensor\s*\(\s*\[{_NOT_ONE_NUMBER}|\b(?:{_CALLS})\s*\(|[\w)\]][ \t]*@(?!=)"
)
_TOKEN = re.compile(
    r"(?P<blank>[ \t\f\v]+|\#[^\r\n]*|\\\r?\n)"
    r"|(?P<newline>\r?\n|;)"
    r"|(?P<num>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)"
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<str>'[^'\\\r\n]*'|\"[^\"\\\r\n]*\")"
    r"|(?P<op>\*\*=|[-+*/@]=|\*\*|[-+*/^@()\[\],.:=])",
    re.ASCII,
)
_OPEN = {"(": ")", "[": "]"}
_VALUES = frozenset(("True", "False", "None"))
_LINE_END = re.compile(r"[ \t]*(?:\#[^\r\n]*)?(?:\r?\n|;|$)")


def _refuse_keyword(source: str, word: str, start: int, end: int) -> None:
    """Python's statements are not the language: a loop, a `def`, a `class` must run first
    (NeedsRunning, as the scalar language says it: the page then runs it in the browser)."""
    if word in _RUNS:
        raise needs_running(_RUNS[word], source, start, end, word=word)
    raise SyntaxError_(
        msg("error.python_keyword", word=word, subset=msg("error.tensor.subset")),
        source,
        start,
        end,
    )


def is_tensor_program(source: str) -> bool:
    """Whether `source` builds a tensor (`tensor([…])`, `randn(…)`, `@`, …, comments aside):
    such a program is read by this module, any other by the scalar language's reader."""
    return tensor_marker(source) is not None


def tensor_marker(source: str) -> tuple[int, int] | None:
    """The offsets of the first thing that makes `source` a tensor program (a maker's name, or
    `@`), or None. Each scalar trace asks, so the text is searched for the words alone (C's
    speed: 0.2 ms for 100,000 characters) and only where one is found is it looked at closer."""
    found = []
    for word in _MAKERS:
        at = source.find(word)
        while at != -1:
            before = source[at - 1 : at]
            if not (before.isalnum() or before == "_") and _MAKER_CALL.match(source, at):
                if not _in_comment_or_string(source, at):
                    found.append((at, at + len(word)))
                    break
            at = source.find(word, at + 1)
    at = source.find("@")
    while at != -1:
        i = at - 1
        while i >= 0 and source[i] in " \t":
            i -= 1
        before = source[i] if i >= 0 else ""
        if before and (before.isalnum() or before in "_)]") and source[at + 1 : at + 2] != "=":
            if not _in_comment_or_string(source, at):
                found.append((at, at + 1))
                break
        at = source.find("@", at + 1)
    return min(found) if found else None


def _in_comment_or_string(source: str, at: int) -> bool:
    """Whether offset `at` is after a `#` on its line or inside a string that opens before it
    on its line (a label: `x.label = 'W @ x'`, `'randn(2, 3)'`)."""
    line = source[source.rfind("\n", 0, at) + 1 : at]
    if "#" not in line and "'" not in line and '"' not in line:
        return False
    quote = ""
    for ch in line:
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#":
            return True
    return bool(quote)


class Node(NamedTuple):
    """A node of the expression tree. `kind`: `note` (an import: read as a note), `num` (value:
    int or float), `str`, `name`,
    `list` (args: the items), `unary` (op `-` or `+`), `binary` (op, args (left, right)),
    `call` (args[0] the callee, then the positional arguments; `keywords` by name), `attr`
    (args[0] the object, `text` the attribute), `index` (args[0] the object, then the indices).
    `start`/`end`: offsets in the source; `op_start`/`op_end` those of the operator (a binary
    node's error points at it)."""

    kind: str
    start: int
    end: int
    op: str = ""
    args: tuple[Node, ...] = ()
    keywords: tuple[tuple[str, Node], ...] = ()
    value: object = None
    text: str = ""
    op_start: int = 0
    op_end: int = 0


class Statement(NamedTuple):
    """`target = expr`, `target.attr = expr` (`attribute` set) or a bare `expr` (target None),
    with the 1-based line."""

    target: str | None
    target_start: int
    target_end: int
    expr: Node
    line: int
    attribute: str | None = None


def tokenize(source: str) -> list[Token]:
    """The tokens of `source`, blanks and comments dropped, newlines inside brackets dropped
    (Python's implicit joining), ending with `eof`. Raises SyntaxError_ at any other character."""
    tokens: list[Token] = []
    brackets: list[Token] = []
    pos, size = 0, len(source)
    while pos < size:
        match = _TOKEN.match(source, pos)
        if match is None:
            raise SyntaxError_(unexpected(source[pos]), source, pos)
        kind, text, end = match.lastgroup or "", match.group(), match.end()
        pos = end
        if kind == "blank" or (kind == "newline" and brackets and text != ";"):
            continue
        if text in ("import", "from") and (not tokens or tokens[-1].kind == "newline"):
            stop = _LINE_END.search(source, end)
            pos = end = stop.start() if stop else size
            tokens.append(Token("note", source[match.start() : end], match.start(), end, None))
            continue  # `import torch.nn.functional as F`: a note, never run
        if kind == "name" and keyword.iskeyword(text) and text not in _VALUES:
            _refuse_keyword(source, text, match.start(), end)
        if kind == "num":
            plain = re.fullmatch(r"\d+", text) is not None
            value: object = int(text) if plain else float(text)
        elif kind == "str":
            value = text[1:-1]
        else:
            value = "**" if text == "^" else text
        token = Token(kind, text, match.start(), end, value)
        if kind == "op" and text in _OPEN:
            brackets.append(token)
        elif kind == "op" and text in (")", "]"):
            if not brackets or _OPEN[brackets[-1].text] != text:
                raise SyntaxError_(msg("error.tensor.unmatched", char=text), source, token.start)
            brackets.pop()
        tokens.append(token)
    if brackets:
        raise SyntaxError_(msg("error.unclosed_paren"), source, brackets[-1].start)
    tokens.append(Token("eof", "", size, size, None))
    return tokens


def parse(source: str) -> list[Statement]:
    """The statements of a tensor program; raises a ProgramError with its position."""
    return _Parser(source).program()


class _Parser:
    def __init__(self, source: str) -> None:
        self.source = source
        self.tokens = tokenize(source)
        self.pos = 0
        self.depth = 0
        self.lines = LineIndex(source)

    @property
    def token(self) -> Token:
        return self.tokens[self.pos]

    def take(self) -> Token:
        token = self.tokens[self.pos]
        self.pos += 1
        return token

    def at(self, text: str) -> bool:
        token = self.tokens[self.pos]
        return token.kind == "op" and token.text == text

    def expect(self, text: str) -> Token:
        if not self.at(text):
            raise self.unexpected(msg("error.tensor.expected", expected=text))
        return self.take()

    def unexpected(self, message: str | None = None) -> SyntaxError_:
        token = self.token
        if message is None:
            found = msg("error.tensor.end_of_input") if token.kind == "eof" else token.text
            if token.kind == "newline":
                found = msg("error.tensor.end_of_line")
            message = msg("error.expected_expression", found=found)
        return SyntaxError_(message, self.source, token.start, max(token.end, token.start + 1))

    def program(self) -> list[Statement]:
        statements: list[Statement] = []
        while self.token.kind != "eof":
            if self.token.kind == "newline":
                self.take()
                continue
            statements.append(self.statement())
            self.check_height(statements[-1])
            if self.token.kind not in ("newline", "eof"):
                raise self.unexpected(msg("error.tensor.statement_end"))
        if not statements:
            raise SyntaxError_(msg("error.empty_program"), self.source, 0)
        return statements

    def check_height(self, statement: Statement) -> None:
        """Refuse an expression more than MAX_NESTING operations deep (`A + A + … + A` of 300
        terms, `x.t().t()…`): the program is run by walking its trees, so their height is
        bounded as nesting is (counted with an explicit stack: any height is measured)."""
        stack = [(statement.expr, 1)]
        while stack:
            node, height = stack.pop()
            if height > MAX_NESTING:
                raise LimitExceeded(
                    msg("error.tensor.too_deep", limit=Count(MAX_NESTING)),
                    self.source, statement.expr.start, statement.expr.end,
                )  # fmt: skip
            stack.extend((child, height + 1) for child in node.args)
            stack.extend((value, height + 1) for _, value in node.keywords)

    def statement(self) -> Statement:
        first = self.token
        line = self.lines.position(first.start)[0]
        if first.kind == "note":
            self.take()
            note = Node("note", first.start, first.end)
            return Statement(None, first.start, first.start, note, line)
        following = self.tokens[self.pos + 1]
        if first.kind == "name" and following.kind == "op" and following.text == "=":
            self.pos += 2
            return Statement(first.text, first.start, first.end, self.expression(), line)
        if first.kind == "name" and following.kind == "op" and following.text in AUGMENTED:
            self.pos += 2
            right = self.expression()
            op = AUGMENTED[following.text]
            target = Node("name", first.start, first.end, text=first.text)
            expr = Node(
                "binary", first.start, right.end, op, (target, right),
                op_start=following.start, op_end=following.end,
            )  # fmt: skip
            return Statement(first.text, first.start, first.end, expr, line)
        expr = self.expression()
        if self.at("=") and expr.kind == "attr" and expr.args[0].kind == "name":
            self.take()  # `W.requires_grad = True`, `p.grad = None`
            value = self.expression()
            name = expr.args[0]
            return Statement(name.text, name.start, name.end, value, line, expr.text)
        return Statement(None, first.start, first.start, expr, line)

    def expression(self, floor: int = 0) -> Node:
        """An expression of operators binding tighter than `floor` (Pratt's loop)."""
        self.depth += 1
        if self.depth > MAX_NESTING:
            token = self.token
            raise LimitExceeded(
                msg("error.nesting_limit", limit=Count(MAX_NESTING)), self.source, token.start
            )
        left = self.prefix()
        while True:
            token = self.token
            if token.kind != "op" or token.value not in PRECEDENCE:
                break
            op = str(token.value)
            precedence = PRECEDENCE[op]
            if precedence <= floor:
                break
            self.take()
            right = self.expression(precedence - 1 if op in RIGHT else precedence)
            left = Node(
                "binary", left.start, right.end, op, (left, right),
                op_start=token.start, op_end=token.end,
            )  # fmt: skip
        self.depth -= 1
        return left

    def prefix(self) -> Node:
        token = self.token
        if token.kind == "op" and token.text in ("-", "+"):
            self.take()
            operand = self.expression(NEGATION)
            return Node("unary", token.start, operand.end, token.text, (operand,))
        return self.postfix(self.atom())

    def atom(self) -> Node:
        token = self.take()
        if token.kind == "num":
            return Node("num", token.start, token.end, value=token.value, text=token.text)
        if token.kind == "str":
            return Node("str", token.start, token.end, value=token.value, text=token.text)
        if token.kind == "name":
            return Node("name", token.start, token.end, text=token.text)
        if token.kind == "op" and token.text == "(":
            items, close = self.items(")")
            if len(items) == 1 and self.tokens[self.pos - 2].text != ",":  # `(x)`, not `(x,)`
                inner = items[0]
                return inner._replace(start=token.start, end=close.end)
            return Node("list", token.start, close.end, "(", tuple(items))
        if token.kind == "op" and token.text == "[":
            items, close = self.items("]")
            return Node("list", token.start, close.end, "[", tuple(items))
        self.pos -= 1
        raise self.unexpected()

    def items(self, close: str, item: Callable[[], Node] | None = None) -> tuple[list[Node], Token]:
        """Comma-separated expressions (or what `item` reads) up to `close` (a trailing comma
        allowed)."""
        items: list[Node] = []
        while not self.at(close):
            items.append(item() if item is not None else self.expression())
            if not self.at(close):
                self.expect(",")
        return items, self.take()

    def index_item(self) -> Node:
        """An index, or a slice `start:stop:step` (any may be left out: `x[:, 0]`, `x[::2]`), a
        `slice` node whose args are its three bounds (a `none` node for one left out)."""
        first = self.token
        start = Node("none", first.start, first.start)
        if not self.at(":"):
            start = self.expression()
            if not self.at(":"):
                return start
        colon = self.take()
        stop = Node("none", colon.end, colon.end)
        if not (self.at(",") or self.at("]") or self.at(":")):
            stop = self.expression()
        step = Node("none", stop.end, stop.end)
        if self.at(":"):
            second = self.take()
            step = Node("none", second.end, second.end)
            if not (self.at(",") or self.at("]")):
                step = self.expression()
        return Node("slice", first.start, max(stop.end, step.end), ":", (start, stop, step))

    def postfix(self, node: Node) -> Node:
        while True:
            if self.at("("):
                node = self.call(node)
            elif self.at("["):
                self.take()
                indices, close = self.items("]", self.index_item)
                if not indices:
                    raise SyntaxError_(msg("error.tensor.empty_index"), self.source, close.start)
                node = Node("index", node.start, close.end, "[", (node, *indices))
            elif self.at("."):
                dot = self.take()
                name = self.token
                if name.kind != "name":
                    raise self.unexpected(msg("error.tensor.expected", expected="name"))
                self.take()
                node = Node(
                    "attr", node.start, name.end, ".", (node,), text=name.text,
                    op_start=dot.start, op_end=name.end,
                )  # fmt: skip
            else:
                return node

    def call(self, callee: Node) -> Node:
        self.take()
        args: list[Node] = []
        keywords: list[tuple[str, Node]] = []
        while not self.at(")"):
            token, following = self.token, self.tokens[self.pos + 1]
            if token.kind == "name" and following.kind == "op" and following.text == "=":
                self.pos += 2
                keywords.append((token.text, self.expression()))
            elif keywords:
                raise self.unexpected(msg("error.tensor.positional_after_keyword"))
            else:
                args.append(self.expression())
            if not self.at(")"):
                self.expect(",")
        close = self.take()
        return Node(
            "call", callee.start, close.end, "(", (callee, *args), tuple(keywords),
            op_start=callee.start, op_end=close.end,
        )  # fmt: skip
