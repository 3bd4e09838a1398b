"""Linear work on long programs, a thread-safe collector pause,
expand-mode teaching text, and the small messages (exact texts and positions)."""

from __future__ import annotations

import gc
import sys
import threading
from collections.abc import Iterator

import pytest

from chainrule import engine
from chainrule.engine.gc_pause import cycle_collector_paused
from chainrule.engine.narration import narrations
from chainrule.engine.ops import FUNCTIONS
from chainrule.engine.step_reader import step_objects

# The language's functions, as a message lists them (the table's order).
ALL_FUNCTIONS = ", ".join(FUNCTIONS)


@pytest.fixture
def fast_thread_switching() -> Iterator[None]:
    """Switch threads as often as possible, so races show up in a short test."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(interval)


def _hammer(threads: int = 16, traces: int = 20) -> None:
    """Each thread traces, and between traces enters and leaves the pause many times (the
    entries and exits of concurrent requests, packed close together)."""
    start = threading.Barrier(threads)
    failures: list[BaseException] = []

    def work() -> None:
        start.wait()
        try:
            for _ in range(traces):
                engine.trace("a = 2; b = -3\nL = (a + b) * a").to_dict()
                for _ in range(250):
                    with cycle_collector_paused():
                        pass
        except BaseException as error:  # noqa: BLE001 - reported by the test below
            failures.append(error)

    workers = [threading.Thread(target=work) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert failures == []


@pytest.mark.usefixtures("fast_thread_switching")
def test_collector_is_enabled_after_traces_from_many_threads() -> None:
    assert gc.isenabled()
    for _ in range(5):
        _hammer()
        assert gc.isenabled()


@pytest.mark.usefixtures("fast_thread_switching")
def test_collector_stays_disabled_when_the_caller_disabled_it() -> None:
    gc.disable()
    try:
        _hammer(threads=8, traces=10)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_nested_pauses_re_enable_only_at_the_outermost_exit() -> None:
    with cycle_collector_paused():
        with cycle_collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


# Item 7: linear work and bounded answers for long programs.


def test_fifty_thousand_unused_statements_give_ten_warnings_and_one_summary() -> None:
    traced = engine.trace("a + 1\n" * 49_999 + "a")
    warnings = traced.to_dict()["warnings"]
    assert len(warnings) == 11
    assert warnings[9] == {
        "type": "unused",
        "message": "line 10: this expression is not used by the result (the last statement), "
        "so it is left out of the graph",
        "line": 10,
        "column": 1,
    }
    assert warnings[10] == {
        "type": "unused",
        "message": "and 49,989 more statements from line 11 on are not used by the result "
        "(the last statement), so they are left out of the graph",
        "line": 11,
        "column": 1,
    }


def test_positions_of_all_warnings_come_from_one_scan_of_the_source(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from chainrule import engine

    scans: list[int] = []

    class CountingLineIndex(engine.builder.LineIndex):
        def __init__(self, source: str) -> None:
            scans.append(len(source))
            super().__init__(source)

    monkeypatch.setattr(engine.builder, "LineIndex", CountingLineIndex)
    source = "b = a\n" + "a + 1\n" * 49_999 + "b"
    warnings = engine.trace(source).warnings
    assert scans == [len(source)]
    assert [w["type"] for w in warnings] == ["unused"] * 11 + ["alias"]


def test_unused_statements_on_one_line_have_their_columns() -> None:
    warnings = engine.trace("a + 1; bb = 2; c * 2\r\nd").warnings
    assert [(w["line"], w["column"]) for w in warnings] == [(1, 1), (1, 8), (1, 16)]


def test_eleven_warnings_of_a_kind_are_all_kept() -> None:
    warnings = engine.trace("a + 1\n" * 11 + "a").warnings
    assert len(warnings) == 11
    assert warnings[-1]["message"].startswith("line 11: this expression")


def test_unknown_values_and_aliases_are_summarised_too() -> None:
    values = {f"v{i}": 1.0 for i in range(30)}
    warnings = engine.trace("a", values).warnings
    assert len(warnings) == 11
    assert warnings[10] == {
        "type": "unknown_value",
        "message": "and 20 more values name no leaf of this graph, so they are ignored",
        "line": None,
        "column": None,
    }
    aliases = "b0 = a\n" + "".join(f"b{i} = b{i - 1}\n" for i in range(1, 25)) + "b24"
    warnings = engine.trace(aliases).warnings
    assert len(warnings) == 11
    assert warnings[10]["message"] == (
        "and 15 more names from line 11 on are other names for nodes the graph already shows"
    )


def _error(source: str, **kwargs: object) -> engine.ProgramError:
    with pytest.raises(engine.ProgramError) as caught:
        engine.trace(source, **kwargs)  # type: ignore[arg-type]
    return caught.value


def test_error_snippet_of_a_long_line_is_a_window_ending_at_the_error() -> None:
    error = _error("a+" * 49_999 + "$")
    assert (error.line, error.column) == (1, 99_999)
    assert error.snippet == "…" + "+a" * 49 + "+$"
    assert error.caret == " " * 100 + "^"


def test_error_snippet_in_the_middle_of_a_long_line_is_cut_on_both_sides() -> None:
    source = "a+" * 100 + "$" + "+a" * 100
    error = _error(source)
    assert (error.line, error.column) == (1, 201)
    assert error.snippet == "…" + source[160:260] + "…"
    assert len(error.snippet) == 102
    assert error.caret == " " * 41 + "^"
    assert error.snippet[len(error.caret) - 1] == "$"


def test_caret_of_a_long_error_stops_at_the_window() -> None:
    error = _error("a = " + "1" * 5_000 + "x")
    assert error.snippet == "a = " + "1" * 96 + "…"
    assert error.caret == "    " + "^" * 96


def test_short_lines_are_shown_whole() -> None:
    error = _error("b = 2\n" + "a + " * 24 + "$")
    assert error.snippet == "a + " * 24 + "$"
    assert error.caret == " " * 96 + "^"


# Item 12: the small ones.


def test_a_leaf_value_may_carry_a_plus_sign() -> None:
    traced = engine.trace("a = +2\nb = + 1.5e1\nL = a * b")
    assert [(name, node.data) for name, node in traced.graph.leaves] == [("a", 2.0), ("b", 15.0)]
    assert [(node.kind, node.start, node.end) for node in traced.nodes[:2]] == [
        ("leaf", 0, 6),
        ("leaf", 7, 18),
    ]
    assert traced.root.data == 30.0


def test_every_suggested_number_fix_is_a_program_meaning_the_same() -> None:
    for written, meant in [("1_000", 1000.0), ("1e_5", 1e5), ("2_5.5", 25.5)]:
        error = _error(written)
        suggestion = error.message.split(": write ")[1].removesuffix(" (no _ in numbers)")
        assert engine.trace(suggestion).root.data == meant


def test_crlf_snippets_hold_no_carriage_return_and_columns_match_lf() -> None:
    for newline in ("\n", "\r\n"):
        error = _error(f"a = 1{newline}b = a $ 2{newline}c = b")
        assert (error.line, error.column, error.end_line, error.end_column) == (2, 7, 2, 8)
        assert (error.snippet, error.caret) == ("b = a $ 2", "      ^")
    lines = engine.trace("a = 2\r\nb = a * 3 # note\r\n\r\nb\r\n")
    assert lines.root.data == 6.0
    error = _error("x = 1\r\ny = x\r\n\r\nz = q +\r\n")
    assert (error.line, error.column, error.snippet, error.caret) == (4, 8, "z = q +", "       ^")


def test_a_lone_carriage_return_shows_as_a_space_in_the_snippet() -> None:
    error = _error("a = 1\rb = $")
    assert (error.snippet, error.caret) == ("a = 1 b = $", "          ^")


# Item 11: teaching text is right in every mode.


def _narrations(source: str, **kwargs: object) -> list[str]:
    reply = engine.trace(source, **kwargs).to_dict()  # type: ignore[arg-type]
    return [
        narration
        for step, narration in zip(step_objects(reply), narrations(reply), strict=True)
        if step["phase"] == "forward"
        and step["op"] is not None
        or step["phase"] == "backward"
        and step["contributions"]
    ]


EXPANDED_TEXTS = [
    (
        "a = 5\nb = 2\np = a + a - b",
        ["a", "b", "a + a", "-1", "b·(-1)", "p"],
        [
            "a + a = 5 + 5 = 10",
            "b·(-1) = 2·(−1) = −2",
            "p = a + a + b·(-1) = 10 + (−2) = 8",
            "Visit p = a + a + b·(-1): grad[a + a] += 1 × 1 = 1, grad[b·(-1)] += 1 × 1 = 1",
            "Visit b·(-1): grad[b] += 1 × (−1) = −1, grad[-1] += 1 × 2 = 2",
            "Visit a + a: grad[a] += 1 × 1 = 1, grad[a] += 1 × 1 = 1",
        ],
    ),
    (
        "x = 2\ny = x*x / (x - 1)",
        ["x", "x*x", "1", "-1", "1·(-1)", "(x - 1)", "(x - 1)^−1", "y"],
        [
            "x·x = 2·2 = 4",
            "1·(-1) = 1·(−1) = −1",
            "x + 1·(-1) = 2 + (−1) = 1",
            "(x - 1)^−1 = 1^−1 = 1",
            "y = x*x·(x - 1)^−1 = 4·1 = 4",
            "Visit y = x*x·(x - 1)^−1: grad[x*x] += 1 × 1 = 1, grad[(x - 1)^−1] += 1 × 4 = 4",
            "Visit (x - 1)^−1: grad[(x - 1)] += 4 × (−1) = −4",
            "Visit x + 1·(-1): grad[x] += (−4) × 1 = −4, grad[1·(-1)] += (−4) × 1 = −4",
            "Visit 1·(-1): grad[1] += (−4) × (−1) = 4, grad[-1] += (−4) × 1 = −4",
            "Visit x·x: grad[x] += 1 × 2 = 2, grad[x] += 1 × 2 = 2",
        ],
    ),
    (
        "a = 3\nn = -a**2",
        ["a", "a**2", "-1", "n"],
        [
            "a^2 = 3^2 = 9",
            "n = (a**2)·(-1) = 9·(−1) = −9",
            "Visit n = (a**2)·(-1): grad[a**2] += 1 × (−1) = −1, grad[-1] += 1 × 9 = 9",
            "Visit a^2: grad[a] += (−1) × 6 = −6",
        ],
    ),
    (
        "a / b**2",
        ["a", "b", "b**2", "(b**2)^−1", "a / b**2"],
        [
            "b^2 = 1^2 = 1",
            "(b**2)^−1 = 1^−1 = 1",
            "a·(b**2)^−1 = 1·1 = 1",
            "Visit a·(b**2)^−1: grad[a] += 1 × 1 = 1, grad[(b**2)^−1] += 1 × 1 = 1",
            "Visit (b**2)^−1: grad[b**2] += 1 × (−1) = −1",
            "Visit b^2: grad[b] += (−1) × 2 = −2",
        ],
    ),
]


@pytest.mark.parametrize(("source", "texts", "narrations"), EXPANDED_TEXTS)
def test_expansion_nodes_are_named_by_their_own_text(
    source: str, texts: list[str], narrations: list[str]
) -> None:
    nodes = engine.trace(source, expand_derived=True).to_dict()["nodes"]
    assert [node["text"] for node in nodes] == texts
    assert _narrations(source, expand_derived=True) == narrations


EXPANSIONS = [
    ("a / b**2", "a·(b**2)^(−1)"),
    ("a - b*c", "a + (b*c)·(−1)"),
    ("a - (b + c)", "a + (b + c)·(−1)"),
    ("a - -2", "a + (-2)·(−1)"),
    ("b - -a", "b + (-a)·(−1)"),
    ("-a**2", "(a**2)·(−1)"),
    ("-exp(a)", "exp(a)·(−1)"),
    ("a / (b*c)", "a·(b*c)^(−1)"),
    ("a*b / c", "(a*b)·c^(−1)"),
    ("a / b / c", "(a / b)·c^(−1)"),
]


@pytest.mark.parametrize(("source", "expansion"), EXPANSIONS)
def test_expansion_brackets_a_compound_operand(source: str, expansion: str) -> None:
    root = engine.trace(source).to_dict()["nodes"][-1]
    assert root["expansion"] == expansion


def test_a_negative_constant_operand_is_bracketed_like_a_negative_number() -> None:
    assert _narrations("a = 3\nb = a * -3") == [
        "b = a·(-3) = 3·(−3) = −9",
        "Visit b = a·(-3): grad[a] += 1 × (−3) = −3, grad[-3] += 1 × 3 = 3",
    ]
    assert _narrations("(-2)**2")[0] == "(-2)^2 = (−2)^2 = 4"


# Item 7's sibling: a message quotes at most 40 characters of the program.

LONG = "x" * 90_000
CUT = "x" * 39 + "…"


@pytest.mark.parametrize(
    ("source", "message"),
    [
        (
            LONG + "(1)",
            f"unknown function '{CUT}' — did you mean one of: {ALL_FUNCTIONS}?",
        ),
        (LONG + " " + LONG, f"missing operator between '{CUT}' and '{CUT}'"),
        (
            f"a = 1\n{LONG} = 2\n{LONG} = 3",
            f"'{CUT}' is assigned twice as a number (lines 2 and 3): a leaf is declared once; "
            "give the second one a new name",
        ),
        (f"c = {LONG} + 1\n{LONG} = 2\nc", f"'{CUT}' is used on line 1 but assigned on line 2"),
        (
            "1" + LONG,
            f"'1{CUT[:-2]}…' is neither a number nor a name: a name cannot start with a digit; "
            "put an operator between a number and a name",
        ),
    ],
)
def test_messages_quote_a_bounded_piece_of_the_program(source: str, message: str) -> None:
    assert _error(source).message == message


def test_warnings_quote_a_bounded_piece_of_the_program() -> None:
    (warning,) = engine.trace(f"{LONG} = a\n{LONG}").warnings
    assert (
        warning["message"] == f"line 1: '{CUT}' is another name for 'a'; the graph shows it as 'a'"
    )


def collections() -> int:
    """How many collections the cycle collector has run, of any generation."""
    return sum(generation["collections"] for generation in gc.get_stats())


def test_the_survivors_of_a_pause_are_not_all_scanned_when_it_ends() -> None:
    """The collector counts new objects while paused: resuming with 100,000 of them alive, the
    first allocation after it would scan them all at once (a trace kept by its caller: a
    quarter of a second at 100,000 nodes). They move to the oldest generation unscanned
    instead, and the count of new objects starts again: no collection runs on resuming."""
    gc.collect()
    with cycle_collector_paused():
        kept = [[i] for i in range(100_000)]
        before = collections()
    allocated = [[] for _ in range(10)]
    assert collections() == before
    assert gc.isenabled() and len(kept) == 100_000 and len(allocated) == 10
    # A cycle made in a pause is still found by a full collection.
    with cycle_collector_paused():
        cycle: list = []
        cycle.append(cycle)
        del cycle
    assert gc.collect() >= 1


def test_objects_the_process_froze_stay_frozen_after_a_pause() -> None:
    """A server that forks its workers after `gc.freeze()` (or a test that freezes its heap)
    keeps its frozen objects out of every collection: a trace's pause must not hand them back
    (its survivors' move to the oldest generation is a freeze and an unfreeze, which thaws all)."""
    sentinel: list = [[]]  # tracked by the collector until frozen
    gc.collect()
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with cycle_collector_paused():
            engine.trace("a = 2\nb = a * 3 + a")
        # (a frozen object may still be freed meanwhile, by another test's thread: not all stay)
        assert gc.get_freeze_count() > frozen // 2
        assert not any(tracked is sentinel for tracked in gc.get_objects())  # not thawed
        assert gc.isenabled()
    finally:
        gc.unfreeze()
    assert any(tracked is sentinel for tracked in gc.get_objects())
