"""A line of one operation (`y2 = y1 * 1.0001`) is one `line` token that the parser reads at
once (engine/lexer.py `_LINE_OR_TOKEN`): every program must read exactly as token by token, the
same statements with the same offsets, lines, labels and notes, or the same error, message,
offsets and all. The programs are made of such lines (assignments and bare expressions) and of
their near misses (a keyword, a function's name, a long number, `**`, a name run into a `.` or a
`(`, blanks before the line, `;`, comments, CRLF), so both ways are taken and every fallback is
exercised."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chainrule.engine import lexer
from chainrule.engine.errors import ProgramError
from chainrule.engine.parser import Expr, parse_program

NAMES = ["a", "b", "x1", "_y", "exp", "tanh", "Value", "vpow", "if", "True", "softplus", "torch"]
NUMBERS = ["2", "0.5", ".5", "1.", "1.0001", "7" * 30, "0", "3e2", "1_0"]
OPERATORS = ["+", "-", "*", "/", "**", "^", "=", "=="]
BLANKS = ["", " ", "  ", "\t"]
ENDS = ["\n", "\n", "\r\n", "; ", " # note\n", "\n\n"]


@st.composite
def lines(draw: st.DrawFn) -> str:
    """A line that is mostly `name = operand op operand` (or `operand op operand` alone),
    sometimes a near miss."""
    blank = st.sampled_from(BLANKS)
    operand = st.sampled_from(NAMES + NUMBERS + ["a.relu()", "exp(a)", "-a", "(a)"])
    line = draw(st.sampled_from(["", "", "", "", " "]))
    if draw(st.integers(0, 3)):  # an assignment, else a bare expression
        line += draw(st.sampled_from(NAMES)) + draw(blank) + "=" + draw(blank)
    line += draw(operand)
    if draw(st.booleans()):
        line += draw(blank) + draw(st.sampled_from(OPERATORS)) + draw(blank) + draw(operand)
    return line + draw(st.sampled_from(ENDS))


@st.composite
def programs(draw: st.DrawFn) -> str:
    """A few lines, sometimes with a definition, a label or a skipped statement among them."""
    extra = st.sampled_from(
        ["softplus(x) = log(1 + exp(x))\n", "a.label = 'a'\n", "print(a)\n", "a * b\n", ""]
    )
    parts = draw(st.lists(st.one_of(lines(), extra), min_size=1, max_size=8))
    return "".join(parts) + draw(st.sampled_from(["", "L = a * b", "a"]))


def reading(source: str) -> object:
    """Everything the parser says about `source`: each statement with its offsets, line, labels
    and the offsets and values of every node of its expression, and the notes; or the error."""
    try:
        statements, notes = parse_program(source)
    except ProgramError as error:
        return ("error", type(error).__name__, error.to_dict())
    return (
        [
            (s.target, s.target_start, s.target_end, s.line, s.labels, str(s), nodes(s.postfix))
            for s in statements
        ],
        notes,
    )


def nodes(postfix: list[Expr]) -> list[tuple]:
    return [(e.kind, e.op, e.start, e.end, e.text, e.value, e.parens) for e in postfix]


def token_by_token(source: str, monkeypatch: pytest.MonkeyPatch) -> object:
    with monkeypatch.context() as patched:
        patched.setattr(lexer, "_LINE_OR_TOKEN", lexer._TOKEN_ALONE)
        return reading(source)


@settings(max_examples=400, deadline=None)
@given(programs())
def test_a_line_token_reads_as_its_tokens(source: str) -> None:
    with pytest.MonkeyPatch.context() as monkeypatch:
        assert reading(source) == token_by_token(source, monkeypatch)


@pytest.mark.parametrize(
    "source",
    [
        "x = 1.0\ny1 = x * 1.0001\ny2 = y1 * 1.0001",
        "a = 2\nb = a",  # an alias
        "exp = 2\nb = exp * 3",  # a function's name: the error token by token
        "a = 2\nb = a * tanh",
        "if = 2",
        "a = 2\nb = a * " + "9" * 30,  # a long number: its digits checked
        "a = 2\r\nb = a / .5 # c\r\nc = b - 1.",
        "f(x) = x * 2\nb = f * 2",  # a function of the program named as a variable
        "a = 2\nb = g * 2\ng(x) = x * 2",  # one defined further on
        "a = 2\r\nb = a * 3\r\nc = b - exp\r\nd = c",  # the third line of a row token by token
        "a = 2\nb = a * 3 # c\nc = b - 1;d = c\ne = d",  # rows ended by a comment, a `;`
        "1\n" * 5 + "a",  # bare expressions: unused, then the result
        "a = 2\na\nb = a * 3\na * b\nb",  # a name shown alone, an unused operation
        "a = 2\nexp\nb = a",  # a function's name alone
        "a = 2\nb * 3\nb = a",  # a name used before it is assigned
        "a = 2\r\n1.5 # c\r\na / .5; 3\r\n  a - 1\na",  # CRLF, a comment, a `;`, blanks
    ],
)
def test_these_programs_read_as_token_by_token(source: str) -> None:
    with pytest.MonkeyPatch.context() as monkeypatch:
        assert reading(source) == token_by_token(source, monkeypatch)


def test_a_chain_is_read_as_line_tokens() -> None:
    """The fast way is taken where it applies: one token for the lines in a row (the parts of
    each, its newline matched with it), and the last one's newline after it."""
    source = "x = 1.0\ny1 = x * 1.0001\n  y2 = y1 * 2"
    tokens = lexer.tokenize(source)
    assert [t.kind for t in tokens[:2]] == ["line", "newline"]
    assert tokens[0].value == [
        ("x", " = ", "1.0", "", "", "", "", "\n"),
        ("y1", " = ", "x", " ", "*", " ", "1.0001", "\n"),
    ]
    assert (tokens[0].start, tokens[0].end, tokens[1].start, tokens[1].end) == (0, 23, 23, 24)
    assert tokens[2].kind == "name"  # blanks before the line: token by token
    second = parse_program(source)[0][1]
    assert (second.line, second.target_start, second.target_end) == (2, 8, 10)
    assert nodes(second.postfix) == [
        ("name", None, 13, 14, "x", 0.0, False),
        ("num", None, 17, 23, "1.0001", 1.0001, False),
        ("binary", "*", 13, 23, "", 0.0, False),
    ]
