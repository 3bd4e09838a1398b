"""A tensor program's cell drag computed in the page (issue 43; static/js/tensor/recompute.js over
POST /api/tensor-graph): every tensor's data and grad, and what each backward step passed back,
equal the server's for the same `values` (to the bit where + − × ÷ alone made a number, within
compute/evaluator.js's tolerances where V8's exp, log, tanh or pow took part); softmax's shift and
a `max`'s choice follow the new numbers; a drag on the page asks the server nothing."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import expect

from chainrule.bench.tensors import makemore
from chainrule.engine.presets import presets
from chainrule.engine.tensor_program import trace_tensors

sys.path.insert(0, str(Path(__file__).resolve().parent))
import test_onefile  # noqa: E402
from tensor_cells import cell  # noqa: E402
from test_numbers_page import IMPORT_JS, POST_JS  # noqa: E402
from test_onefile import assert_clean  # noqa: E402
from test_tensor_page import TENSORS  # noqa: E402

pytestmark = pytest.mark.browser
file_page = test_onefile.file_page  # the fixture: a file:// page that records every request

MLP = next(p for p in presets() if p["id"] == "tensor-mlp")["source"]
# Arithmetic alone (+ − × and copies: matmul, broadcast, relu, max, sum, transpose, indexing), so
# every number the page computes must be the engine's to the bit.
ARITHMETIC = """X = tensor([[1.0, 2.0], [3.0, -1.0], [0.5, 0.5]])
W = tensor([[0.1, -0.2, 0.3], [0.4, 0.0, -0.5]])
b = tensor([0.1, 0.1, 0.1])
h = relu(X @ W + b)
m = h.max(1).values
E = W.T[tensor([0, 2, 2])]
L = (m * m).sum() + (h * b).sum() - (E * E).sum() + X.sum()
"""

# For each case: the page's numbers (compileGraph over /api/tensor-graph at the program's own
# numbers, then recompute for `values`) beside /api/graph's reply for `values`, with each
# element's tolerance (tolerancesOf) and each backward step's passed gradients.
COMPARE_JS = """async (text) => {
  const { compileGraph, recompute, tolerancesOf } = await (IMPORT)('tensor/recompute.js');
  const { apiUrl } = await (IMPORT)('core/api.js');
  DEFINE_POST
  const flat = (x) => (Array.isArray(x) ? x.flat(Infinity) : [x]);
  const out = [];
  for (const { source, values } of JSON.parse(text)) {
    const reply = await post('api/graph', { source });
    const compiled = compileGraph(await post('api/tensor-graph', { source }), reply);
    const page = recompute(compiled, reply, values);
    const server = await post('api/graph', { source, values });
    const bound = tolerancesOf(compiled);
    const found = [];
    let compared = 0;
    let exact = 0;
    reply.nodes.forEach((node, t) => {
      if (node.dtype === 'int') return;
      for (const field of ['data', 'grad']) {
        const [mine, theirs] = [flat(page.nodes[t][field]), flat(server.nodes[t][field])];
        compiled.tensorElements[t].forEach((element, k) => {
          compared += 1;
          const [x, y] = [Number(mine[k]), Number(theirs[k])];
          if (Object.is(x, y)) exact += 1;
          else if (!(Math.abs(x - y) <= bound[field][element])) found.push([node.id, field, k, mine[k], theirs[k]]);
        });
      }
    });
    const steps = (reply) => JSON.stringify(reply.steps.map((step) => step.grads));
    const args = (reply) => JSON.stringify(reply.nodes.map((node) => node.args));
    out.push({
      found, compared, exact, stepsSame: steps(page) === steps(server), stepsMoved: steps(page) !== steps(reply),
      argsSame: args(page) === args(server), argsMoved: args(page) !== args(reply),
    });
  }
  return JSON.stringify(out);
}""".replace("IMPORT", IMPORT_JS).replace("DEFINE_POST", POST_JS)


def compare(page, cases: list[dict]) -> list[dict]:
    results = json.loads(page.evaluate(COMPARE_JS, json.dumps(cases)))
    for case, result in zip(cases, results, strict=True):
        assert result["found"] == [], (case["values"], result["found"][:10])
        assert result["compared"] > 0
    return results


def test_arithmetic_alone_is_the_engine_s_to_the_bit(modules_page):
    cases = [
        {"source": ARITHMETIC, "values": {"W[1,2]": 0.25}},
        # h[0] = relu([0.9, -0.1, -1.6]) → its max moves from column 0 to column 2 (the choice
        # is made again), b[1] opens a dead relu.
        {"source": ARITHMETIC, "values": {"W[1,2]": 3.0, "b[1]": 2.5, "X[0,0]": -0.5}},
    ]
    first, moved = compare(modules_page, cases)
    for result in (first, moved):
        assert result["exact"] == result["compared"]
        assert result["stepsSame"] and result["stepsMoved"]
        assert result["argsSame"]  # a max's argmax, as the server chose it
    assert moved["argsMoved"]


def test_the_example_and_makemore_s_mlp_agree_within_the_tolerances(modules_page):
    cases = [
        {"source": MLP, "values": {"W[1,2]": 0.25}},
        # A large move: rows' maxima (softmax's shift) change.
        {"source": MLP, "values": {"W[1,2]": 5.0, "W2[0,1]": -4.0, "b[0]": 2.0}},
        {"source": makemore(0), "values": {"W1[3,5]": 0.7, "b2[4]": 1.5, "C[2,3]": -2.0}},
    ]
    results = compare(modules_page, cases)
    assert all(r["argsSame"] for r in results)
    # Most numbers are the engine's to the bit; the rest within the tolerances.
    assert all(r["exact"] > 0.8 * r["compared"] for r in results)


# An element's fan-in computed in the page (elementFanIn, after a recompute for `values`) beside
# POST /api/fan-in's for the same values.
FAN_IN_JS = """async (text) => {
  const { compileGraph, recompute, elementFanIn } = await (IMPORT)('tensor/recompute.js');
  const { apiUrl } = await (IMPORT)('core/api.js');
  DEFINE_POST
  const { source, values, elements } = JSON.parse(text);
  const reply = await post('api/graph', { source });
  const compiled = compileGraph(await post('api/tensor-graph', { source }), reply);
  const shown = recompute(compiled, reply, values);
  const out = [];
  for (const [tensor, index] of elements) {
    out.push([elementFanIn(compiled, shown, tensor, index), await post('api/fan-in', { source, values, tensor, index })]);
  }
  return JSON.stringify(out);
}""".replace("IMPORT", IMPORT_JS).replace("DEFINE_POST", POST_JS)


def test_an_element_s_fan_in_in_the_page_is_the_server_s(modules_page):
    """The sum a gradient cell opens, computed in the page for the moved values (no request
    during a drag with a sum open, and in the one-file HTML): the server's terms, in its order,
    to the bit for arithmetic alone; the same terms for the example (its numbers within the
    tolerances, compared above)."""
    elements = [["t1", [1, 2]], ["t2", [1]], ["t0", [2, 0]], ["t5", [0, 2]], ["t10", [1, 0]]]
    case = {"source": ARITHMETIC, "values": {"W[1,2]": 3.0, "b[1]": 2.5}, "elements": elements}
    for page_reply, server_reply in json.loads(modules_page.evaluate(FAN_IN_JS, json.dumps(case))):
        assert page_reply == server_reply
        assert server_reply["contributions"]
    case = {"source": MLP, "values": {"W[1,2]": 0.25}, "elements": [["t1", [1, 2]], ["t2", [0]]]}
    for page_reply, server_reply in json.loads(modules_page.evaluate(FAN_IN_JS, json.dumps(case))):
        terms = [(c["tensor"], c["output"], c["node"]) for c in page_reply["contributions"]]
        assert terms == [
            (c["tensor"], c["output"], c["node"]) for c in server_reply["contributions"]
        ]
        assert close(str(page_reply["sum"]), server_reply["sum"])


def open_cell(page, path: str, tensor: str, index: str) -> None:
    """Open the program at `path`, step to the end and open leaf cell `index` of `tensor`; wait
    until the page holds its scalar graph."""
    page.goto(path)
    page.wait_for_selector(TENSORS)
    page.click("#to-end")
    page.locator(cell(tensor, "data", index)).dispatch_event("click")
    page.locator("[data-testid=tensor-cell-editor]").wait_for(state="visible")
    page.wait_for_selector("[data-testid=tensor-graph][data-page-numbers=ready]")


def drag_to(page, value: float) -> None:
    """Move the cell's slider to `value` as a drag does (an `input` event)."""
    page.locator("[data-testid=tensor-cell-range]").evaluate(
        """(range, value) => {
          range.min = String(Math.min(Number(range.min), value));
          range.max = String(Math.max(Number(range.max), value));
          range.value = String(value);
          range.dispatchEvent(new Event('input', { bubbles: true }));
        }""",
        value,
    )


