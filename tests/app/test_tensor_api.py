"""`POST /api/graph` with a tensor program (app/api/graph.py; docs/api.md, "Tensor programs"):
the tensors' reply, its errors in the one error shape, the bounds as a 400, and a scalar
program's reply unchanged."""

from __future__ import annotations

import math
import time

ISSUE = (
    "X = tensor([[1.0, 2.0], [3.0, -1.0], [0.5, 0.5]])\n"
    "W = tensor([[0.1, -0.2, 0.3], [0.4, 0.0, -0.5]])\nb = tensor([0.1, 0.1, 0.1])\n"
    "W2 = randn(3, 3, seed=1)\nh = tanh(X @ W + b)\n"
    "loss = cross_entropy(h @ W2, tensor([2, 0, 1]))"
)


def test_a_tensor_program_answers_with_its_tensors(client):
    response = client.post("/api/graph", json={"source": ISSUE, "values": {"W[0,0]": 0.5}})
    assert response.status_code == 200, response.text[:300]
    reply = response.json()
    assert reply["kind"] == "tensor"
    nodes = {node["id"]: node for node in reply["nodes"]}
    W = nodes[next(leaf["id"] for leaf in reply["leaves"] if leaf["name"] == "W")]
    assert (W["name"], W["shape"], W["data"][0]) == ("W", [2, 3], [0.5, -0.2, 0.3])
    assert len(W["grad"]) == 2 and all(len(row) == 3 for row in W["grad"])
    root = nodes[reply["root"]]
    assert (root["name"], root["shape"], root["op"]) == ("loss", [], "cross_entropy")
    assert isinstance(root["data"], float) and root["grad"] == 1.0


def test_a_scalar_program_s_reply_is_unchanged(client):
    reply = client.post("/api/graph", json={"source": "a = 2\nb = -3\nf = a * b"}).json()
    assert "kind" not in reply and [n["data"] for n in reply["nodes"]] == [2.0, -3.0, -6.0]


def test_a_shape_error_is_a_400_at_the_operator(client):
    source = "A = randn(3, 2, seed=1)\nB = randn(3, 3, seed=2)\nL = (A @ B).sum()"
    response = client.post("/api/graph", json={"source": source})
    assert response.status_code == 400
    assert response.json() == {
        "error": {
            "type": "ShapeError",
            "message": "`(3, 2) @ (3, 3)`: inner sizes 2 and 3 differ",
            "line": 3,
            "column": 8,
            "end_line": 3,
            "end_column": 9,
            "snippet": "L = (A @ B).sum()",
            "caret": "       ^",
        }
    }
    russian = client.post("/api/graph?lang=ru", json={"source": source}).json()["error"]
    assert russian["message"] == "`(3, 2) @ (3, 3)`: внутренние размеры 2 и 3 различаются"


def test_a_thousand_by_thousand_matmul_is_refused_at_once(client):
    source = "A = randn(1000, 1000, seed=1)\nB = randn(1000, 1000, seed=2)\nL = (A @ B).sum()"
    started = time.perf_counter()
    response = client.post("/api/graph", json={"source": source})
    assert time.perf_counter() - started < 2.0
    assert response.status_code == 400
    error = response.json()["error"]
    assert (error["type"], error["line"], error["column"]) == ("LimitExceeded", 1, 5)
    assert error["message"] == (
        "`randn(1000, 1000, seed=1)` would make the tensors hold 1,000,000 elements; "
        "the limit is 20,000"
    )


def test_the_element_limit_is_the_server_s_node_limit(make_client):
    small = make_client(max_nodes=10)
    response = small.post("/api/graph", json={"source": "A = randn(3, 4, seed=1)\nL = A.sum()"})
    assert response.status_code == 400
    assert response.json()["error"]["message"] == (
        "`randn(3, 4, seed=1)` would make the tensors hold 12 elements; the limit is 10"
    )


