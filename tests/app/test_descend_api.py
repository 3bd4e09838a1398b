"""`POST /api/descend` (issue 13): gradient descent by the server, in batches."""

from __future__ import annotations

import pytest

LINE = "loss = (w*2 + b - 5)**2"


def hand_loop(lr: float, steps: int) -> tuple[list[float], list[list[float]]]:
    w = b = 0.0
    roots, values = [], []
    for _ in range(steps):
        r = 2 * w + b - 5
        roots.append(r**2)
        w, b = w - lr * 4 * r, b - lr * 2 * r
        values.append([w, b])
    roots.append((2 * w + b - 5) ** 2)
    return roots, values


def test_fifty_steps_match_a_hand_written_loop(client):
    body = {"source": LINE, "values": {"w": 0.0, "b": 0.0}, "parameters": ["w", "b"],
            "lr": 0.01, "steps": 50}  # fmt: skip
    response = client.post("/api/descend", json=body)
    assert response.status_code == 200, response.text
    reply = response.json()
    roots, values = hand_loop(0.01, 50)
    assert reply["parameters"] == ["w", "b"]
    assert reply["stopped"] is None
    assert reply["roots"] == pytest.approx(roots, rel=1e-12, abs=1e-12)
    assert len(reply["values"]) == 50
    for got, want in zip(reply["values"], values, strict=True):
        assert got == pytest.approx(want, rel=1e-12, abs=1e-12)


def test_batches_carry_values_velocity_and_baseline(client):
    base = {"source": LINE, "parameters": ["w", "b"], "lr": 0.01, "momentum": 0.9}
    whole = client.post("/api/descend", json=base | {"values": {"w": 0.0, "b": 0.0}, "steps": 40})
    first = client.post("/api/descend", json=base | {"values": {"w": 0.0, "b": 0.0}, "steps": 20})
    w, b = first.json()["values"][-1]
    second = client.post("/api/descend", json=base | {
        "values": {"w": w, "b": b}, "steps": 20, "velocity": first.json()["velocity"],
        "baseline": first.json()["roots"][0],
    })  # fmt: skip
    assert first.json()["roots"] + second.json()["roots"][1:] == whole.json()["roots"]
    assert first.json()["values"] + second.json()["values"] == whole.json()["values"]


def test_a_diverging_rate_answers_200_with_the_step_and_a_smaller_rate(client):
    body = {"source": LINE, "values": {"w": 0.0, "b": 0.0}, "parameters": ["w", "b"],
            "lr": 1.0, "steps": 20}  # fmt: skip
    reply = client.post("/api/descend", json=body).json()
    assert reply["stopped"] == {
        "step": 1,
        "reason": "diverged",
        "message": "Stopped at step 1: the root rose from 25 to 2025. "
        "The learning rate 1 is too large here; try 0.1.",
    }
    overflow = {"source": "y = -exp(a)", "values": {"a": 700.0}, "parameters": ["a"],
                "lr": 1.0, "steps": 5}  # fmt: skip
    reply = client.post("/api/descend", json=overflow).json()
    assert reply["roots"][1] == "-Infinity"
    assert reply["stopped"]["reason"] == "nonfinite"


@pytest.mark.parametrize(
    ("change", "status", "message"),
    [
        ({"parameters": ["q"]}, 400, "'q' is not a leaf of this program, so it cannot be "
                                     "trained; its leaves are: w, b"),
        ({"parameters": ["loss"]}, 400, "'loss' is not a leaf of this program, so it cannot be "
                                        "trained; its leaves are: w, b"),
        ({"lr": 0.0}, 400, "the learning rate must be a finite number above 0, got 0.0"),
        ({"lr": -1.0}, 400, "the learning rate must be a finite number above 0, got -1.0"),
        ({"steps": 201}, 400, "steps must be a whole number from 1 to 200, got 201"),
        ({"steps": 0}, 400, "steps must be a whole number from 1 to 200, got 0"),
        ({"momentum": 1.0}, 400,
         "momentum must be a number from 0 up to (not including) 1, got 1.0"),
    ],
)  # fmt: skip
def test_settings_that_cannot_run_are_400_bad_training(client, change, status, message):
    body = {"source": LINE, "parameters": ["w", "b"], "lr": 0.1, "steps": 3} | change
    response = client.post("/api/descend", json=body)
    assert response.status_code == status
    error = response.json()["error"]
    assert (error["type"], error["message"]) == ("BadTraining", message)
    assert error["line"] is None and error["caret"] == ""


@pytest.mark.parametrize(
    "change",
    [{"lr": "0.1"}, {"lr": True}, {"steps": 2.5}, {"parameters": "w"}, {"unknown": 1}],
)
def test_malformed_bodies_are_422(client, change):
    body = {"source": LINE, "parameters": ["w", "b"], "lr": 0.1, "steps": 3} | change
    response = client.post("/api/descend", json=body)
    assert response.status_code == 422
    assert response.json()["error"]["type"] == "InvalidRequest"


def test_non_finite_learning_rates_are_refused(client):
    for token in ("NaN", "Infinity", "-Infinity"):
        text = f'{{"source": "y = w*w", "parameters": ["w"], "lr": {token}, "steps": 1}}'
        response = client.post(
            "/api/descend", content=text, headers={"content-type": "application/json"}
        )
        assert response.status_code == 422, token


def test_program_errors_are_those_of_api_graph(client):
    bad = client.post("/api/descend", json={"source": "y = w +* 2", "parameters": ["w"],
                                            "lr": 0.1, "steps": 1})  # fmt: skip
    graph = client.post("/api/graph", json={"source": "y = w +* 2"})
    assert bad.status_code == graph.status_code == 400
    assert bad.json() == graph.json()


def test_a_request_s_work_is_bounded(make_client):
    client = make_client(descend_max_node_steps=100)
    body = {"source": LINE, "parameters": ["w"], "lr": 0.1, "steps": 50}
    response = client.post("/api/descend", json=body)
    assert response.status_code == 400
    assert (
        "too much work for one request (at most 100 node-steps); ask for at most 12 steps"
        in (response.json()["error"]["message"])
    )
