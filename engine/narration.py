"""The words of the timeline: how a number is written, how a node is named, and narration
templates, filled with the numbers to give the narration.

A template is a step's narration with each number that comes from the numbers arrays (the
`data` of a node, a contribution's `upstream`, …) replaced by a slot `{FORMAT:ARRAY:INDEX}`:
FORMAT `n` writes the number as `fmt` does, `f` as `factor` does (an operand: `(−3)`); ARRAY
names one of the arrays of the numbers reply and INDEX is a 0-based index into it. A node is
named by the slot `{t:text:INDEX}`, FORMAT `t` writing the text as it is: the array `text` is
the nodes' `text` (by index), so a template refers to a node by its index instead of repeating
its name (a reply names each node once, however many steps speak of it). Literal braces are
written `{{` and `}}`. Numbers that are not in those arrays (input indexes, counts, the seed's
1, a constant exponent) are plain text. The grammar is a subset of Python's format strings
(field `n`, `f` or `t`, format spec `ARRAY:INDEX`), which `fill` relies on.

The timeline is made of patterns (engine/step_reader.py): templates whose INDEX may name a part
of their step instead (`node`, `in0`, `e0`, `c0`, `visit`), so that steps alike share one
pattern (`{t:text:node} = {t:text:in0} + {t:text:in1} = …` for every sum of two names). The
Narrator writes a node's title and formula as patterns.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from operator import getitem
from typing import TYPE_CHECKING, Any

from .formulas import Formula
from .functions import ATOM, spelled
from .i18n import Message, msg
from .ops import MINUS, OPS, expansion_step, row_of
from .step_reader import Pattern, Timeline

if TYPE_CHECKING:
    from .value import Value

TEXT_MAX = 32
LOOSEST = min(op.precedence for op in OPS.values())  # `+` and `-`

# The JSON spellings of non-finite numbers, which the numbers reply holds.
_NON_FINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def fmt(x: float | str, decimals: int | None = None) -> str:
    """A number written for people, the one way chainrule writes numbers in Python: integers
    plainly, else up to 6 significant digits (narration, warnings, messages), with the page's
    minus sign (`−3`, `1e−05`), as the page writes numbers; with `decimals`, that many decimal
    places as micrograd's `draw_dot` writes them (`-2.0000`). Non-finite numbers are `nan`,
    `inf`, `−inf`; a reply's spellings of them ("Infinity", …) are read too."""
    if type(x) is str:
        x = _NON_FINITE[x]
    if math.isnan(x):  # type: ignore[arg-type]
        return "nan"
    if math.isinf(x):
        text = "inf" if x > 0 else "-inf"
    elif decimals is not None:
        return f"{x:.{decimals}f}"
    else:
        text = str(int(x)) if x == int(x) and abs(x) < 1e15 else f"{x:.6g}"
    return text if decimals is not None or "-" not in text else text.replace("-", MINUS)


def factor(x: float | str) -> str:
    """A number as an operand in narration: negatives in parentheses, `1 × (−1)`."""
    text = fmt(x)
    return f"({text})" if text.startswith(MINUS) else text


def slot(array: str, index: int | str) -> str:
    """The slot of `array[index]` written as `fmt` does (a pattern's INDEX may be relative:
    `node`, `in0`, …)."""
    return f"{{n:{array}:{index}}}"


def operand_slot(array: str, index: int | str) -> str:
    """The slot of `array[index]` written as an operand (`factor`)."""
    return f"{{f:{array}:{index}}}"


def text_slot(index: int | str) -> str:
    """The slot of the text of node `index` (its name in narration; `node`, `in0`: relative)."""
    return f"{{t:text:{index}}}"


NODE_NAME = text_slot("node")  # a pattern's name of its step's node


def escape(text: str) -> str:
    """`text` as template text: its braces doubled."""
    if "{" in text or "}" in text:
        return text.replace("{", "{{").replace("}", "}}")
    return text


class _Numbers:
    """A format field of `fill`: `format(self, "data:3")` writes `numbers["data"][3]`."""

    __slots__ = ("numbers", "write")

    def __init__(self, numbers: Mapping[str, Sequence[float | str]], write: Callable) -> None:
        self.numbers = numbers
        self.write = write

    def __format__(self, spec: str) -> str:
        array, _, index = spec.partition(":")
        return self.write(self.numbers[array][int(index)])


