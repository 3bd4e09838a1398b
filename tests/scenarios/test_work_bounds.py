"""Issue 36, the server's half: work is counted as it will be done, and every reply has a byte
budget. A call of the program's own function is one node of the graph but stands for its body's
nodes (the builder's `called_nodes`): each bound counts those, and each reply stays linear in
what it shows. The shapes are the hostile review's: the composed functions f1 … f12 (259
characters, 5 nodes, 16,387 nodes of work), a function of 4,000 parameters, 16,000 × `y=y*y`.
Sizes and messages only: bench/load.py and the report measure the time."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from chainrule.engine.functions import CALL_COST_BUILT, CALL_COST_RECOMPUTED
from chainrule.engine.narration import TEXT_MAX
from chainrule.engine.paths import MAX_LISTED_EDGES
from chainrule.engine.reply import reply_budget

COMPOSED = "\n".join(
    ["f1(x) = x*0.5+0.25", *(f"f{k}(x) = f{k - 1}(f{k - 1}(x))" for k in range(2, 13))]
)
F12 = f"{COMPOSED}\na = 0.1\nb = 0.2\nL = f12(a) + f12(b)"
BODY_NODES = 4 * 2**11  # f1's body is 4 nodes (x*0.5, +0.25 and their constants): f12 is 2¹¹ f1s
# The graph: a, b, two calls, the sum; the work: each call as its body's nodes.
F12_WORK = 5 + 2 * (BODY_NODES - 1)
SIXTY = "L = f12(" + " + ".join(f"a{i}" for i in range(60)) + ")"
PARAMETERS = 4_000
PARAMS = ", ".join(f"p{i}" for i in range(PARAMETERS))
WIDE = (
    f"f({PARAMS}) = {' + '.join(f'p{i}' for i in range(PARAMETERS))}\n"
    f"L = f({', '.join(f'a{i}' for i in range(PARAMETERS))})"
)
SQUARES = "y=0.5\n" + "y=y*y\n" * 16_000


def f12(x: float) -> float:
    """The oracle: f12 is f1 applied 2¹¹ times, each step rounded as the engine rounds it."""
    for _ in range(2**11):
        x = x * 0.5 + 0.25
    return x


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    from chainrule.app.main import create_app
    from chainrule.app.settings import AppSettings

    with TestClient(create_app(AppSettings()), raise_server_exceptions=False) as made:
        yield made
        made.app.state.server.close()


def error_of(response: Any, status: int = 400) -> dict[str, Any]:
    assert response.status_code == status, response.text[:300]
    return response.json()["error"]


def test_the_composed_functions_stand_for_their_bodies_in_the_graph_s_work() -> None:
    from chainrule import engine

    graph = engine.build_graph(F12)
    assert len(graph.nodes) == 5
    assert graph.called_nodes == 2 * (BODY_NODES - 1)
    assert graph.work() == F12_WORK
    assert graph.work(CALL_COST_RECOMPUTED) == 5 + 2 * (BODY_NODES - 1) * CALL_COST_RECOMPUTED


def test_no_landscape_of_the_composed_functions_fits_its_bound(client: TestClient) -> None:
    """61 × 61 points were half an hour of CPU: not even 2 × 2 fit now, and the 400 says so."""
    work = f"{5 + 2 * (BODY_NODES - 1) * CALL_COST_RECOMPUTED:,}"
    for points in (61, 2):
        body = {"source": F12, "parameters": ["a", "b"], "x_range": [0, 1], "y_range": [0, 1],
                "points": points}  # fmt: skip
        error = error_of(client.post("/api/landscape", json=body))
        assert error["type"] == "BadLandscape"
        assert error["message"] == (
            f"even 2 × 2 points of a graph that stands for {work} nodes (a call of the "
            "program's function counts as its body's nodes) are over the bound of 400,000 "
            "node-points a request: make the program smaller, or call its functions less often"
        )


def test_a_descent_of_the_composed_functions_is_as_long_as_its_bound_allows(
    client: TestClient,
) -> None:
    """20 steps took 21.6 s: refused, naming how many fit; those run, exactly."""
    work = 5 + 2 * (BODY_NODES - 1) * CALL_COST_BUILT
    fits = 200_000 // work
    body = {"source": F12, "parameters": ["a"], "lr": 0.1, "steps": 20}
    error = error_of(client.post("/api/descend", json=body))
    assert error["type"] == "BadTraining"
    assert error["message"] == (
        f"20 steps of a graph that stands for {work:,} nodes (a call of the program's function "
        "counts as its body's nodes) is too much work for one request (at most 200,000 "
        f"node-steps); ask for at most {fits} steps at a time"
    )
    response = client.post("/api/descend", json={**body, "steps": fits})
    assert response.status_code == 200, response.text
    reply = response.json()
    a = 0.1
    roots = [f12(a) + f12(0.2)]
    for _ in range(fits):
        a -= 0.1 * (0.5**2048)  # ∂f12/∂a: 0.5 for each of the 2,048 f1s, exactly
        roots.append(f12(a) + f12(0.2))
    assert reply["roots"] == roots


def test_the_gradient_check_counts_a_call_as_its_body(client: TestClient) -> None:
    """`L = f12(a0 + … + a59)`: each leaf's nudges evaluate f12 twice; 24 s of checking in the
    request's thread before. Its leaves are past the check's work bound: none is checked, and
    the reply says the check was capped."""
    for source, leaves in ((F12, 2), (f"{COMPOSED}\n{SIXTY}", 60)):
        response = client.post("/api/graph", json={"source": source})
        assert response.status_code == 200, response.text[:300]
        check = response.json()["gradcheck"]
        assert (check["checked"], check["total"], check["capped"]) == (0, leaves, True)
        assert check["results"] == []


def test_a_small_function_is_still_checked(client: TestClient) -> None:
    response = client.post("/api/graph", json={"source": f"{COMPOSED}\na = 0.1\nL = f4(a)"})
    check = response.json()["gradcheck"]
    assert (check["checked"], check["total"], check["capped"]) == (1, 1, False)
    assert check["results"][0]["status"] == "pass"


def test_the_composed_functions_expanded_stay_within_the_reply_budget(
    client: TestClient,
) -> None:
    """`expand_derived` draws the 16,387 nodes: the reply was 101 MB, each helper's text its
    whole formula (doubling at each level of calls). Now each text is cut as a span's is."""
    response = client.post("/api/graph", json={"source": F12, "expand_derived": True})
    assert response.status_code == 200, response.text[:300]
    reply = response.json()
    assert len(reply["nodes"]) == 16_387
    assert len(response.content) <= reply_budget(len(reply["nodes"]), F12)
    assert max(len(node["text"]) for node in reply["nodes"]) == TEXT_MAX
    assert reply["nodes"][-1]["data"] == f12(0.1) + f12(0.2)


