"""Narration filled in the page reads exactly as the server's
(static/js/core/narration.js), a numbers reply merged into a trace equals /api/graph's trace for the
new values (static/js/compute/merge-numbers.js), and a slider drag fetches only numbers and repaints only what
changed."""

from __future__ import annotations

import json
import math
import random
import struct
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest

from chainrule import engine
from chainrule.engine.narration import factor, fmt, narrations

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "engine"))
from engine_cases import CASES, case_id  # noqa: E402

from chainrule.engine.step_reader import step_objects

pytestmark = pytest.mark.browser


READY = "svg[data-testid=graph][data-ready=true]"

# A module of the page, resolved against the page's own module URL (the static path is versioned).
IMPORT_JS = (
    "(name) => import(new URL(`./${name}`, document.querySelector('script[type=module]').src).href)"
)

# `post(path, body)` in a page function: the server's JSON reply to a POST, or an error naming
# the path, the status and the reply (needs `apiUrl` from core/api.js in scope).
POST_JS = """const post = async (path, body) => {
    const response = await fetch(apiUrl(path), {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
    return response.json();
  };"""

# Both take their cases as one JSON text and answer one: Playwright's own serialisation of
# megabytes of nested objects costs minutes where JSON.parse costs milliseconds.
FILL_ALL_JS = """async (text) => {
  const { fill } = await (IMPORT)('core/narration.js');
  const cases = JSON.parse(text);
  return JSON.stringify(cases.map(({ templates, numbers }) => templates.map((t) => fill(t, numbers))));
}""".replace("IMPORT", IMPORT_JS)

# The narration the page shows: each step of a trace filled from the trace's own arrays.
NARRATE_ALL_JS = """async (text) => {
  const { narrationOf } = await (IMPORT)('core/narration.js');
  const { withStepObjects } = await (IMPORT)('core/step-columns.js');
  const traces = JSON.parse(text).map(withStepObjects); // the page reads every reply so (api.js)
  return JSON.stringify(traces.map((trace) => trace.steps.map((_, index) => narrationOf(trace, index))));
}""".replace("IMPORT", IMPORT_JS)

# ---------------------------------------------------------------------------- random programs

FUNCTIONS = ("relu", "tanh", "exp", "log", "sigmoid")
# Leaf values: ordinary, negative, zero and -0, tiny, huge, subnormal, and %.6g's ties (round
# half to even: 123456.5 → 123456).
VALUES = (
    2.0, -3.0, 0.5, 0.0, -0.0, 1e-300, -2.5e-7, 1e300, -1.7e308, 5e-324, 123456.5, 12345.25,
    1234567.5, 0.1, 1e15, 99999999999999.5, 7.0, -1.0,
)  # fmt: skip


def random_program(rng: random.Random) -> tuple[str, dict[str, float]]:
    """A program of 2-4 leaves and 2-7 statements mixing every operator and function, with leaf
    values drawn from VALUES or at random: exp of a huge number overflows, log of a negative is
    nan, division by zero is infinite."""
    leaves = [f"x{i}" for i in range(rng.randint(2, 4))]
    names = list(leaves)
    lines = [f"{name} = 1" for name in leaves]
    for i in range(rng.randint(2, 7)):
        a, b = rng.choice(names), rng.choice(names)
        constant = rng.choice(["2", "0.5", "3", "1e-3", "0"])
        shape = rng.choice(
            [f"{a} + {b}", f"{a} - {b}", f"{a} * {b}", f"{a} / {b}", f"{a} ** 2",
             f"{a} ** {b}", f"-{a} * {constant}", f"{rng.choice(FUNCTIONS)}({a})",
             f"{a} * {b} + {constant}", f"{a} / {constant}"]
        )  # fmt: skip
        lines.append(f"v{i} = {shape}")
        names.append(f"v{i}")
    values = {
        name: rng.choice(VALUES)
        if rng.random() < 0.7
        else rng.uniform(-1, 1) * 10 ** rng.randint(-8, 8)
        for name in leaves
    }
    return "\n".join(lines), values


def random_runs(count: int, seed: int) -> list[tuple[str, dict[str, float], dict[str, Any]]]:
    rng = random.Random(seed)
    runs = []
    for _ in range(count):
        source, values = random_program(rng)
        kwargs: dict[str, Any] = {
            "expand_derived": rng.random() < 0.3,
            "mode": "overwrite" if rng.random() < 0.3 else "correct",
        }
        if rng.random() < 0.3:
            ids = [f"n{node.id}" for node in engine.build_graph(source, values).nodes]
            kwargs["order"] = rng.sample(ids, rng.randint(0, len(ids)))
            kwargs["expand_derived"] = False  # the ids are the plain graph's
        runs.append((source, values, kwargs))
    return runs


RANDOM_RUNS = random_runs(30, seed=10)

