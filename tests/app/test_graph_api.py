"""POST /api/graph: the engine's trace, exactly, plus a layout that depends only on structure."""

from __future__ import annotations

import json

import orjson
import pytest
from servers import strict_json

from chainrule import engine
from chainrule.app.api.schemas import GraphResponse
from chainrule.app.layout.layouter import Layouter, structure_of
from chainrule.app.settings import AppSettings
from chainrule.engine.presets import TENSOR_PRESETS

BOX_FIELDS = ("x", "y", "width", "height")
JSON = {"content-type": "application/json"}

ALL_PRESETS = [*engine.PRESETS, *TENSOR_PRESETS]


def without_layout(body: dict) -> dict:
    """The reply minus what the server adds to the engine's trace (boxes, layout, structure id)."""
    body = dict(body)
    del body["layout"]
    assert isinstance(body.pop("structure"), str)
    body["nodes"] = [{k: v for k, v in n.items() if k not in BOX_FIELDS} for n in body["nodes"]]
    body["groups"] = [
        {k: v for k, v in g.items() if k not in ("box", "card")} for g in body["groups"]
    ]
    return body


def engine_json(source: str, values=None, **options) -> dict:
    """What the engine says, through the same JSON round trip as the API."""
    return orjson.loads(orjson.dumps(engine.trace(source, values, **options).to_dict()))


@pytest.mark.parametrize("preset", engine.PRESETS, ids=lambda p: p["id"])
def test_every_preset_returns_the_engines_exact_trace(client, preset):
    request = {"source": preset["source"], "values": preset["values"]}
    response = client.post("/api/graph", json=request)
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    body = strict_json(response.content)
    GraphResponse.model_validate(body)
    assert without_layout(body) == engine_json(preset["source"], preset["values"])


@pytest.mark.parametrize("preset", engine.PRESETS, ids=lambda p: p["id"])
def test_leaves_are_left_of_their_consumers_and_the_root_is_rightmost(client, preset):
    body = client.post("/api/graph", json={"source": preset["source"]}).json()
    nodes = {node["id"]: node for node in body["nodes"]}
    for edge in body["edges"]:
        assert nodes[edge["source"]]["x"] < nodes[edge["target"]]["x"]
    root_x = nodes[body["root"]]["x"]
    assert all(node["x"] <= root_x for node in body["nodes"])


def test_every_card_lies_inside_the_layout(client):
    body = client.post(
        "/api/graph", json={"source": "a = 2; b = a + 1; c = a * 3; d = b * c"}
    ).json()
    layout = body["layout"]
    assert layout["engine"] == "dot"
    for node in body["nodes"]:
        assert node["x"] - node["width"] / 2 >= 0
        assert node["y"] - node["height"] / 2 >= 0
        assert node["x"] + node["width"] / 2 <= layout["width"]
        assert node["y"] + node["height"] / 2 <= layout["height"]


def test_const_cards_are_smaller_than_leaf_and_op_cards(client):
    body = client.post("/api/graph", json={"source": "y = a * 3 + b"}).json()
    sizes = {node["kind"]: (node["width"], node["height"]) for node in body["nodes"]}
    assert sizes == {"leaf": (150.0, 64.0), "op": (150.0, 64.0), "const": (56.0, 32.0)}


def test_the_same_request_twice_gives_the_same_response_and_runs_dot_once(client):
    server = client.app.state.server
    request = {"source": "c = a * b; L = c + a", "values": {"a": 2, "b": 3}}
    first = client.post("/api/graph", json=request).json()
    second = client.post("/api/graph", json=request).json()
    assert server.layouter.dot_runs == 1
    assert first["layout"]["cached"] is False
    assert second["layout"]["cached"] is True
    first["layout"]["cached"] = True
    assert first == second