def test_a_function_of_4000_parameters_has_a_reply_linear_in_them(client: TestClient) -> None:
    """It was a 327 MB reply: each of the 4,000 local derivatives named the 4,000 arguments,
    and each of the call's 4,000 contributions repeated the whole definition."""
    response = client.post("/api/graph", json={"source": WIDE})
    assert response.status_code == 200, response.text[:300]
    reply = response.json()
    assert len(reply["nodes"]) == PARAMETERS + 1
    assert len(response.content) <= reply_budget(PARAMETERS + 1, WIDE)
    (function,) = reply["functions"]
    assert function["locals"][0] == "∂f/∂p0({0}, {1}, {2}, …, {3999})"
    assert function["locals"][-1] == "∂f/∂p3999({0}, {1}, {2}, …, {3999})"
    assert reply["nodes"][-1]["data"] == PARAMETERS  # every undeclared leaf is 1


def test_paths_through_16000_squarings_are_refused_past_the_listed_edges(
    client: TestClient,
) -> None:
    """100 paths of 16,000 edges were a 33.6 MB reply: refused, saying how many paths fit;
    those are listed."""
    body = {"source": SQUARES, "leaf": "y", "limit": 100}
    error = error_of(client.post("/api/paths", json=body))
    assert error["type"] == "LimitExceeded"
    fits = MAX_LISTED_EDGES // 16_000
    assert error["message"] == (
        "the paths from 'y' to the target are up to 16,000 edges long: 100 of them would list "
        f"up to 1,600,000 edges, over the {MAX_LISTED_EDGES:,} one reply lists; ask for at "
        f"most {fits} paths (limit)"
    )
    response = client.post("/api/paths", json={**body, "limit": fits})
    assert response.status_code == 200, response.text[:300]
    reply = response.json()
    assert [len(path["edges"]) for path in reply["paths"]] == [16_000] * fits
    assert reply["count_exact"] is False  # 2¹⁶⁰⁰⁰ paths: past the exact count
    assert len(response.content) < 2_000_000