# What main added since the templates: the program's own functions (their backward steps say
# where the local derivative comes from), any node as the target (its seed step), and forward
# mode (tangent steps whose templates read the nodes' `tangent`).
FUNCTION_PROGRAM = "softplus(x) = log(1 + exp(x))\na = 0.5\nb = -2\ny = softplus(a*b)\nz = y*a"
DIAMOND = "a = 2\nb = -3\nc = a*b\nd = c + a\nf = d*c"
NEWER_RUNS = [
    (FUNCTION_PROGRAM, None, {}),
    (FUNCTION_PROGRAM, {"a": -1.5}, {"pass_": "forward", "wrt": "a"}),
    (DIAMOND, None, {"target": "c"}),
    (DIAMOND, {"b": 0.0}, {"target": "d"}),
    *[
        (p["source"], p["values"] or None, {"pass_": "forward", "wrt": leaf})
        for p in engine.PRESETS[:4]
        for leaf in [name for name, _ in engine.build_graph(p["source"], p["values"]).leaves][:2]
    ],
]


def json_ready(value: Any) -> Any:
    """As the server sends it: the JSON text read back (non-finite numbers are strings)."""
    return json.loads(json.dumps(value))


def open_page(page, preset: str = "add-mul") -> None:
    page.goto(f"/?preset={preset}")
    page.wait_for_selector(READY)


# ---------------------------------------------------------------------------- (a) narration


def test_random_programs_cover_non_finite_tiny_and_huge_numbers():
    """The random programs reach what the fill must write: nan, inf, exponents both ways, ties."""
    written = set()
    for source, values, kwargs in RANDOM_RUNS:
        numbers = engine.numbers(source, values, **kwargs)
        for x in numbers["data"]:
            written.add(
                x
                if isinstance(x, str)
                else "tiny"
                if 0 < abs(x) < 1e-4
                else "huge"
                if abs(x) >= 1e6 and not float(x).is_integer()
                else ""
            )
    assert {"NaN", "Infinity", "tiny", "huge"} <= written


def fill_cases(runs) -> list[dict[str, Any]]:
    cases = []
    for source, values, kwargs in runs:
        reply = engine.trace(source, values, **kwargs).to_dict()
        numbers = engine.numbers(source, values, **kwargs)
        cases.append(
            {
                "templates": [step["template"] for step in step_objects(reply)],
                "narrations": narrations(reply),
                "numbers": json_ready({**numbers, "text": [n["text"] for n in reply["nodes"]]}),
                "trace": json_ready(reply),
            }
        )
    return cases


def check_fill(page, runs, ids) -> None:
    cases = fill_cases(runs)
    filled = json.loads(
        page.evaluate(
            FILL_ALL_JS,
            json.dumps([{"templates": c["templates"], "numbers": c["numbers"]} for c in cases]),
        )
    )
    for case, got, name in zip(cases, filled, ids, strict=True):
        assert got == case["narrations"], name
    assert sum(len(c["templates"]) for c in cases) > 0
    # What the page shows: a trace's own arrays fill its templates (core/narration.js narrationOf).
    narrated = json.loads(page.evaluate(NARRATE_ALL_JS, json.dumps([c["trace"] for c in cases])))
    for case, got, name in zip(cases, narrated, ids, strict=True):
        assert got == case["narrations"], name


def test_the_page_fills_every_template_as_the_server_narrates_presets_and_variants(modules_page):
    """Every preset and edge program (non-finite, -0.0, tiny, huge, ties) in every variant:
    overwrite, custom visit orders, expand_derived."""
    page = modules_page
    check_fill(page, [case for case in CASES], [case_id(case) for case in CASES])


def test_the_page_fills_every_template_as_the_server_narrates_random_programs(modules_page):
    page = modules_page
    check_fill(page, RANDOM_RUNS, [repr(run) for run in RANDOM_RUNS])


def test_the_page_fills_function_target_and_forward_mode_templates_as_the_server(modules_page):
    page = modules_page
    check_fill(page, NEWER_RUNS, [repr(run) for run in NEWER_RUNS])


FMT_JS = """async (xs) => {
  const { fill } = await (IMPORT)('core/narration.js');
  return xs.map((x) => fill('{n:data:0} {f:data:0} {{x}}', { data: [x] }));
}""".replace("IMPORT", IMPORT_JS)


def some_floats(count: int, seed: int) -> list[float]:
    """Any finite double (random bits), random magnitudes, and exact ties of %.6g (7 digits
    ending in 5, scaled by powers of two or ten)."""
    rng = random.Random(seed)
    out: list[float] = []
    while len(out) < count:
        kind = rng.random()
        if kind < 0.3:
            x = struct.unpack("d", struct.pack("Q", rng.getrandbits(64)))[0]
            if not math.isfinite(x):
                continue
        elif kind < 0.6:
            x = rng.uniform(-1, 1) * 10 ** rng.randint(-12, 18)
        else:
            tie = rng.randint(100_000, 999_999) * 10 + 5
            x = tie * 2.0 ** rng.randint(-30, 10) if kind < 0.8 else tie / 10 ** rng.randint(0, 3)
        out.append(x)
    return out