def close(shown: str, expected: float) -> bool:
    """The page's number against the engine's: V8's tanh, exp and log may round the last place
    differently from CPython's (the module tests above bound it exactly)."""
    return abs(float(shown) - expected) <= 1e-12 * max(1.0, abs(expected))


def test_a_drag_on_the_example_recomputes_in_the_page_and_asks_nothing(page, screenshots_dir):
    open_cell(page, "/?preset=tensor-mlp", "t1", "1,2")
    # A gradient's sum open: it follows the drag, from the page's numbers too.
    page.click(cell("t1", "grad", "1,2"))
    fan_in = page.locator("[data-testid=fan-in]")
    fan_in.wait_for(state="visible")
    asked: list[str] = []
    # The server's API, asked nothing (the browser's own fetches, a favicon, are not the page's).
    page.on("request", lambda request: "/api/" in request.url and asked.append(request.url))
    for value in (0.25, -0.75, 1.5):
        drag_to(page, value)
        wait_cell(page, cell("t1", "data", "1,2"), repr(value))
        trace = trace_tensors(MLP, {"W[1,2]": value})
        root = trace.root.elements[0]
        loss = page.get_attribute(cell(f"t{trace.root.id}", "data", ""), "data-value")
        assert close(loss, root.data), (value, loss, root.data)
        w = trace.tensor("W")
        for index, element in [("0,0", w.elements[0]), ("1,2", w.elements[5])]:
            shown = page.get_attribute(cell("t1", "grad", index), "data-value")
            assert close(shown, element.grad), (index, shown, element.grad)
        assert page.get_attribute("[data-testid=tensor-graph]", "data-numbers") == "page"
        expect(fan_in).to_have_attribute("data-grad", repr(float(shown)))
        assert fan_in.get_attribute("data-cell") == "dW[1,2]"
        assert close(fan_in.get_attribute("data-sum"), w.elements[5].grad)
    # The number box too: a typed value.
    page.fill("[data-testid=tensor-cell-value]", "0.125")
    page.press("[data-testid=tensor-cell-value]", "Enter")
    wait_cell(page, cell("t1", "data", "1,2"), "0.125")
    trace = trace_tensors(MLP, {"W[1,2]": 0.125})
    loss = page.get_attribute(cell(f"t{trace.root.id}", "data", ""), "data-value")
    assert close(loss, trace.root.elements[0].data)
    assert asked == []
    page.screenshot(path=str(screenshots_dir / "tensor-drag-page-1280x720.png"))


