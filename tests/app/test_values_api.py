"""`POST /api/values` (app/api/values.py): the numbers of new values for a structure the client
holds equal what `/api/graph` answers for those values, for every preset and variant; a
structure id that is not the body's is a 409 naming what to do."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from chainrule import engine
from chainrule.app.api.graph_body import structure_id
from chainrule.app.api.schemas import GraphRequest
from chainrule.app.settings import AppSettings
from chainrule.engine.step_reader import step_objects

EXAMPLE = "a = 2\nb = -3\nc = a * b\nL = c + a"


def numbers_of(graph: dict[str, Any]) -> dict[str, Any]:
    """The numbers reply as read off a whole `/api/graph` reply (docs/api.md)."""
    nodes = graph["nodes"]
    grad = [node["grad"] for node in nodes]
    correct_grad = [node["correct_grad"] for node in nodes]
    backward = [step for step in step_objects(graph) if step["phase"] == "backward"]
    contributions = [c for step in backward for c in step["contributions"]]
    return {
        "structure": graph["structure"],
        "data": [node["data"] for node in nodes],
        "grad": grad,
        "correct_grad": None if orjson.dumps(correct_grad) == orjson.dumps(grad) else correct_grad,
        "local_grad": [edge["local_grad"] for edge in graph["edges"]],
        "step_grad": [step["grad"] for step in backward],
        **{
            key: [c[key] for c in contributions]
            for key in ("contribution", "grad_before", "grad_after")
        },
        "gradcheck": graph["gradcheck"],
        "warnings": graph["warnings"],
        "node_warnings": {node["id"]: node["warnings"] for node in nodes if node["warnings"]},
        "grad_flags": graph["grad_flags"],
        "tangent": None,  # reverse mode (test_forward_api.py: forward mode's)
        "tangent_contribution": None,
    }


def moved(values: dict[str, float]) -> dict[str, float]:
    """Every leaf nudged, one of them across zero (a relu's kink, a log's domain)."""
    return {
        name: (-value if i == 0 else value * 1.5 + 0.25)
        for i, (name, value) in enumerate(values.items())
    }


VARIANTS = [
    {},
    {"expand_derived": True},
    {"mode": "overwrite"},
]


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: ",".join(v) or "correct")
@pytest.mark.parametrize("preset", engine.PRESETS, ids=lambda p: p["id"])
def test_numbers_equal_the_graph_of_the_new_values(client, preset, variant) -> None:
    body = {"source": preset["source"], **variant}
    first = client.post("/api/graph", json=body).json()
    values = moved({leaf["name"]: leaf["value"] for leaf in first["leaves"]})
    reply = client.post(
        "/api/values", json={**body, "values": values, "structure": first["structure"]}
    )
    assert reply.status_code == 200
    fresh = client.post("/api/graph", json={**body, "values": values}).json()
    assert fresh["structure"] == first["structure"]  # values are not part of the structure
    assert orjson.dumps(reply.json()) == orjson.dumps(numbers_of(fresh))


def test_a_custom_visit_order_has_its_own_numbers(client) -> None:
    body = {"source": "a = 2\nb = a + 1\nc = a * 3\nd = b * c", "order": ["n5", "n3", "n1", "n0"]}
    first = client.post("/api/graph", json=body).json()
    assert first["order_check"]["valid"] is False  # b and c are never visited
    values = {"a": -1.25}
    reply = client.post(
        "/api/values", json={**body, "values": values, "structure": first["structure"]}
    ).json()
    fresh = client.post("/api/graph", json={**body, "values": values}).json()
    assert reply == numbers_of(fresh)
    assert reply["correct_grad"] is not None  # the lab's order loses gradient: both are sent


def test_the_documented_example(client) -> None:
    structure = client.post("/api/graph", json={"source": EXAMPLE}).json()["structure"]
    reply = client.post(
        "/api/values", json={"source": EXAMPLE, "values": {"a": 4}, "structure": structure}
    )
    numbers = reply.json()
    assert (numbers["data"], numbers["grad"], numbers["step_grad"]) == (
        [4.0, -3.0, -12.0, -8.0], [-2.0, 4.0, 1.0, 1.0], [1.0, 1.0, 4.0, -2.0],
    )  # fmt: skip
    assert (numbers["contribution"], numbers["grad_before"], numbers["grad_after"]) == (
        [1.0, 1.0, -3.0, 4.0], [0.0, 0.0, 1.0, 0.0], [1.0, 1.0, -2.0, 4.0],
    )  # fmt: skip
    expected = structure_id(GraphRequest(source=EXAMPLE), AppSettings())
    assert structure == expected  # computed as the server computes it, never quoted


@pytest.mark.parametrize(
    "change",
    [
        {"source": EXAMPLE + "\nM = L * 2"},
        {"expand_derived": True},
        {"mode": "overwrite"},
        {"order": ["n3", "n2", "n1", "n0"]},
    ],
    ids=["source", "expand_derived", "mode", "order"],
)
def test_a_structure_of_another_body_is_409(client, change) -> None:
    structure = client.post("/api/graph", json={"source": EXAMPLE}).json()["structure"]
    reply = client.post("/api/values", json={"source": EXAMPLE, **change, "structure": structure})
    assert reply.status_code == 409
    error = reply.json()["error"]
    assert error["type"] == "StaleStructure"
    assert error["message"].endswith("post the program to /api/graph again")


def test_an_unknown_structure_is_409_and_a_program_error_is_400(client) -> None:
    assert (
        client.post("/api/values", json={"source": EXAMPLE, "structure": "0" * 24}).status_code
        == 409
    )
    structure = client.post("/api/graph", json={"source": EXAMPLE}).json()["structure"]
    bad = client.post(
        "/api/values", json={"source": EXAMPLE, "values": {"a": "4"}, "structure": structure}
    )
    assert bad.status_code == 422
    assert client.post("/api/values", json={"source": EXAMPLE}).status_code == 422  # no structure


@pytest.mark.parametrize(
    ("path", "request_schema", "response_schema"),
    [
        ("/api/values", "ValuesRequest", "ValuesResponse"),
        ("/api/descend", "DescendRequest", "DescendResponse"),
    ],
)
def test_the_openapi_examples_are_real_replies(client, path, request_schema, response_schema):
    schemas = client.get("/openapi.json").json()["components"]["schemas"]
    (body,) = schemas[request_schema]["examples"]
    (reply,) = schemas[response_schema]["examples"]
    response = client.post(path, json=body)
    assert response.status_code == 200
    # FastAPI drops a null from an example (reverse mode's `tangent` is null in the reply).
    assert {key: value for key, value in response.json().items() if value is not None} == reply
