"""Turn source text into tokens; every token knows its offsets and no character is skipped
silently (whitespace and comments are the only things dropped)."""

from __future__ import annotations

import keyword
import re
import unicodedata
from collections.abc import Iterator

from .errors import QUOTE_MAX, NeedsRunning, SyntaxError_, quoted
from .i18n import Count, Message, msg
from .ops import FUNCTIONS, SCRIPT_NAMES, TORCH_FUNCTIONS

MAX_NUMBER_DIGITS = 400
MAX_PLAIN_NUMBER = 24  # longer numbers are read by `_number`, which checks their digits

_NUMBER = re.compile(r"(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
# A number written with _ between digits (`1_000`, `2_5.5`, `1e_5`): said as what it means.
_GROUPED = re.compile(r"[\d_]*\.?[\d_]*(?:[eE][+-]?_*[\d_]+)?")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_FORBIDDEN = re.compile(r"[\x00\ud800-\udfff]")
_KEYWORDS = frozenset(keyword.kwlist)

# The micrograd dialect (docs/python.md): methods a Value may call (the table's functions), and
# the statements of micrograd (and PyTorch) code that are read as notes, never run (among them
# the helpers chainrule's own micrograd scripts define).
METHODS = (*FUNCTIONS, "backward")
HELPERS = SCRIPT_NAMES
METHOD_LIST = " ".join(f".{name}()" for name in FUNCTIONS)  # as messages list them: .relu() …
_METHOD_CALL = re.compile(r"\.(?:" + "|".join(METHODS) + r")\s*\(", re.ASCII)
_ID = r"[A-Za-z_]\w*"
_STRING = r"""(?:'[^'\\\r\n]*'|"[^"\\\r\n]*")"""
# A call's arguments: anything up to a `;` outside strings (a `;` ends the statement).
_ARGS = rf"""\((?:[^\r\n;'"]|{_STRING})*\)"""
_RIGHT_SIDE = r"[ \t]*(?:[-+*/]|\*\*)?=(?!=)[^\r\n;#]*"
# A statement that is read as a note or a label, to its end (blanks, a comment and the `;` are
# left to the tokenizer). Each part can match a run of characters in one way only and none
# crosses a `;` outside a string, so the reader stays linear whatever the line (no input makes
# it backtrack long). HELPER_AT says where a helper's definition may start (a line's start).
_STATEMENT_BODY = rf"""[ \t]*(?:(?P<import>(?:import|from)[ \t][^\r\n;#]*)
    |(?P<print>print[ \t]*{_ARGS})
    |(?P<draw>(?:{_ID}(?:[ \t]*,[ \t]*{_ID})*[ \t]*=[ \t]*)?(?:draw_dot|trace|display)[ \t]*{_ARGS})
    |{_ID}[ \t]*\.[ \t]*(?:(?P<label>label[ \t]*=[ \t]*{_STRING})
        |(?P<grad>grad{_RIGHT_SIDE})
        |(?P<data>data{_RIGHT_SIDE})
        |(?P<shown>(?:grad|data)(?:[ \t]*\.[ \t]*item[ \t]*\([ \t]*\))?|item[ \t]*\([ \t]*\))
        |(?P<requires_grad>requires_grad
            (?:[ \t]*=[ \t]*(?:True|False)|_[ \t]*\([ \t]*(?:True|False)?[ \t]*\)))
        |(?P<manual_backward>_backward[ \t]*\([ \t]*\))
        |(?P<zero_grad>zero_grad[ \t]*\([ \t]*\))
        |(?P<render>render[ \t]*{_ARGS})))(?=[ \t]*(?:[;\#]|\r?$))
    |HELPER_AT[ \t]*(?P<helper>def[ \t]+(?:{"|".join(HELPERS)})[ \t]*\([^\r\n]*\):[ \t]*
        (?:\r?\n(?:[ \t]*(?:\#[^\r\n]*)?(?=\r?\n)|[ \t]+[^\r\n]*))*)
    |HELPER_AT[ \t]*(?P<define>def[ \t]+{_ID}[ \t]*\([ \t]*(?:{_ID}[ \t]*(?:,[ \t]*{_ID}[ \t]*)*)?\)
        [ \t]*:[ \t]*(?:\#[^\r\n]*)?(?:\r?\n[ \t]+)?return(?=[ \t(]))"""
# `L.backward()` as the last statement of its line marks the result: what follows it (micrograd
# code that reads the gradients, prints, asserts) is not read at all.
_BACKWARD_BODY = r"[ \t]*[A-Za-z_]\w*\.backward\(\)[ \t]*(?:\#[^\r\n]*)?(?=\r?$)"
_FLAGS = re.ASCII | re.MULTILINE | re.VERBOSE
# Each at the very start of the source, and after the `\n` or `;` that starts a statement (a
# pattern that opens with a set of characters is searched for those characters first, fast).
_FIRST_STATEMENT = re.compile(_STATEMENT_BODY.replace("HELPER_AT", ""), _FLAGS)
_STATEMENT = re.compile(
    r"[\n;](?:" + _STATEMENT_BODY.replace("HELPER_AT", r"(?<=\n)") + ")", _FLAGS
)
_FIRST_BACKWARD = re.compile(_BACKWARD_BODY, _FLAGS)
_BACKWARD_LINE = re.compile(r"[\n;]" + _BACKWARD_BODY, _FLAGS)
# A PyTorch scalar, read as its number (`torch.tensor(2.0, dtype=torch.float64,
# requires_grad=True)`, the lecture's `torch.Tensor([2.0]).double()`), and a PyTorch function.
_TORCH_NUMBER = (
    r"torch\.(?:tensor|Tensor|DoubleTensor)\([ \t]*(?:\[[ \t]*[-+]?NUMBER[ \t]*\]|[-+]?NUMBER)"
    r"(?:[ \t]*,[ \t]*(?:dtype[ \t]*=[ \t]*torch\.\w+|requires_grad[ \t]*=[ \t]*(?:True|False)))*"
    r"[ \t]*\)(?:\.(?:double|float)\(\)|\.requires_grad_\(\))*"
).replace("NUMBER", r"(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_TORCH_FUNCTION = "|".join(re.escape(name) for name in TORCH_FUNCTIONS)
_SIGNED_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
# A run of plain operands (a name, a number without exponent) joined by binary operators
# (`a0*b0 + a1*b1`, what long expressions are mostly made of): one `run` token instead of its
# tokens, which the parser reads in one loop (engine/parser.py `_Parser.run`). Nothing around an
# operand can join it into more (a name run into a `.`, a number into letters), and the last is
# no call's name and no target (no `(` or `=` follows): each part is the token that reading token
# by token gives. A run holding a keyword or a long number (which `_name` and `_number` check) is
# read token by token. tests/engine/test_run_tokens.py checks that every program reads the same
# either way.
# Each operand is matched once, atomically (`(?>…)`): a shorter one would fail the look at what
# follows anyway, and trying them all makes a long number run into a letter quadratic.
_RUN_OPERAND = r"(?>[A-Za-z_][A-Za-z0-9_]*|\d+\.?\d*|\.\d+)(?![A-Za-z0-9_.])"
_RUN = (
    rf"({_RUN_OPERAND}(?:[ \t\f\v]*(?:\*\*|[-+*/^])[ \t\f\v]*{_RUN_OPERAND})+"
    r"(?![ \t\f\v]*[(=]))"
)
# One match per token, as the tuple of its groups: the blanks before it, then the token in the
# group of its kind (run, num, PyTorch number, PyTorch function, name, op, newline), or a
# comment or lone carriage return (skipped), or any other character (an error). Matches are
# contiguous (only blanks at the very end are left out), so a token's offset is the sum of the
# lengths before it. RUN stands for the run's group (`_TOKEN_ONE_BY_ONE` never matches one).
_TOKEN = (
    r"([ \t\f\v]*)(?:"
    r"RUN"
    r"|((?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)"
    rf"|({_TORCH_NUMBER})"
    rf"|({_TORCH_FUNCTION})(?=[ \t]*\()"
    r"|([A-Za-z_][A-Za-z0-9_]*)"
    r"|(\*\*=|[-+*/]=|\*\*|[-+*/^(),.]|=(?!=))"
    r"|('[^'\\\r\n]*'|\"[^\"\\\r\n]*\")"
    r"|(\r?\n|;)"
    r"|(\#(?:[^\r\n]|\r(?!\n))*|\r(?!\n))"
    r"|([^ \t\f\v]))"
)
# A line that is an assignment of one plain operand or of one operation (`+ - * /`) of two
# (`y2 = y1 * 1.0001`, `x = 0.5`: what long programs are mostly made of), or that operand or
# operation alone (a bare expression: `1`, `a * b`, a notebook's last `L`), starting its line and
# ending before its line's end, a `;` or a comment: such lines in a row are one `line` token
# (value: see `_line_token`) instead of four or six tokens a line, which the parser reads as
# one statement a line at once (most of the time of reading a 100,000-node chain). The operands
# are those the token pattern reads alone (a name, a number without exponent) and nothing around
# them can join them into more: anything else on the line fails the lookahead. A line holding a
# keyword or a long word is read token by token (which checks them). tests/engine/
# test_line_tokens.py checks that every program reads the same either way.
# Matched atomically, as a run's operand (`_RUN_OPERAND`): a shorter one fails the lookahead.
_PLAIN = r"(?>[A-Za-z_][A-Za-z0-9_]*|\d+\.?\d*|\.\d+)"
_LINE_END = r"(?=[ \t\f\v]*(?:\r?\n|;|\#|$))"
# _TOKEN with such a line first (at a line's start only) in eight groups (target, `=` with its
# blanks, both empty for a bare expression, operand, blanks, operator, blanks, operand, and the
# newline right after it, matched with it to save a match a line), and _TOKEN alone with eight
# empty groups first (never matched): the same groups either way.
_LINE_OR_TOKEN = re.compile(
    rf"(?<![^\n])(?:([A-Za-z_][A-Za-z0-9_]*)([ \t]*=[ \t]*))?({_PLAIN})"
    rf"(?:([ \t]*)([-+*/])([ \t]*)({_PLAIN}))?{_LINE_END}(\r?\n)?|" + _TOKEN.replace("RUN", _RUN),
    re.ASCII,
)
_TOKEN_ALONE = re.compile(r"(?!)()()()()()()()()|" + _TOKEN.replace("RUN", _RUN), re.ASCII)
# _TOKEN_ALONE without runs: the tokens of a run, one by one.
_TOKEN_ONE_BY_ONE = re.compile(r"(?!)()()()()()()()()|" + _TOKEN.replace("RUN", "((?!))"), re.ASCII)
# A run split at its operators: its operands, each operator with its blanks between them (a
# `run` token's value).
_RUN_SPLIT = re.compile(r"([ \t\f\v]*(?:\*\*|[-+*/^])[ \t\f\v]*)")
NUMBER_STARTS = frozenset("0123456789.")  # what a number starts with
_NUMBER_TAIL = frozenset("._abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")


class Token:
    """One token: `kind` is `num`, `name`, `op`, `newline` (`\n`, `\r\n` or `;`) or `eof`;
    `value` is the operator (`^` reads as `**`), the name, the float of a number, the text of a
    newline, or None at `eof`. A `line` or `run` token stands for several (see `_line_token`,
    `_RUN`); `skip` and `label` tokens for statements read as notes (see `tokenize`)."""

    __slots__ = ("kind", "text", "start", "end", "value")

    def __init__(self, kind: str, text: str, start: int, end: int, value: object) -> None:
        self.kind = kind
        self.text = text
        self.start = start
        self.end = end
        self.value = value

    def __repr__(self) -> str:
        return f"Token({self.kind}, {self.text!r}, {self.start})"


# Signs a page, a PDF, a slide or chainrule's own numbers write (`−3.000`, `a·b`, `x²`) where
# the language reads the keyboard's: what to write instead.
TYPED_SIGNS = {
    "\u2212": "-", "\u2013": "-", "\u00b7": "*", "\u22c5": "*", "\u00d7": "*", "\u2217": "*",
    "\u00f7": "/", "\u00b2": "** 2", "\u00b3": "** 3",
}  # fmt: skip


def unexpected(ch: str) -> Message:
    """What to say of a character the language does not read: a sign copied from a page with
    the operator to write for it, else the character named."""
    write = TYPED_SIGNS.get(ch)
    if write is not None:
        return msg("error.typed_sign", char=describe_char(ch), write=write)
    return msg("error.unexpected_character", char=describe_char(ch))


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


# A request's program is bounded by its work, not its characters (issue 42; docs/api.md,
# "Limits"): by its tokens as a reader counts them, whatever their length: a name, a number, a
# string, an operator or a bracket is one, blanks and comments are free. A quick scan of its
# own, not the tokenizer (which reads a long run of one operator as one token), and it stops at
# the first token past the bound: refusing a program costs the bound, not the program.
_COUNTED = re.compile(
    r"""(?P<comment>#[^\n]*)|[^\W\d]\w*|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"""
    r"""|'(?:[^'\\\n]|\\.)*'?|"(?:[^"\\\n]|\\.)*"?|\*\*=?|//=?|[-+*/%@<>=!]=|->|\S"""
)


def token_past(source: str, limit: int) -> int | None:
    """Where the token after the first `limit` tokens of `source` starts (as `_COUNTED` counts
    them), or None when it has no more than `limit`."""
    counted = 0
    for token in _COUNTED.finditer(source):
        if token.lastgroup == "comment":
            continue
        counted += 1
        if counted > limit:
            return token.start()
    return None


def tokenize(source: str) -> list[Token]:
    """Tokens of `source` ending with one `eof` token placed just past the last token.

    Statements of micrograd (and PyTorch) code that chainrule reads as notes (imports,
    print(...), draw_dot(x), `x.grad`, `x.grad = 0.0`, `o._backward()`, its own helpers'
    definitions, what follows `L.backward()`) are one `skip` token each, with the kind of
    statement as its value; `x.label = 'x1*w1'` is one `label` token, its value the pair (name,
    label). Raises SyntaxError_ at the first character that is not part of the language, and
    NeedsRunning at the first Python that must run to be read (a loop, a list, `a.data += …`).
    """
    bad = _FORBIDDEN.search(source)
    if bad:
        raise SyntaxError_(
            msg("error.unexpected_character", char=describe_char(bad.group())), source, bad.start()
        )
    tokens: list[Token] = []
    start = 0
    stop = _reading_stop(source)
    separators = _Separators(source)
    statements = _starting(_FIRST_STATEMENT, _STATEMENT, source, stop)
    for at, statement in statements if _may_hold_statements(source) else ():
        if source[at - 1 : at] == ";" and not separators.ends_statement(at - 1):
            continue  # the `;` is inside a string or a comment
        _tokenize_part(source, start, at, tokens)
        if statement.lastgroup == "define":
            _definition_head(source, statement, tokens)
        else:
            tokens.append(_statement_token(source, at, statement))
        start = statement.end()
        separators.read_to(start)
    _tokenize_part(source, start, stop, tokens)
    if stop < len(source):
        tail = source[stop:]
        first = stop + len(tail) - len(tail.lstrip())
        tokens.append(Token("skip", source[first:].rstrip(), first, len(source.rstrip()), "after"))
    end = tokens[-1].end if tokens else 0
    tokens.append(Token("eof", "", end, end, None))
    return tokens


def _starting(
    first: re.Pattern[str], after: re.Pattern[str], source: str, stop: int
) -> Iterator[tuple[int, re.Match[str]]]:
    """Each match of a statement's pattern where a statement starts, in order, with the offset
    it starts at: `first` at the start of `source`, then `after` (the same, opening with the
    `\n` or `;` before the statement)."""
    opening = first.match(source, 0, stop)
    if opening is not None:
        yield 0, opening
    for match in after.finditer(source, opening.end() if opening else 0, stop):
        yield match.start() + 1, match


# What every statement `_STATEMENT` reads must hold: one of these words, or a name and a `.` at
# the start of a statement (`x.grad`, `e.label = 'e'`).
_STATEMENT_WORDS = ("import", "from", "print", "draw_dot", "trace", "display", "def")
_FIRST_NAME_DOT = re.compile(r"[ \t]*[A-Za-z_]\w*[ \t]*\.", re.ASCII)
_NAME_DOT = re.compile(r"[\n;][ \t]*[A-Za-z_]\w*[ \t]*\.", re.ASCII)
# What follows that `.`: a word (`grad`, `label`, …), which a number's `.` never is: looked for
# first, in one quick scan, as most long programs' `.` are decimal points.
_DOT_WORD = re.compile(r"\.[ \t]*[A-Za-z_]", re.ASCII)


def _may_hold_statements(source: str) -> bool:
    """Whether `_STATEMENT` can match anywhere in `source`: False for most programs, whose
    lines then need no attempt of its long pattern each (a fifth of reading a 50,000-line
    program)."""
    return (
        any(word in source for word in _STATEMENT_WORDS)
        or _FIRST_NAME_DOT.match(source) is not None
        or (_DOT_WORD.search(source) is not None and _NAME_DOT.search(source) is not None)
    )


def _statement_token(source: str, at: int, statement: re.Match[str]) -> Token:
    """The `skip` or `label` token of a statement a `_STATEMENT` matched from `at`; raises
    NeedsRunning for a change of `x.data` (a value that only running the code knows)."""
    text = source[at : statement.end()]
    blanks = len(text) - len(text.lstrip(" \t"))
    text = text[blanks:]
    start = at + blanks
    kind = statement.lastgroup or "import"
    if kind == "data":
        name = text.split(".")[0].strip()
        raise needs_running("data", source, start, statement.end(), name=quoted(name))
    if kind == "label":
        target, _, rest = text.partition(".")
        label = rest.split("=", 1)[1].strip()[1:-1]
        return Token("label", text, start, statement.end(), (target.strip(), label))
    return Token("skip", text, start, statement.end(), kind)


def _definition_head(source: str, statement: re.Match[str], tokens: list[Token]) -> None:
    """Python's `def f(x, y):` and its `return` (the one statement of its body) as the tokens
    of chainrule's `f(x, y) =`: a function the program defines (engine/parser.py)."""
    start, end = statement.span("define")
    colon = source.index(":", start)  # the head holds no other `:`
    _tokenize_part(source, start + len("def"), colon, tokens)
    tokens.append(Token("op", source[colon:end], colon, end, "="))


def _reading_stop(source: str) -> int:
    """Where reading stops: just past the line of the first `L.backward()` that ends its line
    (when more follows), else the end of `source`."""
    if ".backward()" not in source:  # what `_BACKWARD_BODY` reads: none, nothing to look for
        return len(source)
    separators = _Separators(source)
    for at, backward in _starting(_FIRST_BACKWARD, _BACKWARD_LINE, source, len(source)):
        if source[at - 1 : at] == ";" and not separators.ends_statement(at - 1):
            continue
        rest = source.find("\n", backward.end())
        if rest != -1 and source[rest:].strip():
            return rest + 1  # the newline ends the backward line
        break
    return len(source)


# A run of code on a line, up to a string, a comment or the line's end.
_CODE_RUN = re.compile(r"[^'\"#\n]*")


class _Separators:
    """Which `;` end a statement (those outside strings and comments), asked left to right:
    each line is scanned once, however many `;` it holds."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.at = 0  # scanned up to here; code resumes here unless a string or comment is open
        self.until = 0  # the end of the last string seen (or of its line, if it never closes)
        self.comment = -1  # where a comment starts on the line being scanned, if it has one

    def read_to(self, offset: int) -> None:
        """Everything before `offset` is read (a whole statement): code resumes there."""
        self.at = max(self.at, offset)

    def ends_statement(self, semicolon: int) -> bool:
        """Whether the `;` at `semicolon` is outside strings and comments."""
        source = self.source
        newline = source.rfind("\n", self.at, semicolon)
        if newline != -1:  # a new line: code at its start
            self.at, self.comment = newline + 1, -1
        if semicolon < self.until or -1 < self.comment < semicolon:
            return False
        i = max(self.at, self.until)
        while True:
            i = _CODE_RUN.match(source, i, semicolon).end()  # type: ignore[union-attr]
            if i >= semicolon:
                self.at = semicolon + 1
                return True
            line_end = source.find("\n", i)
            line_end = len(source) if line_end == -1 else line_end
            if source[i] == "#":
                self.comment, self.at = i, line_end
                return False
            close = source.find(source[i], i + 1, line_end)
            self.until = line_end if close == -1 else close + 1
            if self.until > semicolon:
                self.at = self.until
                return False
            i = self.until


def _tokenize_part(
    source: str,
    start: int,
    stop: int,
    tokens: list[Token],
    pattern: re.Pattern[str] | None = None,
) -> None:
    """Append the tokens of `source[start:stop]`, a line of one operation as one `line` token
    (`_LINE_OR_TOKEN`, the default `pattern`; with _TOKEN_ALONE, token by token)."""
    append = tokens.append
    i = start
    pattern = pattern or _LINE_OR_TOKEN
    lines: list[tuple[str, ...]] = []  # the lines of the `line` token being read
    lines_start = start  # where they start
    for groups in pattern.findall(source, start, stop):
        (
            target,
            equals,
            first,
            before_op,
            op,
            after_op,
            second,
            ends,
            blanks,
            run,
            num,
            torch,
            function,
            name,
            operator,
            string,
            newline,
            skipped,
            other,
        ) = groups
        if first:  # a line (`_LINE_OR_TOKEN`)
            line = groups[:8]
            end = i + len("".join(line))
            plain = not (target in _KEYWORDS or first in _KEYWORDS or second in _KEYWORDS)
            if plain and len(first) <= MAX_PLAIN_NUMBER and len(second) <= MAX_PLAIN_NUMBER:
                if not lines:
                    lines_start = i
                lines.append(line)
                i = end
                if not ends:
                    _line_token(source, lines_start, i, lines, tokens)
                    lines = []
                continue
            if lines:
                _line_token(source, lines_start, i, lines, tokens)
                lines = []
            _tokenize_part(source, i, end, tokens, _TOKEN_ALONE)  # checks the words
            i = end
            continue
        if lines:
            _line_token(source, lines_start, i, lines, tokens)
            lines = []
        i += len(blanks)
        if run:
            end = i + len(run)
            parts = _RUN_SPLIT.split(run)
            if _read_at_once(parts):
                append(Token("run", run, i, end, parts))
            else:
                _tokenize_part(source, i, end, tokens, _TOKEN_ONE_BY_ONE)
        elif name:
            end = i + len(name)
            if name in _KEYWORDS or source.startswith(".", end):
                _name(source, i, tokens)
            append(Token("name", name, i, end, name))
        elif operator:
            end = i + len(operator)
            append(Token("op", operator, i, end, "**" if operator == "^" else operator))
        elif num:
            end = i + len(num)
            after = source[end : end + 1]
            if after and (after in _NUMBER_TAIL):
                _number(source, i, tokens)
            if len(num) > MAX_PLAIN_NUMBER or "e" in num or "E" in num:
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
        elif function:  # `torch.tanh(`: the function of the table's row
            end = i + len(function)
            append(Token("name", function, i, end, TORCH_FUNCTIONS[function]))
        elif torch:
            end = i + len(torch)
            _torch_number(source, i, end, tokens)
        elif skipped:
            end = i + len(skipped)
        else:
            if source.startswith("==", i):
                raise SyntaxError_(msg("error.comparisons"), source, i, i + 2)
            _reject(source, i)
            raise AssertionError(f"unreachable: {other!r}")  # pragma: no cover
        i = end
    if lines:
        _line_token(source, lines_start, i, lines, tokens)


def line_tokens(source: str, start: int, end: int) -> list[Token]:
    """The tokens of the `line` token at `start:end` of `source`, one by one (the parser reads
    them where the line is not what it reads at once)."""
    tokens: list[Token] = []
    _tokenize_part(source, start, end, tokens, _TOKEN_ALONE)
    return tokens


def _read_at_once(parts: list[str]) -> bool:
    """Whether a run of these parts is one token: it holds no keyword and no number longer than
    MAX_PLAIN_NUMBER (which `_name` and `_number` check)."""
    if not _KEYWORDS.isdisjoint(parts):
        return False
    if max(map(len, parts)) <= MAX_PLAIN_NUMBER:
        return True
    return all(len(part) <= MAX_PLAIN_NUMBER or part[0] not in NUMBER_STARTS for part in parts[::2])


def run_tokens(source: str, start: int, end: int) -> list[Token]:
    """The tokens of the `run` token at `start:end` of `source`, one by one (the parser reads
    them where the run is not what it reads at once)."""
    tokens: list[Token] = []
    _tokenize_part(source, start, end, tokens, _TOKEN_ONE_BY_ONE)
    return tokens


def _line_token(
    source: str, start: int, end: int, lines: list[tuple[str, ...]], tokens: list[Token]
) -> None:
    """Append the `line` token of `lines` at `start:end` (each the first eight groups of
    `_LINE_OR_TOKEN`'s match: its parts and the newline matched with it), then the `newline`
    token of the last line's newline, if it has one; its value is `lines`."""
    last = lines[-1][7]
    stop = end - len(last)
    tokens.append(Token("line", source[start:stop], start, stop, lines))
    if last:
        tokens.append(Token("newline", last, stop, end, last))


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
    tokens.append(Token("num", text, i, end, _checked_value(text, source, i, end)))
    return end


def _checked_value(text: str, source: str, start: int, end: int) -> float:
    """The float of a number's `text` (at `start:end` of `source`), or SyntaxError_ for one of
    too many digits or too large a float."""
    digits = sum(c.isdigit() for c in text.split("e")[0].split("E")[0])
    if digits > MAX_NUMBER_DIGITS:
        raise SyntaxError_(
            msg("error.too_many_digits", digits=Count(digits), limit=MAX_NUMBER_DIGITS),
            source,
            start,
            end,
        )
    value = float(text)
    if abs(value) == float("inf"):
        shown = text if len(text) <= 24 else text[:20] + "…"
        raise SyntaxError_(msg("error.number_too_large", number=shown), source, start, end)
    return value


def _torch_number(source: str, start: int, end: int, tokens: list[Token]) -> None:
    """Append the number a PyTorch scalar holds (`torch.Tensor([-3.0]).double()` is -3.0),
    spanning the whole call."""
    number = _SIGNED_NUMBER.search(source, source.index("(", start) + 1, end)
    assert number is not None  # the token's pattern holds one
    text = number.group().lstrip("+")
    value = _checked_value(text, source, number.start(), number.end())
    tokens.append(Token("num", text, start, end, value))


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


# Python that only running it can turn into a graph, by the kind of construct its keyword starts.
_RUNS = {
    "class": "class",
    "def": "def",
    "for": "loop",
    "while": "loop",
    "if": "condition",
    "elif": "condition",
    "else": "condition",
    "try": "block",
    "except": "block",
    "finally": "block",
    "with": "block",
    "lambda": "def",
    "return": "def",
    "yield": "def",
    "async": "block",
    "await": "block",
}
# After `module.function` (or `a.b.c`): the `(` of a call.
_CALL_AFTER = re.compile(r"(?:[ \t]*\.[ \t]*[A-Za-z_]\w*)*[ \t]*\(", re.ASCII)


def needs_running(kind: str, source: str, start: int, end: int, **params: str) -> NeedsRunning:
    """The NeedsRunning error for a construct of `kind` (`error.needs_running.<kind>`, filled
    with `params`) at `start:end`: it names the construct and its line."""
    line = source.count("\n", 0, start) + 1
    what = msg(f"error.needs_running.{kind}", **params)
    return NeedsRunning(msg("error.needs_running", line=line, what=what), source, start, end)


def _name(source: str, i: int, tokens: list[Token]) -> int:
    """Check the name at `i` (the caller appends it): raise for a Python keyword or an
    attribute other than a method call (`a.relu()`)."""
    match = _NAME.match(source, i)
    assert match is not None
    text = match.group()
    end = match.end()
    if keyword.iskeyword(text):
        if text in _RUNS:
            raise needs_running(_RUNS[text], source, i, end, word=text)
        raise SyntaxError_(
            msg("error.python_keyword", word=quoted(text), subset=SUBSET), source, i, end
        )
    if source.startswith(".", end) and not _METHOD_CALL.match(source, end):
        attr = _NAME.match(source, end + 1)
        stop = attr.end() if attr else end + 1
        call = _CALL_AFTER.match(source, stop) if attr else None
        if call is not None:  # `random.uniform(-1, 1)`, `np.tanh(x)`, `model.parameters()`
            kind = "random" if text == "random" else "call"
            called = quoted(" ".join(source[i : call.end() - 1].split()))
            raise needs_running(kind, source, i, call.end() - 1, call=called)
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
        raise needs_running("list", source, i, i + 1)
    if ch in "<>!":
        width = 2 if source.startswith("=", i + 1) else 1
        raise SyntaxError_(msg("error.comparisons"), source, i, i + width)
    if ch == ":":
        if source.startswith(":=", i):
            raise SyntaxError_(msg("error.walrus"), source, i, i + 2)
        raise SyntaxError_(msg("error.colon"), source, i)
    if ch == "\\":
        raise SyntaxError_(msg("error.backslash"), source, i)
    if ch.isalpha():  # a letter of another alphabet: a label may hold it, a name may not
        message = msg("error.unexpected_letter", char=describe_char(ch), letter=ch)
        raise SyntaxError_(message, source, i)
    raise SyntaxError_(unexpected(ch), source, i)