def test_the_scalar_routes_refuse_a_tensor_program_by_name(client):
    # (the exports draw tensor programs: tests/app/test_export_tensors.py)
    response = client.post(
        "/api/descend", json={"source": ISSUE, "parameters": ["W"], "lr": 0.1, "steps": 1}
    )
    assert response.status_code == 400
    assert response.json()["error"]["type"] == "TensorProgram"


def test_an_element_s_fan_in_sums_to_its_gradient(client):
    source = "X = randn(4, 2, seed=3)\nW = randn(2, 3, seed=4)\nY = X @ W\nL = tanh(Y).sum()"
    graph = client.post("/api/graph", json={"source": source}).json()
    nodes = {node["name"]: node for node in graph["nodes"] if node["name"]}
    response = client.post("/api/fan-in", json={"source": source, "tensor": "W", "index": [1, 2]})
    assert response.status_code == 200, response.text[:300]
    reply = response.json()
    assert (reply["tensor"], reply["index"]) == (nodes["W"]["id"], [1, 2])
    assert reply["sum"] == reply["grad"] == nodes["W"]["grad"][1][2]
    X, dY = nodes["X"]["data"], nodes["Y"]["grad"]
    terms = [(c["tensor"], c["output"], c["local"], c["upstream"]) for c in reply["contributions"]]
    assert terms == [(nodes["Y"]["id"], [i, 2], X[i][1], dY[i][2]) for i in (3, 2, 1, 0)]


def test_a_fan_in_s_refusals(client):
    source = "X = randn(4, 2, seed=3)\nY = tensor([1, 0])\nL = X.sum()"
    for body, type_ in [
        ({"tensor": "Q", "index": [0]}, "BadLeaf"),
        ({"tensor": "Y", "index": [0]}, "BadLeaf"),
        ({"tensor": "X", "index": [4, 0]}, "ShapeError"),
        ({"tensor": "t0", "index": [0]}, "ShapeError"),
        ({"source": "a = 2\nb = a * 3", "tensor": "a", "index": []}, "BadLeaf"),
    ]:
        response = client.post("/api/fan-in", json={"source": source, **body})
        assert response.status_code == 400
        assert response.json()["error"]["type"] == type_


def test_expand_gives_an_op_s_scalar_graph_with_the_same_numbers(client):
    source = "X = randn(3, 2, seed=3)\nW = randn(2, 2, seed=4)\nY = X @ W\nL = tanh(Y).sum()"
    graph = client.post("/api/graph", json={"source": source}).json()
    nodes = {node["name"]: node for node in graph["nodes"] if node["name"]}
    reply = client.post("/api/expand", json={"source": source, "tensor": "Y"}).json()
    assert (reply["tensor"], reply["op"]) == (nodes["Y"]["id"], "@")
    assert len(reply["nodes"]) == 3 * 2 * 3  # per output element: 2 products and their sum
    outputs = {tuple(n["output"]): n for n in reply["nodes"] if n["output"] is not None}
    for (i, j), node in outputs.items():
        assert (node["op"], node["data"], node["grad"]) == (
            "+", nodes["Y"]["data"][i][j], nodes["Y"]["grad"][i][j],
        )  # fmt: skip
    products = [n for n in reply["nodes"] if n["op"] == "*"]
    assert {(i["tensor"], tuple(i["index"])) for p in products for i in p["inputs"]} == {
        *((nodes["X"]["id"], (i, k)) for i in range(3) for k in range(2)),
        *((nodes["W"]["id"], (k, j)) for k in range(2) for j in range(2)),
    }


def test_expand_is_bounded_and_says_where(client):
    source = "X = randn(40, 40, seed=1)\nY = X @ X\nL = Y.sum()"
    response = client.post("/api/expand", json={"source": source, "tensor": "Y"})
    assert response.status_code == 400
    assert response.json()["error"]["message"] == (
        "'Y' is 126,400 scalar nodes; Expand draws at most 2,000: expand a smaller op, or make "
        "the tensors smaller"
    )