_SIX_DIGITS = "{:.6g}".format


def fmt_all(values: Sequence[float | str]) -> list[str]:
    """`fmt` of every number of an array (a timeline fills from whole arrays): written `.6g` in
    one pass, then as `fmt` writes it where that differs: a minus sign, an exponent (an integer
    of 7 to 15 digits is written whole), −0; an array with a non-finite number spelled as text
    is written by `fmt`, number by number."""
    try:
        texts = list(map(_SIX_DIGITS, values))
    except ValueError:  # "Infinity", "NaN": the reply's spellings
        return list(map(fmt, values))
    if "-" not in (joined := "".join(texts)) and "e" not in joined:
        return texts
    return [
        text
        if "-" not in text and "e" not in text
        else (fmt(x) if "e" in text or text == "-0" else text.replace("-", MINUS))
        for text, x in zip(texts, values, strict=True)
    ]


class _Written(dict):
    """Every number of an array written once, the first time a slot reads that array: as `fmt`
    writes it, or as `factor` does, from the numbers as `fmt` wrote them (`as_factors_of`)."""

    def __init__(
        self, numbers: Mapping[str, Sequence[float | str]], as_factors_of: _Written | None = None
    ) -> None:
        super().__init__()
        self.numbers = numbers
        self.as_factors_of = as_factors_of

    def __missing__(self, array: str) -> list[str]:
        if self.as_factors_of is None:
            written = self[array] = fmt_all(self.numbers[array])
        else:
            texts = self.as_factors_of[array]
            written = self[array] = (
                [f"({text})" if text.startswith(MINUS) else text for text in texts]
                if MINUS in "".join(texts)
                else texts
            )
        return written


def _text(value: float | str) -> str:
    return value  # type: ignore[return-value]  # the `text` array holds text


def _fill_with(fields: Mapping[str, object]) -> Callable[[str], str]:
    def fill(template: str) -> str:
        if "{" in template or "}" in template:
            return template.format_map(fields)
        return template  # no slot, no brace: most steps of the sort

    return fill


def fill(template: str, numbers: Mapping[str, Sequence[float | str]]) -> str:
    """The narration of `template` with its slots filled from `numbers` (arrays of floats, or
    of the numbers reply's JSON values, where non-finite numbers are strings; `text`, the
    nodes' texts)."""
    fields = {
        "n": _Numbers(numbers, fmt),
        "f": _Numbers(numbers, factor),
        "t": _Numbers(numbers, _text),
    }
    return _fill_with(fields)(template)


# The numbers arrays of the backward pass, which a reply's steps hold as they are.
BACKWARD_ARRAYS = ("step_grad", "contribution", "grad_before", "grad_after")


def reply_numbers(reply: Mapping[str, Any]) -> dict[str, list[Any]]:
    """The arrays the templates of a trace's reply (`Trace.to_dict()`, `POST /api/graph`) read,
    gathered from it: the nodes' `text` (and in forward mode their `tangent`) and the numbers
    arrays of `POST /api/values` (the backward pass's are the steps' columns)."""
    nodes, steps = reply["nodes"], reply["steps"]
    arrays = {
        "text": [node["text"] for node in nodes],
        "data": [node["data"] for node in nodes],
        "local_grad": [edge["local_grad"] for edge in reply["edges"]],
        **{name: steps[name] for name in BACKWARD_ARRAYS},
    }
    if reply.get("pass") == "forward":  # forward mode's steps read each node's tangent
        arrays["tangent"] = [node["tangent"] for node in nodes]
    return arrays


