"""Copy as micrograd, paste back (issue 12): the page's micrograd script of every preset, traced
again by the server, is the same graph with the same numbers; and micrograd itself runs it."""

from __future__ import annotations

import math
import subprocess
import sys

import httpx
import pytest
from lecture_cells import CELLS

from chainrule import engine

pytestmark = pytest.mark.browser


def script_js(module: str, writer: str) -> str:
    """A page function: the script `writer` of the page's `module` writes for a /api/graph body."""
    return f"""async (body) => {{
  const reply = await fetch('/api/graph', {{method: 'POST',
    headers: {{'content-type': 'application/json'}}, body: JSON.stringify(body)}});
  const src = document.querySelector('script[type=module]').src;
  const {{ {writer} }} = await import(new URL('./{module}', src).href);
  const {{ withStepObjects }} = await import(new URL('./core/step-columns.js', src).href);
  return {writer}(withStepObjects(await reply.json()));  // as api.js reads every reply
}}"""


SCRIPT_JS = script_js("io/micrograd.js", "microgradScript")


def shape(trace: dict) -> str:
    """The graph as one canonical text, whatever its node numbering: every node by what it is
    and what feeds it (named nodes by name, so shared inputs stay shared); numbers rounded to
    12 significant digits."""
    nodes = {node["id"]: node for node in trace["nodes"]}
    text: dict[str, str] = {}
    for node in trace["nodes"]:  # inputs come before their consumers
        if node["kind"] == "leaf":
            text[node["id"]] = f"leaf {node['label']}={node['data']:.12g} grad {node['grad']:.12g}"
            continue
        if node["kind"] == "const":
            text[node["id"]] = f"const {node['label']}"
            continue
        inputs = [
            nodes[i]["label"] if nodes[i]["kind"] == "op" and nodes[i]["label"] else text[i]
            for i in node["inputs"]
        ]
        name = node["label"] if node["id"] != trace["root"] else "(result)"
        text[node["id"]] = (
            f"{name}:{node['op']}{node['exponent'] or ''}({', '.join(inputs)})"
            f"={node['data']:.12g} grad {node['grad']:.12g}"
        )
    named = [
        text[n["id"]]
        for n in trace["nodes"]
        if n["label"] and n["kind"] != "const" and n["id"] != trace["root"]
    ]
    return "\n".join(sorted(named) + [text[trace["root"]]])


# Programs whose spelling in Python needs care: grouping, powers, signs, versions, unnamed results.
EDGES = [
    {"source": "a - (b - c)", "values": {"a": 1.5, "b": 2.0, "c": -0.5}},
    {"source": "a = 1.5\n(a ** 2) ** 3 + (-a) ** 2 + -(-a) + 2 ** a + a ** -0.5"},
    {"source": "a = 2\nb = -3\nd = 10\nrelu(a * b + d) / (a - b) - exp(-a) * log(d)"},
    {"source": "c = 2\nc += c + 1\nc *= c - 1\nx = 0.5\nx = x * c + 1\ntanh(x) + sigmoid(x)"},
    {"source": "a = 3\nb = 0.5\na ** b - b ** a + 1e-3 * a"},
    # The helpers generated from the table: sin, and a ** b at a = 0 (where ∂/∂b is 0, not
    # 0 * log 0 = nan as a hand-written helper had it).
    {"source": "a = 0\nb = 2\nc = 0.5\na ** b + sin(c) * c ** b - log(c) / b"},
    # The program's own functions (issue 27), written as Python `def`s: several parameters, a
    # call inside a call, a body calling an earlier function, helpers only a body needs (sigmoid,
    # a ** b), a method (relu) and constants inside a body.
    {"source": "softplus(x) = log(1 + exp(x))\na = 2\nb = -0.5\ny = softplus(a*b)\ny * a"},
    {
        "source": "f(x, y) = x*y + sin(x) - y/x\ng(u) = f(u, u**2) * 2 + relu(u) - sigmoid(u)\n"
        "a = 1.5\nb = 0.5\nL = g(f(a, b)) + f(a, b) ** b"
    },
    {"source": "sq(t) = t ** t - 3 * -t\nresult = 2\nsq(result) / sq(result + 1)"},
]


