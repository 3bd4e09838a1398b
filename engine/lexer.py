"""Turn source text into tokens; every token knows its offsets and no character is skipped
silently (whitespace and comments are the only things dropped)."""

from __future__ import annotations

import keyword
import re
import unicodedata

from .errors import QUOTE_MAX, SyntaxError_, quoted
from .i18n import Count, msg
from .ops import FUNCTIONS, SCRIPT_NAMES

MAX_NUMBER_DIGITS = 400

_NUMBER = re.compile(r"(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
# A number written with _ between digits (`1_000`, `2_5.5`, `1e_5`): said as what it means.
_GROUPED = re.compile(r"[\d_]*\.?[\d_]*(?:[eE][+-]?_*[\d_]+)?")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_FORBIDDEN = re.compile(r"[\x00\ud800-\udfff]")
# One match per token, as the tuple of its groups: the blanks before it, then the token in the
# group of its kind (num, name, op, newline), or a comment or lone carriage return (skipped),
# or any other character (an error). Matches are contiguous (only blanks at the very end are
# left out), so a token's offset is the sum of the lengths before it.
_TOKEN = re.compile(
    r"([ \t\f\v]*)(?:"
    r"((?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)"
    r"|([A-Za-z_][A-Za-z0-9_]*)"
    r"|(\*\*=|[-+*/]=|\*\*|[-+*/^(),.]|=(?!=))"
    r"|('[^'\\\r\n]*'|\"[^\"\\\r\n]*\")"
    r"|(\r?\n|;)"
    r"|(\#(?:[^\r\n]|\r(?!\n))*|\r(?!\n))"
    r"|([^ \t\f\v]))",
    re.ASCII,
)
_KEYWORDS = frozenset(keyword.kwlist)

# The micrograd dialect (docs/language.md): methods a Value may call (the table's functions),
# and whole lines of micrograd code that are read as notes, never run: imports, print(...),
# `x.label = 'x'`, `x.grad` on its own, and the helpers chainrule's own micrograd scripts define.
METHODS = (*FUNCTIONS, "backward")
HELPERS = SCRIPT_NAMES
METHOD_LIST = " ".join(f".{name}()" for name in FUNCTIONS)  # as messages list them: .relu() …
_METHOD_CALL = re.compile(r"\.(?:" + "|".join(METHODS) + r")\s*\(", re.ASCII)
_SKIPPED_LINE = re.compile(
    # (Each part can match a run of blanks in one way only: no input makes it backtrack long.)
    r"^[ \t]*(?:(?P<import>(?:from[ \t]+micrograd(?:\.\w+)*[ \t]+import[ \t]+"
    r"[\w()]+(?:[ \t]*,[ \t]*[\w()]+)*"
    r"|import[ \t]+(?:micrograd(?:\.\w+)*|math|random)(?:[ \t]+as[ \t]+\w+)?)"
    r"[ \t]*(?:\#[^\r\n]*)?)$"
    r"|(?P<print>print[ \t]*\([^\r\n]*\)[ \t]*(?:\#[^\r\n]*)?)$"
    r"|(?P<attribute>[A-Za-z_]\w*\.(?:label|grad|data)(?:[ \t]*=[^\r\n]*)?[ \t]*(?:\#[^\r\n]*)?)$"
    r"|(?P<helper>def[ \t]+(?:" + "|".join(HELPERS) + r")[ \t]*\([^\r\n]*\):[ \t]*"
    r"(?:\r?\n(?:[ \t]*(?:\#[^\r\n]*)?(?=\r?\n)|[ \t]+[^\r\n]*))*))",
    re.ASCII | re.MULTILINE,
)
# `L.backward()` on a line of its own marks the result: what follows it (micrograd code that reads
# the gradients, prints, asserts) is not read at all.
_BACKWARD_LINE = re.compile(
    r"^[ \t]*[A-Za-z_]\w*\.backward\(\)[ \t]*(?:\#[^\r\n]*)?$", re.MULTILINE
)
_NUMBER_TAIL = frozenset("._abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")


class Token:
    """One token: `kind` is `num`, `name`, `op`, `newline` (`\n`, `\r\n` or `;`) or `eof`;
    `value` is the operator (`^` reads as `**`), the name, the float of a number, the text of a
    newline, or None at `eof`."""

    __slots__ = ("kind", "text", "start", "end", "value")

    def __init__(self, kind: str, text: str, start: int, end: int, value: object) -> None:
        self.kind = kind
        self.text = text
        self.start = start
        self.end = end
        self.value = value

    def __repr__(self) -> str:
        return f"Token({self.kind}, {self.text!r}, {self.start})"


def describe_char(ch: str) -> str:
    """Name a character for an error message, safely for JSON (no raw control characters)."""
    code = f"U+{ord(ch):04X}"
    name = unicodedata.name(ch, None)
    if "\ud800" <= ch <= "\udfff":
        return msg("char.lone_surrogate", code=code)
    if ch == "\x00":
        return f"{code} (NUL)"
    if not ch.isprintable():
        return f"{code} ({name})" if name else code
    if ord(ch) > 127:
        return f"'{ch}' ({code} {name})" if name else f"'{ch}' ({code})"
    return f"'{ch}'"


def tokenize(source: str) -> list[Token]:
    """Tokens of `source` ending with one `eof` token placed just past the last token.

    Whole lines of micrograd code that chainrule reads as notes (imports, print(...), `x.label =
    'x'`, its own helpers' definitions) are one `skip` token each, with the kind of line as its
    value. Raises SyntaxError_ at the first character that is not part of the language.
    """
    bad = _FORBIDDEN.search(source)
    if bad:
        raise SyntaxError_(
            msg("error.unexpected_character", char=describe_char(bad.group())), source, bad.start()
        )
    tokens: list[Token] = []
    start = 0
    backward = _BACKWARD_LINE.search(source)
    stop = len(source)
    if backward is not None:
        rest = source.find("\n", backward.end())
        if rest != -1 and source[rest:].strip():
            stop = rest + 1  # the newline ends the backward line
    for line in _SKIPPED_LINE.finditer(source, 0, stop):
        _tokenize_part(source, start, line.start(), tokens)
        text = line.group()
        blanks = len(text) - len(text.lstrip(" \t"))
        kind = line.lastgroup or "import"
        tokens.append(Token("skip", text[blanks:], line.start() + blanks, line.end(), kind))
        start = line.end()
    _tokenize_part(source, start, stop, tokens)
    if stop < len(source):
        tail = source[stop:]
        first = stop + len(tail) - len(tail.lstrip())
        tokens.append(Token("skip", source[first:].rstrip(), first, len(source.rstrip()), "after"))
    end = tokens[-1].end if tokens else 0
    tokens.append(Token("eof", "", end, end, None))
    return tokens


def _tokenize_part(source: str, start: int, stop: int, tokens: list[Token]) -> None:
    """Append the tokens of `source[start:stop]`."""
    append = tokens.append
    i = start
    for blanks, num, name, op, string, newline, skipped, other in _TOKEN.findall(
        source, start, stop
    ):
        i += len(blanks)
        if name:
            end = i + len(name)
            if name in _KEYWORDS or source.startswith(".", end):
                _name(source, i, tokens)
            append(Token("name", name, i, end, name))
        elif op:
            end = i + len(op)
            append(Token("op", op, i, end, "**" if op == "^" else op))
        elif num:
            end = i + len(num)
            after = source[end : end + 1]
            if after and (after in _NUMBER_TAIL):
                _number(source, i, tokens)
            if len(num) > 24 or "e" in num or "E" in num:
                _number(source, i, tokens)  # checks digits and overflow, then appends
            else:
                append(Token("num", num, i, end, float(num)))
        elif string:
            end = i + len(string)
            if not (len(tokens) >= 2 and tokens[-1].text == "=" and tokens[-2].text == "label"):
                raise SyntaxError_(msg("error.strings"), source, i, end)
            append(Token("str", string, i, end, string[1:-1]))
        elif newline:
            end = i + len(newline)
            append(Token("newline", newline, i, end, newline))
        elif skipped:
            end = i + len(skipped)
        else:
            if source.startswith("==", i):
                raise SyntaxError_(msg("error.comparisons"), source, i, i + 2)
            _reject(source, i)
            raise AssertionError(f"unreachable: {other!r}")  # pragma: no cover
        i = end


def _number(source: str, i: int, tokens: list[Token]) -> int:
    """Append the number at `i` after checking its digits and range, or raise for a number run
    into a `.`, a letter or `_` (with a fix-it where one is clear)."""
    match = _NUMBER.match(source, i)
    assert match is not None
    text = match.group()
    end = match.end()
    after = source[end : end + 1]
    if after == ".":
        raise SyntaxError_(msg("error.two_decimal_points"), source, i, end + 1)
    grouped = _GROUPED.match(source, i)
    if (
        grouped
        and "_" in grouped.group()
        and source[grouped.end() : grouped.end() + 1] not in _NUMBER_TAIL
    ):
        joined = grouped.group().replace("_", "")
        if len(joined) <= QUOTE_MAX and _NUMBER.fullmatch(joined) and float(joined) != float("inf"):
            raise SyntaxError_(
                msg("error.underscore_in_number", text=grouped.group(), number=joined),
                source,
                i,
                grouped.end(),
            )
    if after.isascii() and (after.isalnum() or after == "_") and after:
        word = _NAME.match(source, end)
        tail = word.group() if word else after
        raise SyntaxError_(
            msg("error.number_then_letters", text=quoted(text + tail), fix=_number_fix(text, tail)),
            source,
            i,
            end + len(tail),
        )
    digits = sum(c.isdigit() for c in text.split("e")[0].split("E")[0])
    if digits > MAX_NUMBER_DIGITS:
        raise SyntaxError_(
            msg("error.too_many_digits", digits=Count(digits), limit=MAX_NUMBER_DIGITS),
            source,
            i,
            end,
        )
    value = float(text)
    if value == float("inf"):
        shown = text if len(text) <= 24 else text[:20] + "…"
        raise SyntaxError_(msg("error.number_too_large", number=shown), source, i, end)
    tokens.append(Token("num", text, i, end, value))
    return end


def _number_fix(text: str, tail: str) -> str:
    """What to write instead of a number run into letters or `_`: only a program that means
    what the writer most likely meant (`5.e` lacks its exponent's digits)."""
    if tail.startswith("_"):
        return msg("error.fix.name_starts_with_digit")
    if len(text) + len(tail) > QUOTE_MAX:  # a fix-it is only useful whole
        return msg("error.fix.operator_between")
    product = f"{text.rstrip('.')}*{tail}"
    if tail[0] in "eE":
        example = f"{text}{tail[0]}3"
        if tail[1:2].isalpha():
            return msg("error.fix.exponent_or_product", e=tail[0], example=example, product=product)
        return msg("error.fix.exponent", e=tail[0], example=example)
    if text == "0" and tail[0] in "xXoObB":
        return msg("error.fix.decimal_only")
    return msg("error.fix.product", product=product)


# What an error about Python beyond the dialect says chainrule does read.
SUBSET = msg("error.subset", methods=METHOD_LIST)


def _name(source: str, i: int, tokens: list[Token]) -> int:
    """Check the name at `i` (the caller appends it): raise for a Python keyword or an
    attribute other than a method call (`a.relu()`)."""
    match = _NAME.match(source, i)
    assert match is not None
    text = match.group()
    end = match.end()
    if keyword.iskeyword(text):
        if text in ("lambda", "import", "from", "def", "class"):
            what = {"lambda": "lambdas", "import": "imports", "from": "imports"}.get(
                text, "definitions"
            )
            message = msg(f"error.{what}", word=text, subset=SUBSET)
        else:
            message = msg("error.python_keyword", word=quoted(text), subset=SUBSET)
        raise SyntaxError_(message, source, i, end)
    if source.startswith(".", end) and not _METHOD_CALL.match(source, end):
        attr = _NAME.match(source, end + 1)
        stop = attr.end() if attr else end + 1
        raise SyntaxError_(
            msg("error.attribute", name=quoted(source[end + 1 : stop]), subset=SUBSET),
            source,
            end,
            stop,
        )
    return end


def _reject(source: str, i: int) -> None:
    ch = source[i]
    if ch in "'\"":
        close = source.find(ch, i + 1)
        line_end = source.find("\n", i)
        stop = close + 1 if close != -1 and (line_end == -1 or close < line_end) else i + 1
        raise SyntaxError_(msg("error.strings"), source, i, stop)
    if ch == "[" or ch == "]":
        raise SyntaxError_(msg("error.brackets", subset=SUBSET), source, i)
    if ch in "<>!":
        width = 2 if source.startswith("=", i + 1) else 1
        raise SyntaxError_(msg("error.comparisons"), source, i, i + width)
    if ch == ":":
        if source.startswith(":=", i):
            raise SyntaxError_(msg("error.walrus"), source, i, i + 2)
        raise SyntaxError_(msg("error.colon"), source, i)
    if ch == "\\":
        raise SyntaxError_(msg("error.backslash"), source, i)
    raise SyntaxError_(msg("error.unexpected_character", char=describe_char(ch)), source, i)
