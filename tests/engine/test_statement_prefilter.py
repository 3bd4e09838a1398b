"""The lexer looks for the statements it reads as notes (imports, `x.grad`, `e.label = 'e'`,
helper definitions, …) and for `L.backward()` only in a source that can hold one
(engine/lexer.py `_may_hold_statements`, `_reading_stop`): a source the quick test turns down
must be one where the full patterns match nowhere, whatever its text. The pieces are those
patterns' own words and their near misses, run together with blanks, `;` and line ends."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from program_strategies import hostile_text

from chainrule.engine import lexer

PIECES = [
    "x", "y1", "_z", "2.5", "1.", " ", "\t", "\n", "\r\n", ";", "=", " = ", "(", ")", ",", "'a'",
    ".", " . ", ".grad", ".data", ".label", ".item()", "._backward()", ".zero_grad()",
    ".requires_grad", "_(True)", " = True", "= 0.0", "+= 1", ".render(x)", ".backward()",
    "import", "import math", "from", "from micrograd.engine import Value", "print", "print(x)",
    "draw_dot", "draw_dot(o)", "dot = draw_dot(o)", "trace(o)", "display(o)", "def", "def f(x):",
    "def tanh(x):", " return x", "return", "# note", "x.grad", "x . label = 'x'", "o.backward()",
]  # fmt: skip
SEPARATORS = ["", "\n", ";", " ", "\r\n", " # note\n", "\n  "]
# Pieces with what may end a statement after each (so whole statements are common).
RUNS = st.lists(st.tuples(st.sampled_from(PIECES), st.sampled_from(SEPARATORS)), max_size=20)
SOURCES = st.one_of(hostile_text(), RUNS.map(lambda run: "".join(a + b for a, b in run)))


@settings(max_examples=400)
@given(SOURCES)
def test_a_source_turned_down_holds_no_statement_the_lexer_reads_as_a_note(source: str) -> None:
    if not lexer._may_hold_statements(source):
        assert lexer._FIRST_STATEMENT.match(source) is None
        assert lexer._STATEMENT.search(source) is None


@given(SOURCES)
def test_a_source_without_backward_call_is_read_to_its_end(source: str) -> None:
    if ".backward()" not in source:
        assert lexer._FIRST_BACKWARD.match(source) is None
        assert lexer._BACKWARD_LINE.search(source) is None
        assert lexer._reading_stop(source) == len(source)


def test_the_quick_test_turns_down_a_plain_program_and_keeps_every_kind_of_note() -> None:
    assert not lexer._may_hold_statements("x = 1.0\ny1 = x * 1.0001\ny2 = y1 * 1.0001")
    for note in ("import math", "x.grad", "a = 2\nb = a\nb.label = 'b'", "print(a)", "def f(x):"):
        assert lexer._may_hold_statements(note), note