def narrations(reply: Mapping[str, Any]) -> list[str]:
    """The narration of every step of a trace's reply, in order: each template filled.

    A pattern is bound once to the arrays its slots read (each array written once, whole): its
    narration is a %-format of the texts of its relative slots, picked out of the arrays by
    their indices among the step's parts (`step_reader.Timeline`), its plain slots written in;
    no template is written (but for a step whose pattern names a part it lacks)."""
    timeline = Timeline(reply)
    numbers = reply_numbers(reply)
    numbers_written = _Written(numbers)
    written = {"n": numbers_written, "f": _Written(numbers, numbers_written), "t": numbers}
    plain, visited = timeline.pickers()
    bound: list[tuple[str, tuple[Sequence[Any], ...]] | None] = [None] * len(plain)
    said: list[str] = []
    append = said.append
    for step, (phase, template, parts) in enumerate(
        zip(timeline.phase, timeline.template, timeline.parts, strict=True)
    ):
        found = bound[template]
        if found is None:
            found = bound[template] = _bind(timeline.patterns[template], written)
        narration, arrays = found
        pick = visited[template] if phase == "backward" else plain[template]
        try:
            if pick is None:
                append(narration)
            elif len(arrays) == 1:
                append(narration % arrays[0][pick(parts)])
            else:
                append(narration % tuple(map(getitem, arrays, pick(parts))))
        except (LookupError, TypeError):  # a slot names a part this step lacks
            append(fill(timeline.resolved(step), numbers))
    return said


def _bind(
    pattern: Pattern, written: Mapping[str, Mapping[str, Sequence[Any]]]
) -> tuple[str, tuple[Sequence[Any], ...]]:
    """`pattern`'s narration as a %-format of its relative slots' texts, with its plain slots
    written in, and the array each relative slot reads (as written)."""
    text = [pattern.texts[0]]
    arrays = []
    for (letter, array, ref, index), after in zip(pattern.slots, pattern.texts[1:], strict=True):
        if ref is None:
            text.append(str(written[letter][array][index]).replace("%", "%%"))
        else:
            text.append("%s")
            arrays.append(written[letter][array])
        text.append(after)
    narration = "".join(text)
    return (narration % () if not arrays else narration), tuple(arrays)


# Runs of non-space, cut at TEXT_MAX + 1: enough to know the text must be truncated.
WORDS = re.compile(rf"\S{{1,{TEXT_MAX + 1}}}")
WINDOW = 2 * TEXT_MAX  # how much of a span `short_text` reads first


def short_text(source: str, start: int, end: int) -> str:
    """`source[start:end]` with whitespace runs collapsed, at most TEXT_MAX characters.

    Reads only the first words of the span: a long sum's nodes each span most of the source,
    so collapsing whole spans would make a 20,000-term sum quadratic (minutes). The first
    WINDOW characters nearly always hold them (`str.split`, one call); a span that starts with
    more blanks than that is read word by word."""
    words = source[start : min(end, start + WINDOW)].split()
    if end - start <= WINDOW:  # the whole span
        text = " ".join(words)
    else:  # the last word may go on past the window: enough without it?
        text = " ".join(words[:-1])
        if len(text) <= TEXT_MAX:
            text = _first_words(source, start, end)
    return _cut(text)


def _cut(text: str) -> str:
    """`text`, at most TEXT_MAX characters: cut with "…"."""
    return text if len(text) <= TEXT_MAX else text[: TEXT_MAX - 1] + "…"


def _first_words(source: str, start: int, end: int) -> str:
    """The first words of `source[start:end]`, one space apart, a little over TEXT_MAX
    characters when there are that many (a word longer than that is cut into pieces: the text
    is truncated before the second one)."""
    words: list[str] = []
    length = -1
    for match in WORDS.finditer(source, start, end):
        words.append(match.group())
        length += len(words[-1]) + 1
        if length > TEXT_MAX:
            break
    return " ".join(words)