@pytest.mark.parametrize(
    "body",
    [{"source": p["source"], "values": p["values"]} for p in engine.PRESETS]
    + EDGES
    + [{"source": cell.source} for cell in CELLS],  # the lecture's cells, with their labels
    ids=[p["id"] for p in engine.PRESETS]
    + [f"edge {i}" for i in range(len(EDGES))]
    + [cell.id for cell in CELLS],
)
def test_the_micrograd_script_pasted_back_is_the_same_graph(app_page, live_server, body, tmp_path):
    script, original, pasted = paste_back(app_page, live_server, body, SCRIPT_JS)
    assert shape(pasted) == shape(original)
    # And micrograd runs it: the root and every leaf's gradient, to the printed digits.
    path = tmp_path / "script.py"
    path.write_text(script)
    run = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert_printed_grads(original, run.stdout)


def paste_back(app_page, live_server: str, body: dict, writer_js: str) -> tuple[str, dict, dict]:
    """The script the page writes for `body` (`writer_js`: a `script_js`, run in the loaded
    `app_page`), the server's reply for `body`, and its reply for the script pasted back, which
    reads with notes of skipped statements at most."""
    script = app_page.evaluate(writer_js, body)
    assert app_page.errors == []
    original = httpx.post(f"{live_server}/api/graph", json=body).json()
    again = httpx.post(f"{live_server}/api/graph", json={"source": script})
    assert again.status_code == 200, again.text
    pasted = again.json()
    assert {w["type"] for w in pasted["warnings"]} <= {"skipped"}
    return script, original, pasted


def assert_printed_grads(original: dict, printed: str, every_leaf: bool = True) -> None:
    """The `grad[a] = …` lines a script printed give each leaf's gradient in `original` (every
    leaf's, or those printed)."""
    said = dict(line.rsplit(" ", 1) for line in printed.splitlines() if line.startswith("grad["))
    for leaf in original["leaves"]:
        node = next(n for n in original["nodes"] if n["id"] == leaf["id"])
        key = f"grad[{leaf['name']}] ="
        if every_leaf or key in said:
            assert math.isclose(float(said[key]), node["grad"], rel_tol=1e-9, abs_tol=1e-12)


PASTED = """from micrograd.engine import Value
a = Value(2.0, label='a')
b = Value(-3.0, label='b')
unused = Value(5.0, label='u')
c = a * b + a
L = c.relu()
L.backward()
print(a.grad)
"""


def test_the_notes_of_pasted_micrograd_say_which_lines_were_skipped(page, live_server):
    page.goto(live_server)
    page.wait_for_selector("[data-testid=node]")
    notes = page.locator("[data-testid=program-notes]")
    assert notes.is_hidden()  # the first preset has nothing to note
    page.fill("[data-testid=source]", PASTED)
    page.press("[data-testid=source]", "Control+Enter")
    page.wait_for_selector("[data-testid=program-notes] li")
    shown = page.eval_on_selector_all(
        "[data-testid=program-notes] li",
        "items => items.map((li) => [li.dataset.type, li.dataset.line, li.textContent])",
    )
    expected = engine.trace(PASTED).to_dict()["warnings"]
    assert [(t, int(line)) for t, line, _ in shown] == [(w["type"], w["line"]) for w in expected]
    assert {t for t, _, _ in shown} == {"skipped", "unused"}
    assert shown[0][2].endswith(expected[0]["message"])
    # A program with an error shows the error, not the last trace's notes.
    page.fill("[data-testid=source]", "d = (\n" + PASTED)
    page.press("[data-testid=source]", "Control+Enter")
    page.wait_for_function("() => document.querySelector('[data-testid=error]').textContent")
    assert notes.is_hidden()