def test_the_response_cache_tells_negative_zero_from_zero(client):
    def post(raw: bytes) -> dict:
        return client.post(
            "/api/graph", content=raw, headers={"content-type": "application/json"}
        ).json()

    assert post(b'{"source": "1/a", "values": {"a": 0.0}}')["nodes"][-1]["data"] == "Infinity"
    assert post(b'{"source": "1/a", "values": {"a": -0.0}}')["nodes"][-1]["data"] == "-Infinity"


def test_changing_only_values_keeps_every_coordinate_and_never_runs_dot(client):
    server = client.app.state.server
    source = "a = 2; b = -3; c = 10; e = a + b; f = e * c"
    first = client.post("/api/graph", json={"source": source}).json()
    assert server.layouter.dot_runs == 1
    for a in (-5.0, 0.0, 0.5, 7.25, 1e6):
        body = client.post("/api/graph", json={"source": source, "values": {"a": a}}).json()
        assert body["leaves"][0]["value"] == a
        assert body["layout"]["cached"] is True
        assert [[n[f] for f in BOX_FIELDS] for n in body["nodes"]] == [
            [n[f] for f in BOX_FIELDS] for n in first["nodes"]
        ]
    assert server.layouter.dot_runs == 1
    stats = server.layouter.stats()
    assert (stats.hits, stats.misses) == (5, 1)


def test_options_pass_through_to_the_engine(client):
    source = "a = 2; b = 3; c = a * b; L = c + a - b / a"
    for options in (
        {"expand_derived": True},
        {"mode": "overwrite"},
        {"order": ["n4"]},
    ):
        response = client.post("/api/graph", json={"source": source, **options})
        assert response.status_code == 200, response.text
        body = response.json()
        assert without_layout(body) == engine_json(source, None, **options)
    expanded = client.post("/api/graph", json={"source": source, "expand_derived": True}).json()
    compact = client.post("/api/graph", json={"source": source}).json()
    assert len(expanded["nodes"]) > len(compact["nodes"])


def test_non_finite_numbers_come_back_as_strings_in_strict_json(client):
    response = client.post("/api/graph", json={"source": "log(0) + 1/0 + log(-1) * 0"})
    assert response.status_code == 200
    body = strict_json(response.content)
    datas = {node["data"] for node in body["nodes"]}
    assert {"-Infinity", "Infinity", "NaN"} <= datas
    assert b"NaN," not in response.content.replace(b'"NaN"', b"")


def test_a_program_error_is_400_with_its_position_and_caret(client):
    response = client.post("/api/graph", json={"source": "a = 2\nb = a +* 3"})
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["type"] == "SyntaxError"
    assert (error["line"], error["column"]) == (2, 8)
    assert error["snippet"] == "b = a +* 3"
    assert error["caret"] == "       ^"
    assert set(error) >= {"type", "message", "line", "column", "snippet", "caret"}


@pytest.mark.parametrize(
    ("source", "error_type"),
    [
        ("foo(a)", "UnknownFunction"),
        ("a = 1; a = 2; a", "AssignedTwice"),
        ("b = a; a = 2; b", "UseBeforeAssign"),
        ("relu(a, b)", "ArgumentCount"),
        ("a \x00 b", "SyntaxError"),
        ("a + \ud800", "SyntaxError"),
        ("", "SyntaxError"),
    ],
)
def test_bad_programs_are_400_never_500(client, source, error_type):
    # json.dumps writes NUL and lone surrogates as \u escapes, as a browser would send them.
    body = json.dumps({"source": source}).encode()
    response = client.post("/api/graph", content=body, headers=JSON)
    assert response.status_code == 400, response.text
    assert strict_json(response.content)["error"]["type"] == error_type


def test_a_lone_surrogate_in_a_comment_is_400_or_valid_json(client):
    body = b'{"source": "a + b # \\ud800"}'
    response = client.post("/api/graph", content=body, headers=JSON)
    assert response.status_code in (200, 400)
    strict_json(response.content)
    response.content.decode("utf-8")


