"""The page's gradient descent (static/js/train/descend.js) in Chromium, against the server: on a trace
of POST /api/graph, each body of the Train lab's run gives POST /api/descend's reply (bit for bit
where the program is IEEE arithmetic alone, step for step within the evaluator's tolerances where
V8's Math functions take part), on every preset and lesson (each with one of plain and momentum
descent and diverging rates, in turn), every stop rule in every language, and random programs. The comparison is
tests/engine/descent_check.js, as under Node (tests/engine/test_page_descend.py says why)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

ENGINE_TESTS = Path(__file__).resolve().parent.parent / "engine"
sys.path.insert(0, str(ENGINE_TESTS))
from descent_cases import (  # noqa: E402
    check,
    program_cases,
    random_cases,
    stop_cases,
)
from node_driver import negative_zeros  # noqa: E402
from test_numbers_page import IMPORT_JS, POST_JS  # noqa: E402

pytestmark = pytest.mark.browser

# Per case: the server's trace at the run's start, the server's reply to every body (the lab's
# batches, the single steps), then descent_check.js on them, and the server's replies.
COMPARE_JS = """async (cases) => {
  const { checkCases } = await (IMPORT)('descent_check.js');
  const { apiUrl } = await (IMPORT)('core/api.js');
  DEFINE_POST
  const served = [];
  for (const { source, start, ui, batches, singles } of cases) {
    const trace = await post('api/graph', { source, values: start, lang: ui.lang });
    const asked = async (runs) => {
      const out = [];
      for (const { body } of runs) out.push({ body, expected: await post('api/descend', { source, ...body, lang: ui.lang }) });
      return out;
    };
    served.push({ trace, ui, batches: await asked(batches), singles: await asked(singles) });
  }
  // One JSON text (Playwright's serialisation of megabytes of objects costs minutes); JSON
  // writes -0 as 0, so the sign of zero travels as the string "-0".
  const signed = (x) => JSON.stringify(x, (key, v) => (Object.is(v, -0) ? '-0' : v));
  return signed({ results: checkCases(served), replies: served.map(({ batches, singles }) => ({ batches, singles })) });
}""".replace("IMPORT", IMPORT_JS).replace("DEFINE_POST", POST_JS)

CHECK_MODULE = ENGINE_TESTS / "descent_check.js"


def served_check(page) -> None:
    """descent_check.js served beside the page's modules (it imports them by relative URL), once
    a page."""
    if getattr(page, "serves_descent_check", False):
        return
    page.route(
        "**/static/*/js/descent_check.js",
        lambda route: route.fulfill(path=str(CHECK_MODULE), content_type="text/javascript"),
    )
    page.serves_descent_check = True


def compare(page, cases: list[dict[str, Any]]) -> dict[str, int]:
    """`page`: the app's page loaded once (conftest modules_page); the cases call its modules."""
    served_check(page)
    # A program of IEEE arithmetic alone must give the server's batches to the bit, which says
    # every step: its single steps would ask the server again for nothing.
    cases = [{**case, "singles": []} if case["exact"] else case for case in cases]
    sent = [{**case, "start": case["batches"][0]["body"]["values"]} for case in cases]
    out = negative_zeros(
        json.loads(page.evaluate(COMPARE_JS, [without_trace(case) for case in sent]))
    )
    # The server answers each body as the engine does (the cases' replies are the engine's).
    for case, replies in zip(cases, out["replies"], strict=True):
        for kind in ("batches", "singles"):
            assert [r["expected"] for r in replies[kind]] == [r["expected"] for r in case[kind]]
    return check(cases, out["results"])


def without_trace(case: dict[str, Any]) -> dict[str, Any]:
    """The case as the page needs it: the server makes the trace."""
    return {key: value for key, value in case.items() if key not in ("trace", "exact")}


def test_every_preset_and_lesson_trains_in_the_page_as_the_server_does(modules_page):
    # Each program with one of the settings, in turn (every setting is met): under Node,
    # tests/engine/test_page_descend.py runs every program with every setting against the engine.
    print("programs with V8 Math functions:", compare(modules_page, program_cases(1)))


def test_every_stop_rule_in_every_language_as_the_server_says_it(modules_page):
    compare(modules_page, stop_cases())


@settings(
    max_examples=3,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(random_cases(20))
def test_random_programs_train_in_the_page_as_the_server_does(modules_page, cases):
    print("random programs with V8 Math functions:", compare(modules_page, cases))