def test_numbers_are_written_as_the_server_writes_them(modules_page):
    """fmt's rules: integers plainly below 1e15, else %.6g (exponent below 1e-4 and from 1e6,
    two-digit exponents, trailing zeros removed, ties to even); nan, inf, −inf; -0 is 0; the
    page's minus sign U+2212 (in the exponent too); a negative operand in parentheses;
    `{{`/`}}` are braces."""
    page = modules_page
    table = [
        (2.0, "2"), (-3.0, "−3"), (-0.0, "0"), (0.1 + 0.2, "0.3"), (1e-5, "1e−05"),
        (0.0001, "0.0001"), (-1.5e-7, "−1.5e−07"), (123456.5, "123456"), (12345.25, "12345.2"),
        (1234567.5, "1.23457e+06"), (12345678912.0, "12345678912"), (1e15, "1e+15"),
        (99999999999999.5, "1e+14"), (5e-324, "4.94066e−324"), (1e308, "1e+308"),
        (1.23456789e10 + 0.5, "1.23457e+10"), (999999.5, "1e+06"), (0.707106781, "0.707107"),
        ("Infinity", "inf"), ("-Infinity", "−inf"), ("NaN", "nan"),
    ]  # fmt: skip
    got = page.evaluate(FMT_JS, [x for x, _ in table])
    expected = [f"{n} {f'({n})' if n.startswith('−') else n} {{x}}" for _, n in table]
    assert got == expected
    floats = some_floats(20_000, seed=6)
    got = page.evaluate(FMT_JS, floats)
    assert got == [f"{fmt(x)} {factor(x)} {{x}}" for x in floats]


MALFORMED_JS = """async () => {
  const { fill } = await (IMPORT)('core/narration.js');
  const attempt = (t, numbers) => { try { return fill(t, numbers); } catch (err) { return `error: ${err.message}`; } };
  return [attempt('a } b', {}), attempt('{n:data:3}', { data: [1] }), attempt('{n:grad:0}', { data: [1] })];
}""".replace("IMPORT", IMPORT_JS)


def test_a_malformed_template_or_a_missing_number_is_an_error_not_a_sentence(modules_page):
    page = modules_page
    assert page.evaluate(MALFORMED_JS) == [
        "error: malformed narration template: a single '}' in \"a } b\"",
        "error: narration slot {n:data:3} is outside the numbers",
        "error: narration slot {n:grad:0} is outside the numbers",
    ]


# ---------------------------------------------------------------------------- (b) merging

MERGE_JS = """async (runs) => {
  const { mergeNumbers } = await (IMPORT)('compute/merge-numbers.js');
  const { withStepObjects } = await (IMPORT)('core/step-columns.js');
  const post = async (path, body) => {
    const response = await fetch(path, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body),
    });
    return { status: response.status, body: await response.json() };
  };
  // The numbers of `body`'s values: given (engine.numbers) or asked of /api/values.
  const numbersOf = async (given, body, structure) => {
    if (given) return given;
    const answer = await post('/api/values', { ...body, structure });
    if (answer.status !== 200) throw new Error(`${answer.status} ${JSON.stringify(answer.body)}`);
    return answer.body;
  };
  const out = [];
  for (const run of runs) {
    const trace = withStepObjects((await post('/api/graph', run.before)).body);
    const expected = withStepObjects((await post('/api/graph', run.after)).body);
    let merged;
    let back;
    const beforeText = JSON.stringify(trace);
    try {
      merged = mergeNumbers(trace, await numbersOf(run.numbers, run.after, trace.structure));
      // A drag merges into merged traces: back to the first values, nothing read in between.
      back = mergeNumbers(merged, await numbersOf(run.numbersBefore, run.before, trace.structure));
    } catch (err) {
      out.push({ error: String(err) });
      continue;
    }
    const unchanged = (key) => merged[key] === trace[key];
    out.push({
      merged, expected, back, trace,
      shared: {
        layout: merged.layout === trace.layout,
        inputs: merged.nodes.every((n, i) => n.inputs === trace.nodes[i].inputs),
        // The sort's steps carry no numbers: a merge reads them as its drawing's (each made when read).
        sort: merged.steps.every((s, i) => s.phase !== 'topo' || JSON.stringify(s) === JSON.stringify(trace.steps.at(i))),
        root: unchanged('root') && unchanged('source') && unchanged('order_check'),
      },
      untouched: JSON.stringify(trace) === beforeText,
    });
  }
  return JSON.stringify(out);  // one text: see FILL_ALL_JS
}""".replace("IMPORT", IMPORT_JS)


def body(source: str, values: dict[str, float] | None, kwargs: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"source": source}
    if values:
        out["values"] = values
    if kwargs.get("expand_derived"):
        out["expand_derived"] = True
    if kwargs.get("mode", "correct") != "correct":
        out["mode"] = kwargs["mode"]
    if kwargs.get("order") is not None:
        out["order"] = list(kwargs["order"])
    if kwargs.get("target") is not None:
        out["target"] = kwargs["target"]
    if kwargs.get("pass_", "reverse") != "reverse":
        out["pass"], out["wrt"] = kwargs["pass_"], kwargs["wrt"]
    return out


