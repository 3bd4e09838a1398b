"""Fuzzing through the HTTP API: never a 500, only documented errors, and every valid program's
values and gradients agree with a 50-digit oracle (away from kinks and non-finite values).

The engine's own fuzz (tests/engine/test_fuzz.py) checks smooth programs against finite
differences; here the programs use every operator and function, minimal parentheses, leaf
declarations overridden by `values`, and the answer comes from mpmath, not from our chain rule.
`FUZZ_EXAMPLES=100000 make fuzz` runs them long.
"""

from __future__ import annotations

from collections.abc import Iterator

import mpmath
import pytest
from fastapi.testclient import TestClient
from hypothesis import assume, given, note
from hypothesis import strategies as st
from program_strategies import (
    NotComparable,
    Oracle,
    Program,
    close,
    fuzz_settings,
    hostile_text,
    valid_programs,
)
from servers import strict_json

from chainrule.app.main import create_app
from chainrule.app.settings import AppSettings

ERROR_TYPES = {
    400: {
        "SyntaxError",
        "NeedsRunning",
        "UnknownFunction",
        "ArgumentCount",
        "UseBeforeAssign",
        "AssignedTwice",
        "LimitExceeded",
        "BadValue",
        "BadOrder",
    },
    413: {"BodyTooLarge"},
    422: {"InvalidRequest"},
}


@pytest.fixture(scope="module")
def api() -> Iterator[TestClient]:
    # Small limits and the fallback layout keep examples quick; the catalogue tests the real ones.
    app = create_app(
        AppSettings(max_source_tokens=1_000, max_nodes=500, max_body_bytes=8_192, dot_max_nodes=0)
    )
    with TestClient(app, raise_server_exceptions=False) as client:
        yield client
    app.state.server.close()


def check_response(response, allowed: tuple[int, ...]) -> dict:
    """Strict JSON; an error is one of ours, in the one shape, with a consistent position."""
    assert response.status_code in allowed, response.text[:500]
    body = strict_json(response.content)
    if response.status_code != 200:
        error = body["error"]
        assert error["type"] in ERROR_TYPES[response.status_code], error
        assert set(error) >= {"type", "message", "line", "column", "snippet", "caret"}
        if error["line"] is not None:
            assert error["line"] >= 1 and error["column"] >= 1
            assert error["caret"].lstrip(" \t").startswith("^")
    return body


@fuzz_settings
@given(source=hostile_text())
def test_fuzz_random_text_is_a_graph_or_a_program_error(api, source):
    body = check_response(api.post("/api/graph", json={"source": source}), (200, 400, 422))
    if "nodes" in body:
        assert body["source"] == source


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=10,
)
FIELDS = st.sampled_from(["source", "values", "expand_derived", "mode", "order", "extra"])


@fuzz_settings
@given(
    body=st.one_of(
        st.dictionaries(FIELDS, JSON_VALUES),
        st.fixed_dictionaries(
            {"source": hostile_text()},
            optional={
                "values": st.dictionaries(st.sampled_from(["a", "b", "p"]), JSON_VALUES),
                "order": st.lists(st.sampled_from(["n0", "n1", "n2", "n9", 3])),
                "mode": st.sampled_from(["correct", "overwrite", "x"]),
                "expand_derived": st.booleans(),
            },
        ),
        JSON_VALUES,
    )
)
def test_fuzz_random_json_bodies_get_a_status_never_a_500(api, body):
    check_response(api.post("/api/graph", json=body), (200, 400, 422))


@fuzz_settings
@given(raw=st.binary(max_size=300), path=st.sampled_from(["/api/graph", "/api/export"]))
def test_fuzz_random_bytes_get_a_status_never_a_500(api, raw, path):
    response = api.post(path, content=raw, headers={"content-type": "application/json"})
    check_response(response, (200, 400, 422))


# Pieces of JSON, well- or ill-formed: deep nesting, numbers no float holds, NaN/Infinity.
JSON_PIECES = st.sampled_from(
    ["[", "]", "{", "}", '"a": ', ", ", "1", "-", "0.5", "9" * 330, "1e999", "-1e999", "NaN",
     "Infinity", "-Infinity", "null", '"x"', '"\\ud800"', "tru", "1.e5"]
)  # fmt: skip


@fuzz_settings
@given(pieces=st.lists(JSON_PIECES, max_size=12), depth=st.integers(0, 3_000))
def test_fuzz_a_malformed_body_is_422_never_400_or_500(api, pieces, depth):
    """The program is fine, so only the body can be wrong: 200, or 422 InvalidRequest (never
    FastAPI's 400 "There was an error parsing the body", never a 500)."""
    values = "[" * depth + "".join(pieces) + "]" * depth
    raw = f'{{"source": "a", "values": {values}}}'.encode()
    response = api.post("/api/graph", content=raw, headers={"content-type": "application/json"})
    check_response(response, (200, 422) if len(raw) <= 8_192 else (413,))


def oracle_answers(program: Program) -> tuple[mpmath.mpf, dict[str, mpmath.mpf]]:
    oracle = Oracle(program)
    return oracle.root(), {name: oracle.gradient(name) for name in oracle.leaf_values}


@fuzz_settings
@given(program=valid_programs(), expand=st.booleans())
def test_fuzz_valid_programs_match_the_oracle(api, program, expand):
    note(f"source={program.source!r} values={program.values}")
    response = api.post(
        "/api/graph",
        json={"source": program.source, "values": program.values, "expand_derived": expand},
    )
    body = check_response(response, (200,))
    try:
        root_value, gradients = oracle_answers(program)
    except NotComparable:
        assume(False)  # kinks, poles, NaN territory: IEEE handles them, the catalogue tests them
    nodes = {node["id"]: node for node in body["nodes"]}
    root = nodes[body["root"]]
    assert close(root["data"], root_value), (root["data"], root_value)
    for leaf in body["leaves"]:
        node = nodes[leaf["id"]]
        assert node["data"] == float(Oracle(program).leaf_values[leaf["name"]])
        assert close(node["grad"], gradients[leaf["name"]], rel=1e-6, abs_=1e-8), (
            leaf["name"],
            node["grad"],
            gradients[leaf["name"]],
        )
    oracle = Oracle(program)
    for result in body["gradcheck"]["results"]:
        # The engine's check is float64 finite differences: it may only fail where those are
        # provably too imprecise to judge (huge intermediates, steep curvature).
        if result["status"] == "fail":
            tolerance = 1e-5 + 1e-3 * abs(result["numeric"])
            assert oracle.finite_difference_error(result["name"]) > 0.1 * tolerance, result