class Narrator:
    """Short names and formulas of nodes, for narration and the `text`/`expansion` fields.

    A node is named by its label, else by its source text; a `helpers` node (one that
    `expand_derived` made inside a derived operation, such as `b·(-1)` of `a - b`) shares the
    whole operation's source span, so it is named by its own formula instead.
    """

    def __init__(
        self, source: str, nodes: list[Value], helpers: Collection[int] = frozenset()
    ) -> None:
        self.source = source
        self.nodes = nodes
        self.helpers = helpers
        self._texts: list[str | None] = [None] * len(nodes)
        self._names: list[str | None] = [None] * len(nodes)
        self._titles: list[str | None] = [None] * len(nodes)
        self._formulas: dict[tuple[int, float | None], str] = {}  # by (row, exponent)
        self._title_shapes: dict[tuple, str] = {}  # title patterns by their shape

    def text(self, node: Value) -> str:
        cached = self._texts[node.id]
        if cached is None:
            if node.label:
                cached = node.label
            elif node.id in self.helpers:  # its formula, cut as a span's text is: a body
                # expanded from nested calls would otherwise double its text at each level
                cached = _cut(self.formula(node))
            else:
                cached = short_text(self.source, node.start, node.end)
            self._texts[node.id] = cached
        return cached

    def name(self, node: Value) -> str:
        """The text of `node` as template text."""
        cached = self._names[node.id]
        if cached is None:
            cached = self._names[node.id] = escape(self.text(node))
        return cached

    def operand(self, node: Value, bracket_compound: bool = False) -> str:
        """The text of `node` as an operand: a negative constant in brackets (`a·(-3)`), and
        with `bracket_compound` any text that is not one name, number, call or bracket
        (`(b**2)^-1`); a formula built from the source's own structure needs no more."""
        text = self.text(node)
        return f"({text})" if _bracketed_as_operand(node, text, bracket_compound) else text

    def formula(self, node: Value, parts: list[str] | None = None) -> str:
        """`a + b`, `e·c`, `a^2`, `tanh(n)` from the inputs' texts (or the given parts)."""
        names = self._operands(node) if parts is None else parts
        if node.op == "**k":  # the one shape with a constant exponent
            return row_of(node).shape.format(*names, k=fmt(node.exponent))  # type: ignore[arg-type]
        return row_of(node).shape.format(*names)

    def _operands(self, node: Value) -> list[str]:
        """The texts of `node`'s inputs as its formula writes them."""
        return [
            f"({self.text(c)})" if bracketed else self.text(c)
            for c, bracketed in zip(node.inputs, self._operand_brackets(node), strict=True)
        ]

    def _operand_brackets(self, node: Value) -> list[bool]:
        """Whether `node`'s formula brackets each input's text."""
        op, inputs, row = node.op, node.inputs, row_of(node)
        if row.call:
            return [False] * len(inputs)
        # The shapes expand_derived builds, X·(-1) and X^-1 (a power's base: the left operand
        # of a right-associative op), bracket a compound X (as the expansion does): the source
        # never wrote them, so its brackets cannot be relied on.
        compound_first = row.right or (
            op == "*" and inputs[1].kind == "const" and inputs[1].data < 0
        )
        text = self.text
        # `_bracketed_as_operand` of each input, without a call for most: only a negative
        # constant is bracketed, but for the first input of those shapes.
        brackets = [c.kind == "const" and text(c).startswith("-") for c in inputs]
        if compound_first and not brackets[0]:
            brackets[0] = _bracketed_as_operand(inputs[0], text(inputs[0]), True)
        return brackets

    def title_pattern(self, node: Value) -> str:
        """`title` as a pattern: the node named `{t:text:node}`, its inputs `{t:text:in0}`, …,
        in brackets where the title brackets their text. Made once a node: the forward,
        backward and tangent steps each name it."""
        cached = self._titles[node.id]
        if cached is not None:
            return cached
        if not node.inputs:
            cached = NODE_NAME
        else:  # the same for every node of one op, exponent, bracketing and labelling
            brackets = tuple(self._operand_brackets(node))
            shape = (id(row_of(node)), node.exponent, brackets, not node.label)
            cached = self._title_shapes.get(shape)
            if cached is None:
                operands = [
                    f"({text_slot(f'in{j}')})" if bracketed else text_slot(f"in{j}")
                    for j, bracketed in enumerate(brackets)
                ]
                formula = self.formula(node, operands)
                cached = f"{NODE_NAME} = {formula}" if node.label else formula
                self._title_shapes[shape] = cached
        self._titles[node.id] = cached
        return cached

    def formula_of_numbers(self, node: Value) -> str:
        """The formula with the inputs' data in place of their names: `2 + (-3)`, `log(-1)`."""
        operand = fmt if _called(node) else factor  # a call's parentheses suffice
        return self.formula(node, [operand(c.data) for c in node.inputs])

    def formula_pattern(self, node: Value) -> str:
        """`formula_of_numbers` as a pattern: the inputs' `data` slots (`{f:data:in0}`, …) in
        place of their names; the same for every node of one op (and exponent)."""
        row = row_of(node)
        key = (id(row), node.exponent)
        found = self._formulas.get(key)
        if found is None:
            write = slot if row.call else operand_slot  # a call's parentheses suffice
            parts = [write("data", f"in{j}") for j in range(len(node.inputs))]
            found = self._formulas[key] = self.formula(node, parts)
        return found

    def expansion(self, node: Value) -> str | None:
        """A derived operation in micrograd's primitives, from its row's expansion, spelled as
        narration spells each primitive: `a + b·(−1)`, `a·(b**2)^(−1)`. An input is bracketed
        when compound, but for the left operand of the loosest operator (`a - b + c·(−1)`)."""
        if node.function is not None:
            return self.body(node)
        expansion = OPS[node.op].expansion if node.op else None  # type: ignore[index]
        return None if expansion is None else self._expanded(expansion, node.inputs, True)

    def body(self, node: Value) -> str:
        """The body of the program's function that `node` calls, its parameters replaced by
        the inputs' texts: `log(1 + exp(a*b))` for `softplus(a*b)`."""
        return spelled(
            node.function,  # type: ignore[arg-type]
            "shape",
            lambda index: self._argument(node.inputs[index]),
            lambda expr: (_constant(expr.value), ATOM),
            _constant,
        )

    def _argument(self, node: Value) -> tuple[str, int]:
        """An input's text in a body, and how tightly it binds (a compound text loosest)."""
        text = self.text(node)
        simple = node.kind != "op" or node.label or _called(node) or _bracketed(text)
        return text, ATOM if simple else LOOSEST

    def _expanded(self, formula: Formula, inputs: tuple[Value, ...], bracket: bool) -> str:
        if formula.head == "var":
            return self.operand(inputs["ab".index(formula.value)], bracket)  # type: ignore[arg-type]
        if formula.head == "num":
            return _constant(formula.value)  # type: ignore[arg-type]
        key, operands, exponent = expansion_step(formula)
        loosest = OPS[key].precedence == LOOSEST
        parts = [
            self._expanded(operand, inputs, index > 0 or not loosest)
            for index, operand in enumerate(operands)
        ]
        return OPS[key].shape.format(*parts, k=_constant(exponent))

    def title(self, node: Value) -> str:
        """`f = e·c` for a named operation, `a*b` for an unnamed one, `a` for a leaf."""
        if not node.inputs:
            return self.text(node)
        if node.label:
            return f"{node.label} = {self.formula(node)}"
        return self.formula(node)

    def warning(self, kind: str, node: Value) -> Message:
        """The message of a node's warning (domain, overflow, division_by_zero)."""
        shown = self.formula_of_numbers(node) if node.inputs else self.text(node)
        return msg(f"warning.node.{kind}", formula=shown, result=fmt(node.data))


def _bracketed_as_operand(node: Value, text: str, bracket_compound: bool) -> bool:
    """Whether an operand's `text` is written in brackets: a negative constant (`a·(-3)`), and
    with `bracket_compound` a text that is not one name, number, call or bracket."""
    if node.kind == "const":
        return text.startswith("-")
    if not bracket_compound or node.kind == "leaf" or node.label or _called(node):
        return False
    return not _bracketed(text)


def _called(node: Value) -> bool:
    """Whether the node's op is written as a call (`tanh(x)`, `softplus(x)`)."""
    return node.op is not None and row_of(node).call


def _constant(x: float) -> str:
    """A number of an expansion: `(−1)`, with the page's minus sign."""
    return f"({MINUS}{fmt(-x)})" if x < 0 else fmt(x)


def _bracketed(text: str) -> bool:
    """Whether `text` (at most TEXT_MAX + 1 characters) is one bracket: `(a + b)`, not
    `(a)*(b)`; a text cut by "…" inside its first bracket counts as one."""
    if not text.startswith("("):
        return False
    depth = 0
    for index, ch in enumerate(text):
        depth += (ch == "(") - (ch == ")")
        if depth == 0:
            return index == len(text) - 1
    return text.endswith("…")