def other_values(
    source: str, values: dict[str, float] | None, rng: random.Random
) -> dict[str, float]:
    names = [name for name, _ in engine.build_graph(source, values).leaves]
    return {
        name: rng.choice(VALUES) if rng.random() < 0.5 else rng.uniform(-9, 9) for name in names
    }


def difference(a: Any, b: Any, path: str = "") -> str | None:
    """The first place where two JSON values differ (for assertion messages)."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            if key not in a or key not in b:
                return f"{path}.{key}: only in {'the first' if key in a else 'the second'}"
            found = difference(a[key], b[key], f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{path}: {len(a)} items vs {len(b)}"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            found = difference(x, y, f"{path}[{i}]")
            if found:
                return found
        return None
    return None if json.dumps(a) == json.dumps(b) else f"{path}: {a!r} vs {b!r}"


def canonical(trace: dict[str, Any]) -> str:
    """The trace as sorted JSON without `layout.cached` (a cached layout is the same layout)."""
    trace = {**trace, "layout": {k: v for k, v in trace["layout"].items() if k != "cached"}}
    return json.dumps(trace, sort_keys=True)


def merge_runs(runs, seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    out = []
    for source, values, kwargs in runs:
        after = other_values(source, values, rng)
        out.append({"before": body(source, values, kwargs), "after": body(source, after, kwargs)})
    return out


def check_merges(page, runs, ids) -> None:
    results = json.loads(page.evaluate(MERGE_JS, runs))
    for result, name in zip(results, ids, strict=True):
        assert "error" not in result, (name, result)
        merged, expected = result["merged"], result["expected"]
        merged, expected = canonical(merged), canonical(expected)
        assert merged == expected, (name, difference(json.loads(merged), json.loads(expected)))
        back, trace = canonical(result["back"]), canonical(result["trace"])
        assert back == trace, (name, difference(json.loads(back), json.loads(trace)))
        assert result["shared"] == {"layout": True, "inputs": True, "sort": True, "root": True}
        assert result["untouched"], name


def test_engine_numbers_merged_into_a_trace_equal_the_trace_of_the_new_values(modules_page):
    page = modules_page
    presets = [(p["source"], p["values"] or None, {}) for p in engine.PRESETS]
    runs = merge_runs(presets + RANDOM_RUNS, seed=3)
    for run in runs:
        after = run["after"]
        kwargs = {k: after[k] for k in ("expand_derived", "mode", "order") if k in after}
        for key, request in (("numbers", after), ("numbersBefore", run["before"])):
            # The page's JSON.stringify writes -0 as 0: the server sees 0.
            values = {k: v + 0.0 for k, v in (request.get("values") or {}).items()}
            run[key] = json_ready(engine.numbers(request["source"], values, **kwargs))
    check_merges(page, runs, [run["after"]["source"][:30] for run in runs])


def test_values_replies_merged_into_a_trace_equal_the_trace_of_the_new_values(modules_page):
    """POST /api/values with the structure of /api/graph(values1), merged in the page, deep-equals
    /api/graph(values2): every preset, in the plain and in variants, and 30 random programs in
    random variants (overwrite, custom orders, expand_derived)."""
    page = modules_page
    presets = [(p["source"], p["values"] or None, {}) for p in engine.PRESETS]
    variants = [
        (p["source"], p["values"] or None, kwargs)
        for p in engine.PRESETS[:4]
        for kwargs in ({"mode": "overwrite"}, {"expand_derived": True})
    ]
    runs = merge_runs(presets + variants + RANDOM_RUNS, seed=4)
    check_merges(page, runs, [run["after"]["source"][:30] for run in runs])


# What the page works out for a trace (its lookups, its merge's drawing and reply, its narration
# filler) is kept on the trace under a symbol (core/trace-memo.js), not in a WeakMap: a 60 Hz drag made V8's
# scavenger promote every trace a WeakMap held. Kept so, it must still be the trace's own: a copy
# or a spread has none of it, JSON and the keys do not show it, and merges of merges find their
# drawing and reply.
ATTACHED_JS = """async () => {
  const { copied, drawingOf, mergeNumbers, mergedNumbersOf } = await (IMPORT)('compute/merge-numbers.js');
  const { traceIndex } = await (IMPORT)('core/frames.js');
  const { narrationOf } = await (IMPORT)('core/narration.js');
  const { withStepObjects } = await (IMPORT)('core/step-columns.js');
  const post = async (path, body) => (await fetch(path, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body),
  })).json();
  const source = 'a = 2; b = -3; c = a * b + a';
  const trace = withStepObjects(await post('/api/graph', { source }));
  const first = await post('/api/values', { source, values: { a: 1.5 }, structure: trace.structure });
  const second = await post('/api/values', { source, values: { a: 4 }, structure: trace.structure });
  const merged = mergeNumbers(trace, first);
  const again = mergeNumbers(merged, second);
  const last = again.steps.findLastIndex((step) => step.phase === 'forward'); // the root's value
  const told = narrationOf(again, last); // attaches a filler to `again`
  const index = traceIndex(again);
  const copy = copied(again);
  const spread = { ...again };
  return {
    drawing: drawingOf(merged) === trace && drawingOf(again) === trace,
    replies: mergedNumbersOf(merged.steps).reply === first && mergedNumbersOf(again.steps).reply === second,
    plainSteps: mergedNumbersOf(trace.steps) === undefined,
    ownIndex: traceIndex(again) === index && index !== traceIndex(merged) && index.nodeById.get(again.root) === again.nodes.at(-1),
    root: [trace.nodes.at(-1).data, merged.nodes.at(-1).data, again.nodes.at(-1).data],
    copies: [copy, spread].map((other) => drawingOf(other) === other && traceIndex(other) !== index),
    keys: JSON.stringify(Object.keys(again)) === JSON.stringify(Object.keys(copy)),
    json: JSON.stringify(again) === JSON.stringify(copy) && !JSON.stringify(again).includes('Symbol'),
    told: [told === narrationOf(copy, last), told === narrationOf(merged, last), told],
  };
}""".replace("IMPORT", IMPORT_JS)


def test_what_a_trace_works_out_stays_its_own_through_merges_copies_and_json(modules_page):
    page = modules_page
    found = page.evaluate(ATTACHED_JS)
    # a·b + a: 2·(−3)+2 = −4; 1.5·(−3)+1.5 = −3; 4·(−3)+4 = −8.
    assert found.pop("root") == [-4, -3, -8]
    same_as_copy, same_as_merged, told = found.pop("told")
    assert (same_as_copy, same_as_merged) == (True, False) and "−8" in told, told
    assert found == {
        "drawing": True,
        "replies": True,
        "plainSteps": True,
        "ownIndex": True,
        "copies": [True, True],
        "keys": True,
        "json": True,
    }


# Every frame of a trace as the player shows it (core/frames.js viewAt): each node's data and grad,
# each edge's state and the numbers of its contribution; and whether a merged trace's play index
# is its first trace's (built once per structure, not per slider move).
# `shown(trace)` in a page function: every frame as the player shows it (needs framesOf and viewAt).
SHOWN_JS = """const shown = (trace) => framesOf(trace).map((_, f) => {
    const view = viewAt(trace, f);
    return [
      trace.nodes.map((n) => [view.data.get(n.id), view.grad.get(n.id)]),
      trace.edges.map((e) => {
        const edge = view.edges.get(e.id);
        const c = edge?.contribution;
        return edge && [edge.state, edge.pulse ?? null, c ? [c.upstream, c.local, c.contribution, c.grad_after] : null];
      }),
    ];
  });"""

FRAMES_JS = """async (runs) => {
  const { mergeNumbers } = await (IMPORT)('compute/merge-numbers.js');
  const { framesOf, playIndex, viewAt } = await (IMPORT)('core/frames.js');
  const { withStepObjects } = await (IMPORT)('core/step-columns.js');
  const post = async (path, body) => (await fetch(path, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body),
  })).json();
  SHOWN
  const out = [];
  for (const run of runs) {
    const trace = withStepObjects(await post('/api/graph', run.before));
    const before = shown(trace); // the play index of `trace` is built here
    const expected = withStepObjects(await post('/api/graph', run.after));
    const merged = mergeNumbers(trace, await post('/api/values', { ...run.after, structure: trace.structure }));
    out.push({
      merged: JSON.stringify(shown(merged)), expected: JSON.stringify(shown(expected)),
      before: JSON.stringify(before), again: JSON.stringify(shown(trace)),
      shared: playIndex(merged) === playIndex(trace) && framesOf(merged) === framesOf(trace),
    });
  }
  return out;
}""".replace("IMPORT", IMPORT_JS).replace("SHOWN", SHOWN_JS)


def test_a_merged_trace_shows_its_own_numbers_at_every_frame_from_one_play_index(modules_page):
    """The player's view of a merged trace (new numbers) equals the view of /api/graph's trace for
    those values at every frame, while its play index and frames are the first trace's (built
    once per structure: a slider move rebuilds neither); the first trace still shows its own."""
    page = modules_page
    presets = [(p["source"], p["values"] or None, {}) for p in engine.PRESETS]
    variants = [
        (p["source"], p["values"] or None, {"mode": "overwrite"}) for p in engine.PRESETS[:3]
    ]
    runs = merge_runs(presets + variants + RANDOM_RUNS[:12], seed=7)
    for run, result in zip(runs, page.evaluate(FRAMES_JS, runs), strict=True):
        name = run["after"]["source"][:30]
        assert result["shared"], name
        assert result["merged"] == result["expected"], name
        assert result["again"] == result["before"], name


# The page's own numbers as a slider move paints them (compute/evaluator.js evaluateNumbers: its
# arrays Float64Arrays, the contributions recorded when a frame first reads one) merged, against
# the same numbers written out whole (`evaluate`, the JSON the server's replies are checked
# against) as a plain trace (its JSON read back: no merge, every number in its step): every
# frame (read first, before anything else reads the contributions) and every step's sentence
# alike, and the same trace as JSON.
PAGE_NUMBERS_JS = """async (runs) => {
  const { compileStructure, evaluate, evaluateNumbers } = await (IMPORT)('compute/evaluator.js');
  const { mergeNumbers } = await (IMPORT)('compute/merge-numbers.js');
  const { framesOf, viewAt } = await (IMPORT)('core/frames.js');
  const { narrationOf } = await (IMPORT)('core/narration.js');
  const { withStepObjects } = await (IMPORT)('core/step-columns.js');
  const post = async (path, body) => (await fetch(path, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body),
  })).json();
  SHOWN
  const told = (trace) => trace.steps.map((_, k) => narrationOf(trace, k));
  const out = [];
  for (const run of runs) {
    const trace = withStepObjects(await post('/api/graph', run.before));
    const s = compileStructure(trace);
    const painted = mergeNumbers(trace, evaluateNumbers(s, run.after.values ?? {}));
    const frames = JSON.stringify(shown(painted));
    const written = JSON.stringify(mergeNumbers(trace, evaluate(s, run.after.values ?? {})));
    const plain = JSON.parse(written);
    out.push({
      frames: frames === JSON.stringify(shown(plain)),
      told: JSON.stringify(told(painted)) === JSON.stringify(told(plain)),
      json: JSON.stringify(painted) === written,
      moved: frames !== JSON.stringify(shown(trace)),
    });
  }
  return out;
}""".replace("IMPORT", IMPORT_JS).replace("SHOWN", SHOWN_JS)


def test_the_pages_own_numbers_show_at_every_frame_what_they_are_written_out(modules_page):
    """A slider move's numbers, painted from the page's evaluator without recording every
    contribution, show the numbers written out whole at every frame, in every sentence and in
    the trace's JSON: presets, their overwrite variants and random programs."""
    presets = [(p["source"], p["values"] or None, {}) for p in engine.PRESETS]
    variants = [
        (p["source"], p["values"] or None, {"mode": "overwrite"}) for p in engine.PRESETS[:3]
    ]
    runs = merge_runs(presets + variants + RANDOM_RUNS[:12], seed=11)
    results = modules_page.evaluate(PAGE_NUMBERS_JS, runs)
    for run, result in zip(runs, results, strict=True):
        assert result == {"frames": True, "told": True, "json": True, "moved": True}, run