def test_a_lone_surrogate_in_values_or_order_is_422(client):
    for body in (
        b'{"source": "a", "values": {"\\udc00": 1}}',
        b'{"source": "a", "order": ["\\ud800"]}',
    ):
        response = client.post("/api/graph", content=body, headers=JSON)
        assert response.status_code == 422
        assert "lone surrogate" in response.json()["error"]["message"]


def test_non_finite_request_values_are_rejected_with_a_clear_error(client):
    body = b'{"source": "a * 2", "values": {"a": NaN}}'
    response = client.post("/api/graph", content=body, headers=JSON)
    assert response.status_code in (400, 422)
    strict_json(response.content)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            {"source": "a", "values": {"a": "x"}},
            "values.a: Input should be a valid number",
        ),
        ({"source": 3}, "source: Input should be a valid string"),
        ({"source": "a", "colour": "red"}, "colour: Extra inputs are not permitted"),
        ({"values": {}}, "source: Field required"),
        ({"source": "a", "mode": "wrong"}, "mode: Input should be 'correct' or 'overwrite'"),
        ({"source": "a", "order": "n0"}, "order: Input should be a valid list"),
        (
            {"source": "a", "expand_derived": "maybe"},
            "expand_derived: Input should be a valid boolean",
        ),
    ],
)
def test_malformed_requests_are_422_in_our_shape(client, body, message):
    response = client.post("/api/graph", json=body)
    assert response.status_code == 422
    assert response.json() == {
        "error": {
            "type": "InvalidRequest",
            "message": message,
            "line": None,
            "column": None,
            "end_line": None,
            "end_column": None,
            "snippet": "",
            "caret": "",
        }
    }


def test_invalid_json_is_422(client):
    response = client.post("/api/graph", content=b'{"source": ', headers=JSON)
    assert response.status_code == 422
    assert response.json()["error"]["message"] == (
        "the request body is not valid JSON: Expecting value (line 1, column 12)"
    )


def test_server_limits_apply_and_name_the_limit(make_client):
    client = make_client(max_nodes=10, max_source_tokens=50, max_depth=5)
    too_many = client.post("/api/graph", json={"source": " + ".join(f"x{i}" for i in range(8))})
    assert too_many.status_code == 400
    assert too_many.json()["error"]["type"] == "LimitExceeded"
    too_long = client.post("/api/graph", json={"source": "a + " * 25 + "a"})  # 51 tokens
    assert too_long.status_code == 400
    assert too_long.json()["error"]["message"].startswith("program has more than 50 tokens")
    assert too_long.json()["error"]["column"] == 101  # the 51st token
    long_name = client.post("/api/graph", json={"source": "a" * 5_000})  # one token
    assert long_name.status_code == 200
    too_deep = client.post("/api/graph", json={"source": "(" * 6 + "a" + ")" * 6})
    assert too_deep.status_code == 400
    assert too_deep.json()["error"]["type"] == "LimitExceeded"


def named_sum(terms: int) -> str:
    """`s1 = x0 + x1`, `s2 = s1 + x2`, …: a sum of `terms` leaves, 2 × terms − 1 nodes."""
    lines = ["s1 = x0 + x1", *(f"s{i} = s{i - 1} + x{i}" for i in range(2, terms))]
    return "\n".join(lines)


def test_a_5000_node_program_gets_the_fallback_layout_without_trying_dot(client):
    response = client.post("/api/graph", json={"source": named_sum(2500)})
    assert response.status_code == 200
    body = response.json()
    assert len(body["nodes"]) == 4999
    assert body["layout"]["engine"] == "sugiyama"
    nodes = {node["id"]: node for node in body["nodes"]}
    assert all(nodes[e["source"]]["x"] < nodes[e["target"]]["x"] for e in body["edges"])
    # The fallback is chosen up front, from the graph's size, not after a dot timeout (the
    # request above ran in a helper process; the time it takes is in bench/api.py).
    trace = engine.trace(named_sum(2500)).to_dict()
    layouter = Layouter.from_settings(AppSettings())
    layout, _ = layouter.layout(structure_of(trace["nodes"], trace["edges"], trace["groups"]))
    assert layout.engine == "sugiyama" and layouter.dot_runs == 0


