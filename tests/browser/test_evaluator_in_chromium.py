"""The page's evaluator (static/js/compute/evaluator.js) in Chromium, against the server: for a trace of
POST /api/graph and new leaf values, its numbers reply agrees with POST /api/values' for those
values (`differences` finds nothing within its tolerances) on every preset and edge program in
every variant, every lesson, and random programs. tests/engine/test_page_evaluator.py runs the
same module under Node against the engine and says how the tolerance is chosen."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "engine"))
from engine_cases import CASES  # noqa: E402
from test_numbers_page import IMPORT_JS, POST_JS, RANDOM_RUNS  # noqa: E402

from chainrule import engine  # noqa: E402
from chainrule.app.api.lesson_files import load_lessons  # noqa: E402

pytestmark = pytest.mark.browser

# For each run: /api/graph at the run's start values, the page's numbers for the moved values,
# /api/values for them, and what `differences` reports (and how many numbers were compared).
COMPARE_JS = """async (runs) => {
  const { compileStructure, evaluate, differences, tolerances } = await (IMPORT)('compute/evaluator.js');
  const { apiUrl } = await (IMPORT)('core/api.js');
  const { withStepObjects } = await (IMPORT)('core/step-columns.js');
  DEFINE_POST
  const out = [];
  for (const { body, start, moved } of runs) {
    const trace = withStepObjects(await post('api/graph', { ...body, values: start }));
    const structure = compileStructure(trace);
    const server = await post('api/values', { ...body, values: moved, structure: trace.structure });
    const page = evaluate(structure, moved);
    out.push({ found: differences(page, server, tolerances(structure, moved), structure), numbers: page.data.length + page.grad.length + page.contribution.length });
  }
  return JSON.stringify(out);  // one text: Playwright's serialisation of big objects is slow
}""".replace("IMPORT", IMPORT_JS).replace("DEFINE_POST", POST_JS)


def leaf_values(source: str, values: dict | None, kwargs: dict) -> dict[str, float]:
    graph = engine.build_graph(source, values, expand_derived=kwargs.get("expand_derived", False))
    return {name: node.data for name, node in graph.leaves}


def moved(values: dict[str, float]) -> dict[str, float]:
    out = {name: x * 1.5 + 0.25 for name, x in values.items()}
    if out:
        out[next(iter(out))] = 0.0  # a relu's corner, log(0), 0 ** -1
    return out


def run_of(source: str, values: dict | None, kwargs: dict) -> dict[str, Any]:
    start = leaf_values(source, values, kwargs)
    return {"body": {"source": source, **kwargs}, "start": start, "moved": moved(start)}


def compare(page, runs: list[dict[str, Any]]) -> None:
    """`page`: the app's page loaded once (conftest modules_page); the runs call its modules."""
    results = json.loads(page.evaluate(COMPARE_JS, runs))
    for run, result in zip(runs, results, strict=True):
        assert result["found"] == [], (run, result["found"])
    assert sum(result["numbers"] for result in results) > 0


def test_every_preset_and_edge_program_in_every_variant_agrees_with_the_server(modules_page):
    compare(modules_page, [run_of(source, values, kwargs) for source, values, kwargs in CASES])


def test_every_lesson_agrees_with_the_server(modules_page):
    runs = [
        run_of(lesson["source"], lesson["values"] or None, kwargs)
        for lesson in load_lessons()
        if lesson["kind"] == "scalar"  # a tensor lesson's program is the server's alone
        for kwargs in ({}, {"mode": "overwrite"}, {"expand_derived": True})
    ]
    compare(modules_page, runs)


def test_random_programs_agree_with_the_server(modules_page):
    """Seeded random programs of test_numbers_page (every op, nan, inf, tiny and huge values) in
    random variants, moved to other values."""
    compare(
        modules_page, [run_of(source, values, kwargs) for source, values, kwargs in RANDOM_RUNS]
    )