def test_values_replies_merged_in_forward_mode_with_a_target_or_functions_equal_the_trace(
    modules_page,
):
    """The same for forward mode (the nodes' tangents and the tangent steps' numbers are
    merged), a target other than the root, and the program's own functions."""
    page = modules_page
    runs = merge_runs(NEWER_RUNS, seed=5)
    check_merges(page, runs, [repr(run["after"]) for run in runs])


# ---------------------------------------------------------------------------- the page

ROOT_DATA = "() => document.querySelector('[data-testid=node].root').dataset.data"
E_MOVED, F_MOVED = repr(2.01 - 3), repr((2.01 - 3) * 10)  # add-mul with a = 2.01
CARDS_JS = """() => Object.fromEntries([...document.querySelectorAll('[data-testid=node]')]
  .map((g) => [g.dataset.label || g.dataset.nodeId, [g.dataset.data, g.dataset.grad]]))"""
# Every mutation under the graph's viewport (cards, edges, edge labels, handles), named by the
# card it is in (null outside cards) and its layer.
OBSERVE_JS = """() => {
  window.mutations = [];
  const viewport = document.querySelector('#graph > .viewport');
  new MutationObserver((records) => {
    for (const r of records) {
      const el = r.target.nodeType === Node.ELEMENT_NODE ? r.target : r.target.parentElement;
      const card = el.closest('[data-node-id]');
      window.mutations.push({
        type: r.type, attribute: r.attributeName,
        card: card ? card.dataset.label || card.dataset.nodeId : null,
        layer: el.closest('.viewport > g')?.getAttribute('class') ?? 'viewport',
      });
    }
  }).observe(viewport, { subtree: true, childList: true, attributes: true, characterData: true });
}"""


