"""A program's own functions through the API (issue 27, part 4): the reply lists them and names
each call by its function; a refused definition is a 400 with the position, never a 500."""

from __future__ import annotations

import math

import pytest

from chainrule.engine.step_reader import step_objects

SOFTPLUS = "softplus(x) = log(1 + exp(x))\na = 2\nb = -0.5\ny = softplus(a*b)"


def test_a_call_is_one_node_named_by_its_function_and_the_reply_lists_the_function(client):
    reply = client.post("/api/graph", json={"source": SOFTPLUS}).json()
    call = next(node for node in reply["nodes"] if node["op"] == "softplus")
    assert (call["label"], call["derived"], call["expansion"]) == (
        "y",
        True,
        "log(1 + exp(a*b))",
    )
    assert reply["functions"] == [
        {
            "name": "softplus",
            "params": ["x"],
            "definition": "softplus(x) = log(1 + exp(x))",
            "line": 1,
            "span": [0, 29],
            "nodes": 4,
            "formula": "softplus({0})",
            "locals": ["\u2202softplus/\u2202x({0})"],
            "micrograd": "log(Value(1) + exp(x))",
            "torch": "torch.log(1 + torch.exp(x))",
            "uses": ["exp", "+", "log"],
        }
    ]
    forward = next(
        s for s in step_objects(reply) if s["phase"] == "forward" and s["node"] == call["id"]
    )
    assert forward["op"] == "softplus"


def test_expanding_draws_the_body_and_the_numbers_path_answers_a_slider(client):
    expanded = client.post("/api/graph", json={"source": SOFTPLUS, "expand_derived": True}).json()
    assert [node["op"] for node in expanded["nodes"] if node["kind"] == "op"] == [
        "*", "exp", "+", "log",
    ]  # fmt: skip
    graph = client.post("/api/graph", json={"source": SOFTPLUS}).json()
    numbers = client.post(
        "/api/values",
        json={"source": SOFTPLUS, "values": {"a": 1.0}, "structure": graph["structure"]},
    ).json()
    assert numbers["data"][3] == pytest.approx(math.log(1 + math.exp(-0.5)), rel=1e-15)


@pytest.mark.parametrize("lang", ["en", "ru", "et"])
def test_recursion_is_a_400_with_its_position_in_every_language(client, lang):
    response = client.post("/api/graph", json={"source": "f(x) = f(x) * 2\nf(a)", "lang": lang})
    assert response.status_code == 400
    error = response.json()["error"]
    assert (error["type"], error["line"], error["column"]) == ("BadFunction", 1, 8)
    assert (error["snippet"], error["caret"]) == ("f(x) = f(x) * 2", "       ^")


@pytest.mark.parametrize("format_", ["svg", "dot"])
def test_the_export_draws_a_call_with_its_functions_name(client, format_):
    response = client.post(f"/api/export?format={format_}", json={"source": SOFTPLUS})
    assert response.status_code == 200
    assert "softplus" in response.text
