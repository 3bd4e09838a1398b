"""POST /api/export of a tensor program (app/export/tensor_drawing.py): SVG, PNG and PDF draw its
tensor view (a card a tensor with its shape, its data and its gradient), numbers while a grid
fits, colours where it does not; the numbers are the engine's."""

from __future__ import annotations

import re
import struct
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from chainrule.app.export import tensor_drawing
from chainrule.engine.narration import fmt
from chainrule.engine.tensor_program import trace_tensors

SVG = "{http://www.w3.org/2000/svg}"
SOURCE = """X = tensor([[1.0, 2.0], [3.0, -1.0], [0.5, 0.5]])
W = tensor([[0.1, -0.2, 0.3], [0.4, 0.0, -0.5]])
b = tensor([0.1, 0.1, 0.1])
W2 = randn(3, 3, seed=1)
C = randn(27, 10, seed=2)
h = tanh(X @ W + b)
loss = cross_entropy(h @ W2, tensor([2, 0, 1])) + (C * C).mean()"""
LAYOUT_JS = Path(__file__).parents[2] / "static" / "js" / "tensor" / "layout.js"


@pytest.fixture(scope="module")
def svg(make_client_module):
    response = make_client_module().post(
        "/api/export?format=svg", json={"source": SOURCE, "values": {"W[1,2]": 0.25}}
    )
    assert response.status_code == 200, response.text
    return ET.fromstring(response.content)


@pytest.fixture(scope="module")
def make_client_module():
    from fastapi.testclient import TestClient

    from chainrule.app.main import create_app
    from chainrule.app.settings import AppSettings

    clients = []

    def make(**overrides):
        client = TestClient(create_app(AppSettings(**overrides)), raise_server_exceptions=False)
        clients.append(client.__enter__())
        return client

    yield make
    for client in clients:
        client.__exit__(None, None, None)


def card_texts(svg: ET.Element) -> dict[str, list[str]]:
    """Each tensor's card (a Graphviz node titled by its id) → its texts, in order."""
    cards = {}
    for group in svg.iter(f"{SVG}g"):
        if group.get("class") == "node":
            title = group.find(f"{SVG}title").text
            cards[title] = [t.text for t in group.iter(f"{SVG}text")]
    return cards


def test_the_svg_has_a_card_a_tensor_with_its_name_shape_numbers_and_gradient(svg):
    trace = trace_tensors(SOURCE, {"W[1,2]": 0.25})
    cards = card_texts(svg)
    assert len(cards) == len(trace.tensors)
    W = cards[f"t{trace.tensor('W').id}"]
    assert W[:2] == ["W", "2\u00d73"]
    data = [fmt(v.data) for v in trace.tensor("W").elements]
    grad = [fmt(v.grad) for v in trace.tensor("W").elements]
    assert data[5] == "0.25"  # the request's value
    assert W[2:] == [*data, "dW", *grad]  # the engine's numbers, row-major
    h = cards[f"t{trace.tensor('h').id}"]
    assert h[:2] == ["h = tanh", "3\u00d73"] and "dh" in h
    loss = cards[f"t{trace.root.id}"]
    assert loss[:2] == ["loss = +", "one number"] and loss[-2:] == ["dloss", "1"]
    # The class labels: an integer tensor, no gradient grid.
    labels = next(texts for texts in cards.values() if texts[0] == "tensor([2, 0, 1])")
    assert labels == ["tensor([2, 0, 1])", "3", "2", "0", "1"]
    edges = [t.text for g in svg.iter(f"{SVG}g") if g.get("class") == "edge"
             for t in g.iter(f"{SVG}text")]  # fmt: skip
    assert edges.count("@") == 4 and "tanh" in edges and "cross_entropy" in edges