def press_on_slider(page, name: str, key: str) -> None:
    page.locator(f"[data-testid=slider-{name}] input.slider-range").focus()
    page.keyboard.press(key)


def test_arrow_keys_on_a_focused_slider_move_the_slider_not_the_timeline(page):
    open_page(page)  # f = (a + b) · c with a = 2, b = -3, c = 10: f = -10
    page.click("#to-end")
    last = page.evaluate("document.body.dataset.stepIndex")
    press_on_slider(page, "a", "ArrowRight")  # the slider's step is 0.01: a = 2.01, f = -9.9
    page.wait_for_function(f"() => ({ROOT_DATA})() === '{F_MOVED}'")
    assert page.input_value("[data-testid=slider-a] input.slider-value") == "2.01"
    page.keyboard.press("ArrowLeft")
    page.wait_for_function(f"() => ({ROOT_DATA})() === '-10'")
    assert page.evaluate("document.body.dataset.stepIndex") == last


def test_a_slider_move_rewrites_only_the_numbers_that_changed(page):
    """At the last frame every card shows its numbers; a = 2 → 2.01 changes a's data, e = a + b,
    f = e·c and grad[c] = e, nothing else: only those four cards are written to, only their
    texts and numeric attributes, and no element is added, removed or moved in the graph."""
    open_page(page)
    page.click("#to-end")
    before = page.evaluate(CARDS_JS)
    label = page.get_attribute("#graph", "aria-label")
    # Focusing the slider links it to a's card (controls/leaf-link.js): before the move is observed.
    page.locator("[data-testid=slider-a] input.slider-range").focus()
    page.wait_for_selector("[data-testid=node][data-linked]")
    page.evaluate(OBSERVE_JS)
    page.keyboard.press("ArrowRight")
    page.wait_for_function(f"() => ({ROOT_DATA})() === '{F_MOVED}'")
    page.evaluate("() => new Promise((resolve) => requestAnimationFrame(() => resolve()))")
    after = page.evaluate(CARDS_JS)
    changed = {name for name in before if before[name] != after[name]}
    assert changed == {"a", "c", "e", "f"}
    assert after["e"] == [E_MOVED, "10"] and after["c"] == ["10", E_MOVED]
    mutations = page.evaluate("window.mutations")
    assert [m for m in mutations if m["type"] == "childList"] == []
    assert {m["card"] for m in mutations} == changed  # no mutation outside those cards
    assert {m["attribute"] for m in mutations if m["type"] == "attributes"} == {
        "data-data",
        "data-grad",
        "aria-label",
    }
    assert {m["layer"] for m in mutations} == {"layer-nodes"}
    assert page.get_attribute("#graph", "aria-label") == label


