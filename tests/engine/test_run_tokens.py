"""A run of plain operands and binary operators (`a0*b0 + a1*b1`) is one `run` token that the
parser reads in one loop (engine/lexer.py `_RUN`, engine/parser.py `_Parser.run`): every
program must read exactly as token by token, the same statements with the same offsets, lines,
labels and notes, or the same error, message, offsets and all. The programs are made of runs
and their near misses (a keyword, a function's name, a long number, an exponent, a name run into
a `.` or a `(`, a run before `=`, `+=` or `==`, a run inside `Value(…)`, `x.relu(…)`, a call,
parentheses or a definition), so both ways are taken and every fallback is exercised."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_line_tokens import reading  # the parser's whole reading of a source, or its error

from chainrule.engine import lexer
from chainrule.engine.errors import ProgramError
from chainrule.engine.parser import parse_program

OPERANDS = ["a", "b", "x1", "_y", "L", "2", "0.5", ".5", "1.", "1.0001", "3e2", "7" * 30, "1_0"]
NEAR = ["exp", "tanh", "Value", "vpow", "if", "True", "softplus", "a.relu()", "exp(a)", "(a)"]
OPERATORS = ["+", "-", "*", "/", "**", "^"]
NEAR_OPERATORS = ["=", "==", "+=", "**=", "- -", "* -"]
BLANKS = ["", "", " ", "  ", "\t", "\f"]
CONTEXTS = [
    "{}",
    "L = {}",
    "L = -{}",
    "L = ({})",
    "L = exp({})",
    "L = vpow({}, 2)",
    "L = {} )",
    "L = Value({})",
    "L = a.relu({})",
    "L = a . {}",
    "softplus(x) = {}",
    "L += {}",
    "L = {} ({})",
    "L = a b {}",
    "L = {}.tanh() * 2",
    "{} label = 'x'",
    "L = 2 * {}, 3",
]


@st.composite
def runs(draw: st.DrawFn) -> str:
    """Mostly a run of plain operands and operators, now and then with a near miss in it."""
    operand = st.one_of(st.sampled_from(OPERANDS), st.sampled_from(OPERANDS + NEAR))
    operator = st.one_of(st.sampled_from(OPERATORS), st.sampled_from(OPERATORS + NEAR_OPERATORS))
    blank = st.sampled_from(BLANKS)
    text = draw(operand)
    for _ in range(draw(st.integers(0, 6))):
        text += draw(blank) + draw(operator) + draw(blank) + draw(operand)
    return text


@st.composite
def programs(draw: st.DrawFn) -> str:
    """A few statements holding runs in various places, with a definition now and then."""
    lines = []
    for _ in range(draw(st.integers(1, 4))):
        context = draw(st.sampled_from(CONTEXTS))
        lines.append(context.format(draw(runs()), draw(runs())))
    ends = st.sampled_from(["\n", "\n", "; ", " # c\n", "\r\n"])
    extra = st.sampled_from(["", "softplus(x) = log(1 + exp(x))\n", "a.label = 'a'\n"])
    return (
        draw(extra)
        + "".join(line + draw(ends) for line in lines)
        + draw(st.sampled_from(["", "L", "a * b + c"]))
    )


def token_by_token(source: str, monkeypatch: pytest.MonkeyPatch) -> object:
    """The reading of `source` with no run tokens (lines are still read at once)."""
    no_run = "((?!))"
    with monkeypatch.context() as patched:
        for name in ("_LINE_OR_TOKEN", "_TOKEN_ALONE"):
            pattern = getattr(lexer, name).pattern
            assert pattern.count(lexer._RUN) == 1
            patched.setattr(lexer, name, re.compile(pattern.replace(lexer._RUN, no_run), re.ASCII))
        return reading(source)


def kinds(source: str) -> list[str]:
    return [token.kind for token in lexer.tokenize(source)]


@settings(max_examples=500, deadline=None)
@given(programs())
def test_a_run_token_reads_as_its_tokens(source: str) -> None:
    with pytest.MonkeyPatch.context() as monkeypatch:
        assert reading(source) == token_by_token(source, monkeypatch)


@pytest.mark.parametrize(
    "source",
    [
        "a0*b0 + a1*b1 + a2*b2",
        "L = -a * b ** 2 ^ c - d / e / f + 3",  # a minus before the run, right-associative `**`
        "L = a ** 2 * b ** .5",  # literal exponents
        "L = exp(a + b * c) * 2 - (c - d)",
        "L = a * b .relu()",  # a method call on the run's last operand
        "L = a + exp * 2",  # a function's name: the error token by token
        "softplus(x) = x * x + softplus\nL = softplus(2)",  # the function being defined
        "L = a + g * 2\ng(x) = x * 2",  # one defined further on
        "L = a + if * 2",  # a keyword
        "L = a * " + "9" * 30 + " + b",  # a long number: its digits checked
        "L = a * " + "9" * 400 + " + b",
        "L = a * 2e400 + b",
        "L = a * b_" + "1" * 30 + " + c",  # a long name
        "L = Value(2.0 + 1)",
        "L = a.relu(b + c)",
        "L = a . b + c",
        "L = a + b c * d",  # a missing operator, after and before a run
        "L = 2 * a + b = 3",
        "L = a + b += c",
        "L = a + b == c",
        "L = a + label = 'x'",
        "L = a\t*\fb  +  c",
        "L = a + b\nM = L * L - L / 2 ** L",
    ],
)
def test_these_programs_read_as_token_by_token(source: str) -> None:
    with pytest.MonkeyPatch.context() as monkeypatch:
        assert reading(source) == token_by_token(source, monkeypatch)


def test_a_sum_of_products_is_one_run_token() -> None:
    """The fast way is taken where it applies, and not where a part needs a look of its own."""
    assert kinds("a0*b0 + a1*b1 + 2.5 ^ c") == ["run", "eof"]
    assert kinds("L = a * b + c\n") == ["name", "op", "run", "newline", "eof"]
    assert kinds("L = a + exp(b)") == [
        "name",
        "op",
        "name",
        "op",
        "name",
        "op",
        "name",
        "op",
        "eof",
    ]
    assert kinds("L = 2 * " + "9" * 30)[2:4] == ["num", "op"]
    tokens = lexer.tokenize("L = a0 * b0 + 1.5")
    assert (tokens[2].start, tokens[2].end, tokens[2].value) == (
        4,
        17,
        ["a0", " * ", "b0", " + ", "1.5"],
    )


@pytest.mark.parametrize("before", ["x = ", "L = a + ", "L = "])
def test_a_long_number_run_into_a_letter_is_read_in_one_pass(before: str) -> None:
    """An operand of a line or a run is matched once (no shorter one is tried: it could only
    fail), so 50,000 digits run into a letter take a moment, not minutes, to refuse."""
    source = before + "1" * 50_000 + "x + 2"
    with pytest.raises(ProgramError) as raised:
        parse_program(source)
    error = raised.value.to_dict()
    assert error["type"] == "SyntaxError"
    assert (error["line"], error["column"], error["end_column"]) == (
        1,
        len(before) + 1,
        len(before) + 50_002,
    )