def wait_cell(page, selector: str, value: str) -> None:
    """Until the cell `selector` (in a player's shadow root too) shows `value`."""
    expect(page.locator(selector)).to_have_attribute("data-value", value)


def test_the_one_file_html_of_a_tensor_program_recomputes_a_drag_offline(
    file_page,
    live_server,
    tmp_path,
    screenshots_dir,
):
    """POST /api/export?format=html of a tensor program: opened from file://, nothing fetched,
    its cards drawn; a cell's drag recomputes every tensor in the file (its scalar graph rides
    with its reply), to the engine's numbers."""
    page = file_page
    response = httpx.post(
        f"{live_server}/api/export",
        params={"format": "html"},
        json={"source": MLP, "values": {"b[2]": 0.5}},
        timeout=60,
    )
    assert response.status_code == 200, response.text[:300]
    path = tmp_path / "tensor-mlp.html"
    path.write_text(response.text, encoding="utf-8")
    page.goto(path.as_uri())
    page.wait_for_selector("[data-testid=player] [data-testid=tensor-graph][data-ready=true]")
    page.wait_for_selector("[data-testid=tensor-graph][data-page-numbers=ready]")
    # The file opens on the values it was exported with, its numbers its own.
    assert page.get_attribute(cell("t2", "data", "2"), "data-value") == "0.5"
    assert page.get_attribute("[data-testid=tensor-graph]", "data-numbers") == "page"
    page.click("#to-end")
    page.locator(cell("t1", "data", "1,2")).click()
    page.locator("[data-testid=tensor-cell-editor]").wait_for(state="visible")
    drag_to(page, -0.75)
    wait_cell(page, cell("t1", "data", "1,2"), "-0.75")
    trace = trace_tensors(MLP, {"b[2]": 0.5, "W[1,2]": -0.75})
    loss = page.get_attribute(cell(f"t{trace.root.id}", "data", ""), "data-value")
    assert close(loss, trace.root.elements[0].data)
    for name, tensor in [("X", "t0"), ("W", "t1"), ("b", "t2")]:
        for k, element in enumerate(trace.tensor(name).elements):
            shape = trace.tensor(name).shape
            index = ",".join(map(str, divmod(k, shape[1]))) if len(shape) == 2 else str(k)
            shown = page.get_attribute(cell(tensor, "grad", index), "data-value")
            assert close(shown, element.grad), (name, index, shown, element.grad)
    assert page.get_attribute("[data-testid=tensor-graph]", "data-numbers") == "page"
    # A gradient's sum, offline: the page's own fan-in.
    page.locator(cell("t1", "grad", "1,2")).click()
    fan_in = page.locator("[data-testid=fan-in]")
    fan_in.wait_for(state="visible")
    assert fan_in.get_attribute("data-cell") == "dW[1,2]"
    assert close(fan_in.get_attribute("data-sum"), trace.tensor("W").elements[5].grad)
    page.screenshot(path=str(screenshots_dir / "tensor-onefile-drag-1280x720.png"))
    assert_clean(page, path)


