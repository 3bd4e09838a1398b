"""The builder's warnings about statements the result does not use: made only when sent."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chainrule import engine
from chainrule.engine import builder


def test_fifty_thousand_unused_statements_make_only_the_warnings_sent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Ten warnings and one summary that counts the rest are sent, and only those eleven are
    made: making 50,000 sentences to send ten was half of the POST (issue 42)."""
    made: list[int] = []
    unused = builder._unused

    def counted(*args: object) -> dict:
        made.append(1)
        return unused(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(builder, "_unused", counted)
    warnings = engine.build_graph("1\n" * 49_999 + "a").warnings
    assert len(made) == 11
    assert warnings[:2] == [
        {
            "type": "unused",
            "message": "line 1: this expression is not used by the result (the last statement), "
            "so it is left out of the graph",
            "line": 1,
            "column": 1,
        },
        {
            "type": "unused",
            "message": "line 2: this expression is not used by the result (the last statement), "
            "so it is left out of the graph",
            "line": 2,
            "column": 1,
        },
    ]
    assert [w["line"] for w in warnings] == list(range(1, 12))
    assert warnings[10] == {
        "type": "unused",
        "message": "and 49,989 more statements from line 11 on are not used by the result "
        "(the last statement), so they are left out of the graph",
        "line": 11,
        "column": 1,
    }


def test_unused_warnings_keep_their_place_among_the_others() -> None:
    """The notes first, then the unused statements (named or not), then the builder's own."""
    source = "b = a\nx = 2\n" + "a + 1\n" * 11 + "u = 3; b"
    warnings = engine.build_graph(source, {"zz": 1.0}).warnings
    assert [w["type"] for w in warnings] == ["unused"] * 11 + ["alias", "unknown_value"]
    assert warnings[0]["message"] == (
        "line 2: 'x' is not used by the result (the last statement), so it is left out of the graph"
    )
    assert warnings[10]["message"] == (
        "and 3 more statements from line 12 on are not used by the result (the last statement), "
        "so they are left out of the graph"
    )
    assert (warnings[10]["line"], warnings[10]["column"]) == (12, 1)


def plain_limit_warnings(warnings: list[dict]) -> list[dict]:
    """`limit_warnings` as it was before it looked only at what it keeps: warning by warning."""
    types = [w["type"] for w in warnings]
    totals = Counter(types)
    seen: Counter[str] = Counter()
    kept = []
    for warning, kind in zip(warnings, types, strict=True):
        seen[kind] += 1
        if totals[kind] <= builder.MAX_WARNINGS_OF_A_KIND + 1:
            kept.append(warning)
        elif seen[kind] <= builder.MAX_WARNINGS_OF_A_KIND + 1:
            kept.append(warning)
    return kept


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["unused", "alias", "skipped", "late", "domain"]), max_size=60))
def test_limit_warnings_keeps_what_a_warning_by_warning_pass_keeps(kinds: list[str]) -> None:
    """Types interleaved, at, under and over the limit: the same warnings kept, in order, each
    type's summary in the place of its eleventh."""
    warnings = [
        {"type": kind, "message": f"{kind} {at}", "line": at + 1, "column": 1}
        for at, kind in enumerate(kinds)
    ]
    deferred = [
        builder.Deferred(w["type"], lambda w=w: w) if at % 2 else w for at, w in enumerate(warnings)
    ]
    found = builder.limit_warnings(deferred)
    expected = plain_limit_warnings(warnings)
    assert [(w["type"], w["line"], w["column"]) for w in found] == [
        (w["type"], w["line"], w["column"]) for w in expected
    ]
    summaries = [
        (w["type"], w["line"]) for w in found if not w["message"].startswith(w["type"] + " ")
    ]
    over = [k for k, n in Counter(kinds).items() if n > builder.MAX_WARNINGS_OF_A_KIND + 1]
    assert sorted(summaries) == sorted(
        (k, [at + 1 for at, x in enumerate(kinds) if x == k][builder.MAX_WARNINGS_OF_A_KIND])
        for k in over
    )
