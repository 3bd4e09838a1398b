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
from chainrule.engine.ops import FUNCTIONS, page_table

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
