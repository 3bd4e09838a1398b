"""The page's gradient descent (static/js/train/descend.js, on the page's evaluator) under Node,
against
the engine's (engine/descend.py) on the same bodies (descent_cases.py): the Train lab's batches
give the engine's replies, roots, values, velocity and stop, its sentence in en, ru and et word
for word; one step from each state of the engine's run agrees step for step.

The tolerance: none where the program is IEEE arithmetic alone (+ − × relu: the same operations
on the same numbers in the same order give the same bits, and so the same stops and sentences).
Where V8's Math functions (exp, log, tanh, pow) take part, they and glibc's may differ in the
last place, and descent carries a difference on from step to step (a diverging rate multiplies
it by the rate every step). Step for step it cannot grow: from the engine's state, the page's
step is within the evaluator's tolerance for the gradients at that state (evaluator.js
`tolerances`, tests/engine/test_page_evaluator.py) carried through v ← μ·v + g and p ← p − lr·v
(descent_check.js `stepBounds`), and stops where the engine stops. A whole batch of such a
program is compared for what it is: how many of its steps agree to the bit (printed).
tests/browser/test_descend_in_chromium.py runs the same module in Chromium against the server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import node_driver
import pytest
from descent_cases import case, check, program_cases, random_cases, stop_cases
from hypothesis import Phase, given, settings
from node_driver import NODE

HERE = Path(__file__).resolve().parent
pytestmark = pytest.mark.skipif(NODE is None, reason="Node.js is not installed (make test-deps)")

DRIVER = """
import { checkCases } from "./descent_check.js";
import { readFileSync } from "node:fs";
const cases = JSON.parse(readFileSync(process.argv[2], "utf8"));
// JSON writes -0 as 0: the sign of zero travels as the string "-0" (read back by `negative_zeros`).
const signed = (key, x) => (Object.is(x, -0) ? "-0" : x);
console.log(JSON.stringify(checkCases(cases), signed));
"""


def run_node(tmp_path: Path, cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """descent_check.js's results on `cases`, beside a copy of the page's modules, under Node."""
    modules = [HERE / "descent_check.js"]
    return node_driver.run_node(tmp_path, cases, DRIVER, modules)


def test_every_preset_and_lesson_trains_as_the_engine_does(tmp_path):
    """Plain and momentum descent at a calm rate, and rates that diverge, in the lab's batches."""
    cases = program_cases()
    tally = check(cases, run_node(tmp_path, cases))
    print("programs with V8 Math functions:", tally)


def test_every_stop_rule_stops_and_says_so_as_the_engine_does(tmp_path):
    cases = stop_cases()
    results = run_node(tmp_path, cases)
    check(cases, results)
    # The table reaches every rule and sentence, in every language.
    said = {
        (case["ui"]["lang"], reply["stopped"]["reason"], reply["stopped"]["message"].split(":")[0])
        for case in cases
        for batch in case["batches"]
        if (reply := batch["expected"])["stopped"]
    }
    reasons = {(lang, reason) for lang, reason, _ in said}
    assert {(lang, r) for lang in ("en", "ru", "et") for r in ("nonfinite", "diverged")} <= reasons
    english = {reply for lang, _, reply in said if lang == "en"}
    assert any(text.startswith("Cannot start") for text in english), english
    messages = [
        batch["expected"]["stopped"]["message"]
        for case in cases
        if case["ui"]["lang"] == "en"
        for batch in case["batches"]
        if batch["expected"]["stopped"]
    ]
    for phrase in (
        "the root became",
        "the root rose from",
        "above its start",
        "no longer a finite",
    ):
        assert any(phrase in message for message in messages), phrase


# A batch of random runs per Node run; no shrinking (a batch is slow to shrink: the failing
# program is named in the assertion).
@settings(max_examples=6, deadline=None, phases=(Phase.explicit, Phase.reuse, Phase.generate))
@given(random_cases(40))
def test_random_programs_train_as_the_engine_does(tmp_path_factory, cases):
    tally = check(cases, run_node(tmp_path_factory.mktemp("node"), cases))
    print("random programs with V8 Math functions:", tally)


def test_a_step_to_a_rounding_from_a_domain_edge_is_judged_on_the_engine_s_values(tmp_path):
    # Found by the random programs below: from q = 0.5 at rate 0.5, q steps by 0.5·∂L/∂q = 0.5·1
    # to the edge of `q ** .5`. V8's pow(0.5, −0.5) is an ulp under glibc's: the page's gradient
    # is 1 and q becomes 0 (the root −4.127), the engine's 1.0000000000000002 and q −1.1e−16 (the
    # root nan: stopped). The page's evaluator at the engine's q finds nan, as the engine did.
    cases = [case("L = ((q ** .5) ** 2) + -(4.127)", {"q": 0.5}, ["q"], 0.5, 0.0, steps=2, batch=1)]
    results = run_node(tmp_path, cases)
    engine = cases[0]["batches"][0]["expected"]
    page = results[0]["batches"][0]["page"]
    assert engine["stopped"]["reason"] == "nonfinite" and page["stopped"] is None
    check(cases, results)
