"""The page's rule for code that must run (static/js/sandbox/sandbox.js `needsRunning`) under
Node, against the engine: chainrule's own micrograd script of a program (static/js/io/micrograd.js,
its helpers named by the op table) is data the server reads, never code sent to Pyodide, for every
preset and for a program of every function of the table; the same script with a class of the
learner's in it must run."""

from __future__ import annotations

import json

import node_driver
import pytest
from node_driver import NODE

from chainrule import engine
from chainrule.bench.tensors import makemore
from chainrule.engine.errors import NeedsRunning
from chainrule.engine.ops import FUNCTIONS, page_table
from chainrule.engine.tensor_program import trace_tensors

pytestmark = pytest.mark.skipif(NODE is None, reason="Node.js is not installed")

DRIVER = """
import { readFileSync } from "node:fs";
globalThis.window = { location: { search: "" } };  // sandbox.js reads its time limit from the URL
const { needsRunning } = await import("./sandbox/sandbox.js");
const { microgradScript } = await import("./io/micrograd.js");
const { useOpTable } = await import("./compute/ops.js");
const { withStepObjects } = await import("./core/step-columns.js");
const { table, replies } = JSON.parse(readFileSync(process.argv[2], "utf8"));
useOpTable(table);
const scripts = replies.map((reply) => microgradScript(withStepObjects(reply)));
const learner = "class Neuron:\\n    pass\\n";
const judged = scripts.map((script) => [needsRunning(script), needsRunning(learner + script)]);
console.log(JSON.stringify(judged));
"""

EVERY_FUNCTION = "\n".join(
    ["x = 0.5", "y = 1.5", *(f"u{i} = {f}(x) * y" for i, f in enumerate(FUNCTIONS))]
    + ["L = " + " + ".join(f"u{i}" for i in range(len(FUNCTIONS))) + " + x ** y + y ** 2 / x"]
)


def test_our_micrograd_scripts_are_read_not_run(tmp_path):
    sources = [preset["source"] for preset in engine.PRESETS] + [EVERY_FUNCTION]
    replies = [json.loads(json.dumps(engine.trace(source).to_dict())) for source in sources]
    judged = node_driver.run_node(tmp_path, {"table": page_table(), "replies": replies}, DRIVER)
    assert [must_run for must_run, _ in judged] == [False] * len(sources)
    assert [with_class for _, with_class in judged] == [True] * len(sources)


TENSOR_DRIVER = """
import { readFileSync } from "node:fs";
globalThis.window = { location: { search: "" } };
const { needsRunning } = await import("./sandbox/sandbox.js");
const sources = JSON.parse(readFileSync(process.argv[2], "utf8"));
console.log(JSON.stringify(sources.map((source) => needsRunning(source))));
"""


def test_tensor_programs_are_read_unless_the_server_says_they_must_run(tmp_path):
    """A tensor program's lists, indexing and `range(n)` are data (docs/tensors.md): the page
    leaves it to the server, as the engine reads it; a loop in it must run, there as here."""
    sources = [preset["source"] for preset in engine.TENSOR_PRESETS] + [
        makemore(1),
        "X = randn(4, 3, seed=1)\nY = tensor([0, 2, 1, 2])\nL = X[range(4), Y].sum()",
        "W = randn(3, 3, seed=1)\nfor i in range(3):\n    W = W @ W\nL = W.sum()",
    ]

    def server_must_run(source: str) -> bool:
        try:
            trace_tensors(source)
        except NeedsRunning:
            return True
        return False

    judged = node_driver.run_node(tmp_path, sources, TENSOR_DRIVER)
    expected = [False] * (len(sources) - 1) + [True]
    assert judged == [server_must_run(source) for source in sources] == expected