def test_the_page_exports_a_tensor_program_s_file_that_opens_on_its_values(
    page, tmp_path, file_page
):
    """Export → Interactive HTML on the page, a cell dragged first: the downloaded file opens
    from file:// on the page's values (its scalar graph at them) and its cells drag on."""
    open_cell(page, "/?preset=tensor-mlp", "t1", "1,2")
    drag_to(page, 0.5)
    wait_cell(page, cell("t1", "data", "1,2"), "0.5")
    page.click("#export-button")
    with page.expect_download() as info:
        page.click("[role=menuitem][data-format=html]")
    path = tmp_path / "tensor.html"
    info.value.save_as(path)
    file_page.goto(path.as_uri())
    file_page.wait_for_selector("[data-testid=tensor-graph][data-page-numbers=ready]")
    wait_cell(file_page, cell("t1", "data", "1,2"), "0.5")
    file_page.click("#to-end")
    file_page.locator(cell("t2", "data", "0")).click()  # b[0]
    drag_to(file_page, -1.0)
    wait_cell(file_page, cell("t2", "data", "0"), "-1")
    trace = trace_tensors(MLP, {"W[1,2]": 0.5, "b[0]": -1.0})
    loss = file_page.get_attribute(cell(f"t{trace.root.id}", "data", ""), "data-value")
    assert close(loss, trace.root.elements[0].data)
    assert_clean(file_page, path)