def test_a_20000_node_graph_gets_a_layout(client):
    # 399 statements of 49 negations and a product: 19,952 nodes in 26,000 characters.
    lines = ["s0 = x", *(f"s{i} = {'-' * 49}s{i - 1} * y" for i in range(1, 400))]
    response = client.post("/api/graph", json={"source": "\n".join(lines)})
    assert response.status_code == 200
    body = response.json()
    assert len(body["nodes"]) == 19_952
    assert body["layout"]["engine"] == "sugiyama"
    nodes = {node["id"]: node for node in body["nodes"]}
    assert all(nodes[e["source"]]["x"] < nodes[e["target"]]["x"] for e in body["edges"])


def test_a_graph_over_the_node_limit_is_400_not_a_hang(client):
    lines = ["s0 = x", *(f"s{i} = {'-' * 49}s{i - 1} * y" for i in range(1, 402))]
    response = client.post("/api/graph", json={"source": "\n".join(lines)})
    assert response.status_code == 400
    assert response.json()["error"]["type"] == "LimitExceeded"


@pytest.mark.parametrize("preset", [p["id"] for p in engine.PRESETS])
def test_the_body_with_its_layout_added_is_the_whole_reply_encoded(preset: str) -> None:
    """trace_body encodes the reply once and adds each body's layout to its bytes: the same
    bytes as encoding the reply with its layout, on every preset."""
    from chainrule.app.api.graph_body import trace_dict, with_layout
    from chainrule.app.api.schemas import GraphRequest

    source = next(p["source"] for p in engine.PRESETS if p["id"] == preset)
    reply = trace_dict(GraphRequest(source=source), AppSettings())
    layout = {"engine": "dot", "width": 1.5, "height": 2.0, "cached": False, "collapsed": None}
    whole = orjson.dumps({**reply, "layout": layout})
    assert with_layout(orjson.dumps(reply), layout) == whole


@pytest.mark.parametrize("preset", [p["id"] for p in ALL_PRESETS])
def test_the_reply_made_for_python_is_the_body_decoded(preset: str) -> None:
    """`build_reply` (the notebook's `chainrule.trace`, never encoded) is what `build_body`'s
    body decodes to, on every preset, scalar and tensor, and holds JSON's types alone: no tuple,
    no NaN, no object shared by two places a learner could change one of through the other."""
    from chainrule.app.api.graph_body import build_body, build_reply
    from chainrule.app.api.schemas import GraphRequest
    from chainrule.notebook.traces import _layouter

    source = next(p["source"] for p in ALL_PRESETS if p["id"] == preset)
    request, settings = GraphRequest(source=source), AppSettings()
    body = build_body(request, settings, _layouter())
    reply = build_reply(request, settings, _layouter())  # its layout now cached, as `later` says
    assert reply == orjson.loads(body.later)
    seen: set[int] = set()

    def plain(x: object) -> bool:
        if isinstance(x, (dict, list)):
            if id(x) in seen:
                return False
            seen.add(id(x))
            items = x.items() if isinstance(x, dict) else enumerate(x)
            return all((isinstance(k, str) or isinstance(x, list)) and plain(v) for k, v in items)
        if isinstance(x, float):
            return x == x and abs(x) != float("inf")
        return x is None or isinstance(x, (str, int))

    assert plain(reply)


def test_the_overview_of_a_model_on_two_samples_is_sent(client):
    """The reply's `overview` (docs/api.md, "Overview"), through the response model."""
    from tests.engine.test_overview import TWO_SAMPLES

    body = client.post("/api/graph", json={"source": TWO_SAMPLES}).json()
    assert body["overview"] == engine.trace(TWO_SAMPLES).to_dict()["overview"]
    assert [part["kind"] for part in body["overview"]["parts"]] == [
        "sample",
        "sample",
        "parameters",
        "combined",
    ]
    assert client.post("/api/graph", json={"source": "y = a * 3 + b"}).json()["overview"] is None