def chain_program(statements: int) -> str:
    """Four leaves and a chain of statements mixing them: one propagation row per node."""
    lines = [f"x{i} = {1 + i}" for i in range(4)]
    lines += ["v0 = x0 * x1 + x2"]
    lines += [f"v{i} = v{i - 1} * x{i % 4} * 0.5 + x{(i + 1) % 4}" for i in range(1, statements)]
    return "\n".join(lines)


TABLE_TEXTS_JS = """(panel) => [...document.querySelectorAll(`#panel-${panel} tbody tr`)]
  .map((tr) => [...tr.cells].map((td) => td.textContent))"""
PROBE_ROWS_JS = """(panel) => document.querySelectorAll(`#panel-${panel} tbody tr`)
  .forEach((tr) => { tr.dataset.probe = 'kept'; })"""
KEPT_ROWS_JS = """(panel) => [...document.querySelectorAll(`#panel-${panel} tbody tr`)]
  .every((tr) => tr.dataset.probe === 'kept')"""
PANELS_TOP = "document.querySelector('#panels').scrollTop"


@pytest.mark.parametrize("panel", ["propagation", "gradients"])
def test_an_open_scrolled_table_keeps_its_place_and_rows_while_a_slider_moves(page, panel):
    """A table scrolled away from the current row stays where the reader put it: its rows are
    updated in place (same elements), and read as a fresh page's for the new values."""
    page.emulate_media(reduced_motion="reduce")  # a scroll the page makes is instant
    source = chain_program(30)
    page.goto("/?" + urlencode({"source": source, "collapse_at": "never"}))
    page.wait_for_selector(READY)
    page.click("#to-end")
    page.click(f"#tab-{panel}")
    # The reader scrolls to the middle of the table (opening the propagation tab showed the
    # current row, the last one: away from it).
    start = page.evaluate(PANELS_TOP)
    middle = page.evaluate("document.querySelector('#panels').scrollHeight") // 2
    page.locator("#panels").hover()
    page.mouse.wheel(0, middle - start)
    page.wait_for_function(f"m => Math.abs({PANELS_TOP} - m) < 2", arg=middle)
    top = page.evaluate(PANELS_TOP)
    before = page.evaluate(TABLE_TEXTS_JS, panel)
    page.evaluate(PROBE_ROWS_JS, panel)
    root = page.evaluate(ROOT_DATA)
    press_on_slider(page, "x0", "ArrowRight")  # x0 = 1 → 1.01
    page.wait_for_function(f"r => ({ROOT_DATA})() !== r", arg=root)
    page.evaluate("() => new Promise((resolve) => requestAnimationFrame(() => resolve()))")
    after = page.evaluate(TABLE_TEXTS_JS, panel)
    assert after != before
    assert page.evaluate(KEPT_ROWS_JS, panel)
    assert page.evaluate(PANELS_TOP) == top
    fresh = page.context.new_page()
    fresh.goto("/?" + urlencode({"source": source, "values": "x0:1.01", "collapse_at": "never"}))
    fresh.wait_for_selector(READY)
    fresh.click("#to-end")
    fresh.click(f"#tab-{panel}")
    assert fresh.evaluate(TABLE_TEXTS_JS, panel) == after