def test_expand_s_graph_is_drawn_as_a_scalar_graph_with_the_tensor_cards_numbers(client):
    """The page's Expand: `X @ W` of the issue's program as cards and edges in `/api/graph`'s
    shape, laid out, the inputs' elements as leaves named `X[i,k]`, the outputs `(X @ W)[i,j]`,
    every element's numbers those of its tensor's cell."""
    tensors = client.post("/api/graph", json={"source": ISSUE}).json()["nodes"]
    by_id = {node["id"]: node for node in tensors}
    xw = next(node for node in tensors if node["label"] == "X @ W")
    body = {"source": ISSUE, "tensor": xw["id"], "graph": True}
    reply = client.post("/api/expand", json=body).json()
    graph = reply["graph"]
    cards = {card["id"]: card for card in graph["nodes"]}
    # 9 output elements of 2 products and their sum each, reading 6 + 6 elements of X and W.
    assert (len(reply["nodes"]), len(cards), len(graph["edges"])) == (27, 39, 54)
    assert reply["limit"] == 2_000
    leaves = [card for card in cards.values() if card["kind"] == "leaf"]
    assert sorted(card["label"] for card in leaves) == sorted(
        [f"X[{i},{k}]" for i in range(3) for k in range(2)]
        + [f"W[{k},{j}]" for k in range(2) for j in range(3)]
    )
    for card in cards.values():
        element = card["element"]
        if element is None:
            continue
        tensor = by_id[element["tensor"]]
        i, j = element["index"]
        assert (card["data"], card["grad"]) == (tensor["data"][i][j], tensor["grad"][i][j])
        name = tensor["name"] or f"({tensor['label']})"
        assert card["label"] == f"{name}[{i},{j}]"
    # Each output element is the sum of the products X[i,k]·W[k,j], and each edge carries the
    # local derivative the scalar graph has: the other factor.
    into = {}
    for edge in graph["edges"]:
        into.setdefault(edge["target"], []).append(edge)
    for i in range(3):
        for j in range(3):
            out = next(c for c in cards.values() if c["label"] == f"(X @ W)[{i},{j}]")
            assert out["op"] == "+" and out["kind"] == "op"
            products = [cards[edge["source"]] for edge in into[out["id"]]]
            for k, product in enumerate(products):
                assert product["op"] == "*" and product["text"] == f"X[{i},{k}]·W[{k},{j}]"
                factors = [cards[edge["source"]]["label"] for edge in into[product["id"]]]
                assert factors == [f"X[{i},{k}]", f"W[{k},{j}]"]
                locals_ = [edge["local_grad"] for edge in into[product["id"]]]
                assert locals_ == [by_id["t1"]["data"][k][j], by_id["t0"]["data"][i][k]]
    # Laid out as a scalar program: leaves left of the products, products left of the sums.
    column = {kind: [c["x"] for c in cards.values() if c["kind"] == kind] for kind in ("leaf",)}
    products = [c["x"] for c in cards.values() if c["op"] == "*"]
    sums = [c["x"] for c in cards.values() if c["op"] == "+"]
    assert max(column["leaf"]) < min(products) and max(products) < min(sums)
    assert graph["layout"]["width"] >= max(c["x"] + c["width"] / 2 for c in cards.values())
    # Asked without `graph`, the reply has none (and costs no layout).
    plain = client.post("/api/expand", json={"source": ISSUE, "tensor": xw["id"]}).json()
    assert plain["graph"] is None and plain["nodes"] == reply["nodes"]


