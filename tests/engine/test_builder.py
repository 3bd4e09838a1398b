"""The builder's warnings about statements the result does not use: made only when sent."""

from __future__ import annotations

import pytest

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
