"""The table's formulas read by other executions: the micrograd script's helpers (Python the page
pastes into a script, run here under CPython with PyPI micrograd 0.1.0) and the JavaScript module
(run under Node), against the engine on edge values: a = 0 for ∂(a**b)/∂b, a = b = 0, a negative
base (nan, never a complex number), log(0), overflow."""

from __future__ import annotations

import itertools
import json
import math
import shutil
import subprocess

import pytest
from micrograd.engine import Value as MicroValue

from chainrule.engine.ops import OPS, apply, javascript_module, page_table

FIRST = [0.0, -0.0, 1.0, -1.0, 0.5, 2.5, -8.0, 1000.0, -1000.0, 1e-300, math.pi]
SECOND = [0.0, 1 / 3, -1.0, 2.0, 0.5, -0.5, 3.0, 400.0]
HELPED = [name for name, row in page_table().items() if row["script"]]


def same(x: float, y: float) -> bool:
    """Equal as IEEE numbers (nan equals nan; 0.0 and -0.0 differ)."""
    if math.isnan(x) or math.isnan(y):
        return math.isnan(x) and math.isnan(y)
    return x == y and math.copysign(1.0, x) == math.copysign(1.0, y)


def inputs_of(name: str) -> list[tuple[float, ...]]:
    if OPS[name].arity == 1:
        return [(x,) for x in FIRST]
    return list(itertools.product(FIRST, SECOND))


def script_namespace(name: str) -> dict:
    """The helper of op `name` as a micrograd script defines it (page_table's `prelude` and
    `script` lines, as static/js/io/micrograd.js assembles them), executed with micrograd's
    Value."""
    row = page_table()[name]
    lines = ["import math", *(line for lines in row["prelude"].values() for line in lines)]
    namespace = {"Value": MicroValue}
    exec("\n".join([*lines, *row["script"]]), namespace)  # the test's oracle runs the script
    return namespace


@pytest.mark.parametrize("name", HELPED)
def test_the_micrograd_script_helpers_compute_what_the_engine_computes(name: str) -> None:
    helper = script_namespace(name)[OPS[name].helper]
    for inputs in inputs_of(name):
        values = [MicroValue(x) for x in inputs]
        out = helper(*values)
        out.backward()
        data, local_grads, _ = apply(name, inputs)
        assert same(out.data, data), (name, inputs, out.data, data)
        for value, local in zip(values, local_grads, strict=True):
            # grad starts at 0 and receives local × 1 (+= loses a −0.0, in both)
            assert same(value.grad, 0.0 + local * 1.0), (name, inputs, value.grad, local)
        assert isinstance(out.data, float)  # never complex, never an int


def test_every_helper_a_script_calls_is_one_it_defines() -> None:
    for name in HELPED:
        namespace = script_namespace(name)
        assert callable(namespace[OPS[name].helper])


NODE = shutil.which("node")
DRIVER = """
import { OPS, forwardInto } from "./ops.mjs";
import { readFileSync } from "node:fs";
const number = (x) => (Number.isFinite(x) ? x : String(x));
const cases = JSON.parse(readFileSync(process.argv[2], "utf8"));
console.log(JSON.stringify(cases.map(([key, a, b, k]) => {
  const out = OPS[key].forward(a, b, k);
  const locals = OPS[key].locals(a, b, k, out);
  // forwardInto, as the evaluator's pass calls it (node 2 of a, b, with the exponent k): its
  // locals written after a guard, never past its inputs
  const data = Float64Array.of(a, b, 7);
  const written = new Float64Array(locals.length + 2).fill(7);
  const [code, right] = [Object.keys(OPS).indexOf(key), OPS[key].arity > 1 ? 1 : -1];
  forwardInto(code, data, 2, 0, right, Float64Array.of(0, 0, k), written, 1);
  return [number(out), locals.map(number), number(data[2]), Array.from(written, number)];
})));
"""


def ulps_apart(x: float, y: float) -> float:
    if math.isnan(x) or math.isnan(y) or math.isinf(x) or math.isinf(y):
        return 0.0 if same(x, y) else math.inf
    return abs(x - y) / math.ulp(max(abs(x), abs(y), 5e-324))


@pytest.mark.skipif(NODE is None, reason="Node.js is not installed")
def test_the_javascript_module_computes_what_the_engine_computes(tmp_path) -> None:
    """The JavaScript a page-side evaluator is to use, from the same formulas: arithmetic
    agrees to the bit, Math's transcendental functions (V8's own) within two units in the last
    place; `forwardInto` (the evaluator's pass) is each row's `forward` and `locals`."""
    (tmp_path / "ops.mjs").write_text(javascript_module())
    (tmp_path / "driver.mjs").write_text(DRIVER)
    cases = [
        (name, *(inputs + (0.0,))[:2], 2.5 if name == "**k" else 0.0)
        for name in OPS
        for inputs in inputs_of(name)
    ]
    (tmp_path / "cases.json").write_text(json.dumps(cases))
    run = subprocess.run(
        [NODE, "driver.mjs", "cases.json"], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0, run.stderr
    exact = {"+", "*", "-", "neg", "relu"}  # Math.pow is not correctly rounded either
    for (name, a, b, k), (data, local_grads, into, written) in zip(
        cases, json.loads(run.stdout), strict=True
    ):
        # the evaluator's one function is the table's rows, to the bit, and writes only its edges
        assert [into, *written] == [data, 7, *local_grads, 7], (name, a, b)
        expected, expected_locals, _ = apply(name, (a, b)[: OPS[name].arity], k)
        tolerance = 0 if name in exact else 2
        got = [float(x) for x in (data, *local_grads)]
        for x, y in zip(got, (expected, *expected_locals), strict=True):
            assert ulps_apart(x, y) <= tolerance, (name, a, b, x, y)