def test_a_grid_too_big_for_numbers_is_colours_on_its_own_scale(svg):
    trace = trace_tensors(SOURCE, {"W[1,2]": 0.25})
    C = next(g for g in svg.iter(f"{SVG}g") if g.get("class") == "node"
             and g.find(f"{SVG}title").text == f"t{trace.tensor('C').id}")  # fmt: skip
    assert [t.text for t in C.iter(f"{SVG}text")] == ["C", "27\u00d710", "dC"]  # no numbers
    fills = [p.get("fill") for p in C.iter(f"{SVG}polygon")]  # the card, its cells, its border
    n = len(trace.tensor("C").elements)
    assert len(fills) == 2 * n + 2
    # Every element's cell, in order, blue for positive and orange for negative, as strong as
    # its size against its grid's largest: the data's, then the gradient's.
    elements = trace.tensor("C").elements
    data, grad = [v.data for v in elements], [v.grad for v in elements]
    for grid, numbers in ((fills[1 : n + 1], data), (fills[n + 1 : 2 * n + 1], grad)):
        largest = max(map(abs, numbers))
        assert grid == [tensor_drawing._colour(x, largest) for x in numbers]
        strongest = numbers.index(max(numbers, key=abs))
        full = tensor_drawing.POSITIVE if numbers[strongest] > 0 else tensor_drawing.NEGATIVE
        assert grid[strongest] == "#" + "".join(f"{c:02x}" for c in full)
    assert len(set(fills[1 : n + 1])) > 100  # a scale, not two colours


def test_the_numbers_fit_as_many_cells_as_the_page_s():
    page = re.search(r"export const NUMBER_CELLS = (\d+);", LAYOUT_JS.read_text()).group(1)
    assert int(page) == tensor_drawing.NUMBER_CELLS


def png_size(png: bytes) -> tuple[int, int]:
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and png[12:16] == b"IHDR"
    return struct.unpack(">II", png[16:24])


def test_png_and_pdf_are_the_same_picture(make_client_module):
    client = make_client_module()
    png = client.post("/api/export?format=png&name=tensor-mlp", json={"source": SOURCE})
    assert png.status_code == 200 and png.headers["content-type"] == "image/png"
    assert png.headers["content-disposition"] == 'attachment; filename="tensor-mlp.png"'
    width, height = png_size(png.content)
    # The SVG's size in points at the PNG's 96 dpi (Graphviz rounds the bitmap's sides).
    svg = ET.fromstring(client.post("/api/export?format=svg", json={"source": SOURCE}).content)
    points = [float(svg.get(side).removesuffix("pt")) for side in ("width", "height")]
    assert abs(width - points[0] * 96 / 72) <= 8 and abs(height - points[1] * 96 / 72) <= 8
    assert width > 1000 and height > 400  # ten cards side by side, their grids readable
    pdf = client.post("/api/export?format=pdf", json={"source": SOURCE})
    assert pdf.status_code == 200 and pdf.content.startswith(b"%PDF-")
    box = re.search(rb"/MediaBox \[ ?0 0 ([\d.]+) ([\d.]+) ?\]", pdf.content)
    # The same drawing on a page with Graphviz's half-inch margin on each side.
    sides = zip(box.groups(), points, strict=True) if box else ()
    assert box and all(abs(float(side) - svg_side - 72) <= 2 for side, svg_side in sides)


def test_the_shape_of_one_number_is_said_in_the_request_s_language(make_client_module):
    client = make_client_module()
    svg = client.post("/api/export?format=svg", json={"source": SOURCE, "lang": "ru"}).content
    cards = card_texts(ET.fromstring(svg))
    assert sum(texts[1] == "одно число" for texts in cards.values()) == 3


def test_a_tensor_program_over_the_export_limit_is_a_clear_400(make_client_module):
    client = make_client_module(export_max_nodes=100)
    response = client.post("/api/export?format=png", json={"source": SOURCE})
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["type"] == "ExportTooLarge"
    size = trace_tensors(SOURCE).elements.element_count
    assert error["message"] == (
        f"tensor program too large to draw ({size} elements; limit 100): its tensors are drawn "
        "element by element"
    )
    ru = client.post("/api/export?format=svg", json={"source": SOURCE, "lang": "ru"}).json()
    assert ru["error"]["message"].startswith(
        f"программа с тензорами слишком велика для рисунка (элементов: {size};"
    )


def test_a_shape_error_is_the_program_s_400(make_client_module):
    source = "A = randn(3, 2, seed=1)\nB = randn(3, 3, seed=2)\nL = (A @ B).sum()"
    response = make_client_module().post("/api/export?format=svg", json={"source": source})
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["type"] == "ShapeError" and (error["line"], error["column"]) == (3, 8)