def test_expand_s_bound_names_the_op_however_it_is_asked_for(client):
    source = "X = randn(40, 40, seed=1)\nY = X @ X\nL = Y.sum()"
    for tensor in ("Y", "t1"):
        response = client.post("/api/expand", json={"source": source, "tensor": tensor})
        assert response.status_code == 400
        assert response.json()["error"]["message"].startswith(
            "'Y' is 126,400 scalar nodes; Expand draws at most 2,000"
        )
    unnamed = client.post("/api/expand", json={"source": "X = randn(40, 40, seed=1)\n"
                          "L = (X @ X).sum()", "tensor": "t1", "graph": True})  # fmt: skip
    assert unnamed.json()["error"]["message"].startswith("'X @ X' is 126,400 scalar nodes")


def test_expand_s_cards_are_as_wide_as_their_names_and_never_overlap(client):
    """An element's name says which cell it is only whole (`(X @ W + b)[0,1]`): the layout is
    given each card's width (app/api/tensor_routes.py card_size), the page cuts none of these."""
    for tensor, widest in (("t5", "(X @ W + b)[0,1]"), ("t9", None)):
        body = {"source": ISSUE, "tensor": tensor, "graph": True}
        cards = client.post("/api/expand", json=body).json()["graph"]["nodes"]
        for card in cards:
            if card["kind"] == "const":
                assert (card["width"], card["height"]) == (56.0, 32.0)
            else:
                assert 150.0 <= card["width"] <= 260.0 and card["height"] == 64.0
        if widest:
            card = next(c for c in cards if c["label"] == widest)
            assert card["width"] > 150.0
        for k, a in enumerate(cards):
            for b in cards[k + 1 :]:
                apart_x = abs(a["x"] - b["x"]) >= (a["width"] + b["width"]) / 2
                apart_y = abs(a["y"] - b["y"]) >= (a["height"] + b["height"]) / 2
                assert apart_x or apart_y, (a["id"], b["id"])


def _element(nested, index):
    for i in index:
        nested = nested[i]
    return nested


def test_every_op_s_expanded_graph_has_its_tensors_numbers_and_its_local_derivatives(client):
    """For every op of programs of many ops (views, reductions, softmax, cross entropy, a
    number's constant): each card of an element shows that element of the tensor reply, each
    edge the local derivative of `nodes`, and the cards are the op's nodes and what they read."""
    programs = [
        ISSUE,
        "X = tensor([[1.0, -2.0, 0.5], [3.0, -1.0, 2.0]])\nY = (X * -2 + 1).T\n"
        "Z = softmax(Y, 1)\nm = Z.mean(0, keepdim=True)\nL = (m.view(-1) ** 2).sum()",
    ]
    for source in programs:
        tensors = client.post("/api/graph", json={"source": source}).json()["nodes"]
        by_id = {node["id"]: node for node in tensors}
        for op in (node for node in tensors if node["kind"] == "op"):
            body = {"source": source, "tensor": op["id"], "graph": True}
            reply = client.post("/api/expand", json=body).json()
            graph = reply["graph"]
            cards = {card["id"]: card for card in graph["nodes"]}
            inside = {f"n{node['id']}": node for node in reply["nodes"]}
            assert set(inside) <= set(cards)
            read = {f"n{i['node']}" for n in reply["nodes"] for i in n["inputs"]} - set(inside)
            assert set(cards) == set(inside) | read
            for card in cards.values():
                if card["element"] is not None:
                    tensor = by_id[card["element"]["tensor"]]
                    index = card["element"]["index"]
                    assert card["data"] == _element(tensor["data"], index), card
                    assert card["grad"] == _element(tensor["grad"], index), card
                    assert card["kind"] == ("op" if card["id"] in inside else "leaf")
                if card["id"] in inside:
                    node = inside[card["id"]]
                    assert (card["data"], card["grad"]) == (node["data"], node["grad"])
            for edge in graph["edges"]:
                node = inside[edge["target"]]
                assert edge["local_grad"] == node["local_grads"][edge["index"]]
                assert edge["source"] == f"n{node['inputs'][edge['index']]['node']}"
            outputs = [c for c in cards.values() if c["element"] and c["id"] in inside]
            assert len(outputs) == math.prod(op["shape"])