def bench_program(statements: int) -> str:
    """bench/page.py's `program`: ten leaves, then lines mixing the last two results and a leaf."""
    lines = [f"x{i} = {1 + i / 10}" for i in range(10)]
    lines += ["v0 = x0 * x1 + x2", "v1 = v0 * x3 + x4"]
    lines += [f"v{i} = v{i - 1} * x{i % 10} * 0.5 + v{i - 2} * 0.5" for i in range(2, statements)]
    return "\n".join(lines)


def test_a_slider_move_asks_only_for_numbers_under_40_bytes_per_node(page):
    """bench/page.py's program at ~1,000 nodes: moving a slider posts /api/values (the trace's
    structure id and the new value), never /api/graph, and the reply is gzipped below 40 bytes
    per node."""
    page.goto("/?" + urlencode({"source": bench_program(166), "collapse_at": "never"}))
    page.wait_for_selector(READY)
    nodes = page.locator("[data-testid=node]").count()
    assert 950 <= nodes <= 1_000
    page.click("#to-end")
    structure = page.evaluate(
        "async () => (await (IMPORT)('main.js')).scope.store.state.trace.structure".replace(
            "IMPORT", IMPORT_JS
        )
    )
    assert isinstance(structure, str) and structure
    posted = []
    page.on("request", lambda r: posted.append(r.url.split("/")[-1]) if "/api/" in r.url else None)
    root = page.evaluate(ROOT_DATA)
    with page.expect_response("**/api/values") as answer:
        press_on_slider(page, "x0", "ArrowRight")
    response = answer.value
    body = response.request.post_data_json
    assert body["structure"] == structure and body["values"]["x0"] == 1.01
    assert response.status == 200 and response.headers["content-encoding"] == "gzip"
    size = response.request.sizes()["responseBodySize"]
    assert size < 40 * nodes, f"{size} bytes for {nodes} nodes"
    page.wait_for_function(f"r => ({ROOT_DATA})() !== r", arg=root)
    assert posted == ["values"]


STALE = {
    "error": {
        "type": "StaleStructure",
        "message": "This graph's structure is not the one the server has: post the program to "
        "/api/graph again",
    }
}


def test_a_stale_structure_asks_for_the_whole_graph_and_shows_the_right_numbers(page):
    open_page(page)
    page.click("#to-end")
    last = page.evaluate("document.body.dataset.stepIndex")
    page.route("**/api/values", lambda route: route.fulfill(status=409, json=STALE))
    with page.expect_request("**/api/graph"):
        press_on_slider(page, "a", "ArrowRight")
    page.wait_for_function(f"() => ({ROOT_DATA})() === '{F_MOVED}'")
    assert page.evaluate(CARDS_JS)["e"] == [E_MOVED, "10"]
    assert page.is_hidden("[data-testid=error]")
    assert page.evaluate("document.body.dataset.stepIndex") == last


def test_another_error_of_the_numbers_path_is_shown_as_any_request_error(page):
    open_page(page)
    page.click("#to-end")
    busy = {"error": {"type": "Busy", "message": "The server is busy: try again in a moment."}}
    page.route("**/api/values", lambda route: route.fulfill(status=503, json=busy))
    press_on_slider(page, "a", "ArrowRight")
    page.wait_for_selector("[data-testid=error]:not([hidden])")
    assert page.text_content("[data-testid=error] .error-message") == busy["error"]["message"]
    # The numbers shown are the page's own for the new value (compute/instant-numbers.js): the server's error
    # takes nothing from them.
    assert page.evaluate(ROOT_DATA) == F_MOVED


LABELS_JS = """() => [...document.querySelectorAll('#graph .edge-label')]
  .map((g) => g.querySelector('text').textContent)"""


def test_edge_labels_on_screen_are_rewritten_in_place(page):
    """At f's second contribution both edges into f carry their chain rule: e → f reads
    1 × 10 = 10 (unchanged by a), c → f reads 1 × (−1) = −1 and becomes 1 × (−0.99) = −0.99."""
    open_page(page)
    page.click("[data-testid=jump-backward]")
    page.click("[data-testid=step-forward]")
    assert page.text_content("#phase-part") == "edge 2 of 2"
    assert sorted(page.evaluate(LABELS_JS)) == ["1 × (−1) = −1", "1 × 10 = 10"]
    page.evaluate(OBSERVE_JS)
    press_on_slider(page, "a", "ArrowRight")
    page.wait_for_function(f"() => ({ROOT_DATA})() === '{F_MOVED}'")
    page.evaluate("() => new Promise((resolve) => requestAnimationFrame(() => resolve()))")
    assert sorted(page.evaluate(LABELS_JS)) == ["1 × (−0.99) = −0.99", "1 × 10 = 10"]
    mutations = page.evaluate("window.mutations")
    assert [m for m in mutations if m["type"] == "childList"] == []
    assert {m["layer"] for m in mutations} == {"layer-nodes", "layer-labels"}
    assert {m["card"] for m in mutations if m["layer"] == "layer-nodes"} == {"a", "c", "e", "f"}
