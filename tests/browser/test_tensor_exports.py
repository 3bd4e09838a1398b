"""A tensor program's exports from the page's Export menu (issue 43): SVG, PNG and PDF of its
tensor view, downloaded with the preset's name, holding the numbers the page shows (a cell
changed on the page included). app/export/tensor_drawing.py draws them
(tests/app/test_export_tensors.py checks the drawing against the engine)."""

from __future__ import annotations

import struct
import xml.etree.ElementTree as ET

import pytest

from chainrule.engine.narration import fmt
from chainrule.engine.presets import presets
from chainrule.engine.tensor_program import trace_tensors

pytestmark = pytest.mark.browser

PROGRAM = next(p for p in presets() if p["id"] == "tensor-mlp")["source"]
TENSORS = "[data-testid=tensor-graph][data-ready=true]"
SVG = "{http://www.w3.org/2000/svg}"


def export(page, fmt: str):
    page.click("#export-button")
    with page.expect_download() as info:
        page.click(f"[role=menuitem][data-format={fmt}]")
    return info.value


def test_the_export_menu_draws_a_tensor_program(page, tmp_path):
    page.goto("/?preset=tensor-mlp")
    page.wait_for_selector(TENSORS)
    w = "[data-testid=tensor-cell][data-tensor-id=t1][data-grid=data][data-index='1,2']"
    page.click(w)
    page.fill("[data-testid=tensor-cell-value]", "0.25")
    page.press("[data-testid=tensor-cell-value]", "Enter")
    page.wait_for_function(f"() => document.querySelector(\"{w}\").dataset.value === '0.25'")

    svg = export(page, "svg")
    assert svg.suggested_filename == "tensor-mlp.svg"
    svg.save_as(tmp_path / "tensor.svg")
    texts = [t.text for t in ET.parse(tmp_path / "tensor.svg").iter(f"{SVG}text")]
    trace = trace_tensors(PROGRAM, {"W[1,2]": 0.25})
    for name in ("X", "W", "b", "W2", "h = tanh", "dW", "dW2", "dh"):
        assert name in texts, name
    assert "2\u00d73" in texts and "3\u00d73" in texts
    w_grads = [fmt(v.grad) for v in trace.tensor("W").elements]
    start = texts.index("dW")
    assert texts[start + 1 : start + 7] == w_grads  # the engine's numbers with the page's 0.25
    assert texts[texts.index("W") + 7] == "0.25"

    png = export(page, "png")
    assert png.suggested_filename == "tensor-mlp.png"
    png.save_as(tmp_path / "tensor.png")
    data = (tmp_path / "tensor.png").read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    assert width > 800 and height > 300

    pdf = export(page, "pdf")
    assert pdf.suggested_filename == "tensor-mlp.pdf"
    pdf.save_as(tmp_path / "tensor.pdf")
    assert (tmp_path / "tensor.pdf").read_bytes().startswith(b"%PDF-")
    assert page.locator(".share-status").text_content() == ""  # nothing failed
