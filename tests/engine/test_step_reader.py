"""The timeline sent as columns (docs/api.md, "Steps") and its two readers: Python's
(engine/step_reader.py) gives, step by step, what the trace record holds (the sort's events, the
topological order, every visit and contribution with its variant's marks), and the page's
(static/js/core/step-columns.js, under Node) gives exactly what Python's does, on every preset in
every
variant, forward mode, a program's own function, another target and random programs. Steps alike
share one pattern, so the reply holds a few dozen sentences however large the graph."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import node_driver
import pytest
from engine_cases import CASES, case_id, random_runs
from hypothesis import given, settings
from hypothesis import strategies as st
from node_driver import NODE

from chainrule import engine
from chainrule.engine.reply import number
from chainrule.engine.step_reader import resolve, step_objects
from chainrule.engine.topo import topo_order

# Besides CASES (presets and edge programs in every variant): the timelines CASES lacks.
MORE = [
    ("a = 2\nb = -3\nc = 10\nf = (a + b) * c", None, {"pass_": "forward", "wrt": "a"}),
    ("a = 2\nb = -3\nc = 10\ne = a*b\nf = (e + b) * c", None, {"target": "e"}),
    ("softplus(x) = log(1 + exp(x))\na = 1\nsoftplus(a*2) * softplus(a)", None, {}),
    ("softplus(x) = log(1 + exp(x))\na = 1\nsoftplus(a*2) * a", None, {"mode": "overwrite"}),
    ("a = 3\nb = a * a + 1", None, {"mode": "overwrite", "lang": "ru"}),
]
RUNS = CASES + MORE


def record_steps(traced: engine.Trace) -> list[tuple]:
    """What each step is about, from the trace record itself: (phase, node, what it does; its
    numbers JSON-ready, as a reply writes them)."""
    events: list = []
    topo_order(traced.target, events)
    found: list[tuple] = [
        ("topo", node.id, (action, None if child is None else child.id))
        for action, node, _, child in events
    ]
    if traced.tangents is not None:
        return found + [("tangent", node.id, None) for node in traced.topo_order]
    found += [("forward", node.id, None) for node in traced.topo_order]
    found.append(("seed", traced.target.id, None))
    record = traced.record
    for visit, node_id in enumerate(record.visits):
        ks = range(record.starts[visit], record.starts[visit + 1])
        contributions = tuple(
            (
                record.edge[k],
                record.to[k],
                number(record.contribution[k]),
                k in record.lost,
                k in record.late,
            )
            for k in ks
        )
        found.append(("backward", node_id, (number(record.upstream[visit]), contributions)))
    return found


def read_steps(reply: dict[str, Any]) -> list[tuple]:
    """The same, from the reader's step objects."""
    found = []
    for step in step_objects(reply):
        node = int(step["node"][1:])
        if step["phase"] == "topo":
            looked = None if step["input"] is None else int(step["input"][1:])
            found.append(("topo", node, (step["action"], looked)))
        elif step["phase"] == "backward":
            contributions = tuple(
                (int(c["edge"][1:]), int(c["to"][1:]), c["contribution"], c["lost"], c["late"])
                for c in step["contributions"]
            )
            found.append(("backward", node, (step["grad"], contributions)))
        else:
            found.append((step["phase"], node, None))
    return found


def run_id(case: tuple) -> str:
    return case_id(case) if case in CASES else f"{case[0][:24]!r}-{case[2]}"


@pytest.mark.parametrize("case", RUNS, ids=[run_id(c) for c in RUNS])
def test_the_reader_gives_what_the_trace_recorded(case: tuple) -> None:
    source, values, kwargs = case
    traced = engine.trace(source, values, **kwargs)
    reply = traced.to_dict()
    assert read_steps(reply) == record_steps(traced)


@settings(max_examples=100, deadline=None)
@given(random_runs())
def test_the_reader_gives_what_the_trace_recorded_on_random_programs(run: tuple) -> None:
    source, values, kwargs = run
    traced = engine.trace(source, values, **kwargs)
    assert read_steps(traced.to_dict()) == record_steps(traced)


def test_a_pattern_names_the_step_s_own_parts() -> None:
    pattern = "grad[{t:text:in1}] += {f:step_grad:visit} × {f:local_grad:e1} = {n:contribution:c1}"
    assert resolve(pattern, 7, [3, 5], edge=10, contribution=20, visit=4) == (
        "grad[{t:text:5}] += {f:step_grad:4} × {f:local_grad:11} = {n:contribution:21}"
    )
    # Literal braces stay as they are, plain indices too: only the names of parts are written.
    assert resolve("{{t:text:node}} {t:text:node} {n:data:12}", 7, []) == (
        "{{t:text:node}} {t:text:7} {n:data:12}"
    )


def test_steps_alike_share_one_pattern_however_large_the_graph() -> None:
    """A 7,499-node sum of products: 30,000 steps, a handful of sentences, and the backward
    numbers sent once, as the numbers reply's arrays."""
    source = " + ".join(f"a{i}*b{i}" for i in range(1_875))
    reply = engine.trace(source).to_dict()
    steps = reply["steps"]
    assert len(reply["nodes"]) == 7_499 and len(steps["phase"]) == 29_997
    assert len(steps["templates"]) <= 16, steps["templates"]
    assert steps["step_grad"] == engine.numbers(source)["step_grad"]
    # A step is three numbers and a phase; the sort's steps two more.
    per_step = len(json.dumps({k: steps[k] for k in ("phase", "node", "template")})) / 29_997
    assert per_step < 20


# The page's reader on the same replies, under Node: its step objects, as JSON.
DRIVER = """
import { stepObjects } from "./core/step-columns.js";
import { readFileSync } from "node:fs";
const replies = JSON.parse(readFileSync(process.argv[2], "utf8"));
console.log(JSON.stringify(replies.map(stepObjects)));
"""


def node_step_objects(tmp_path: Path, replies: list[dict[str, Any]]) -> list[Any]:
    done = node_driver.run_node(tmp_path, replies, DRIVER, [])
    return done


@pytest.mark.skipif(NODE is None, reason="Node.js is not installed (make test-deps)")
def test_the_page_s_reader_gives_what_python_s_gives(tmp_path: Path) -> None:
    replies = [json.loads(json.dumps(engine.trace(s, v, **k).to_dict())) for s, v, k in RUNS]
    expected = [json.loads(json.dumps(step_objects(reply))) for reply in replies]
    # run_node reads numbers back as floats (JSON has one kind of number).
    assert node_step_objects(tmp_path, replies) == node_driver.negative_zeros(expected)


@pytest.mark.skipif(NODE is None, reason="Node.js is not installed (make test-deps)")
@settings(max_examples=5, deadline=None)
@given(st.lists(random_runs(), min_size=20, max_size=20))
def test_the_page_s_reader_gives_what_python_s_gives_on_random_programs(
    tmp_path_factory: pytest.TempPathFactory, runs: list[tuple]
) -> None:
    replies = [json.loads(json.dumps(engine.trace(s, v, **k).to_dict())) for s, v, k in runs]
    expected = [json.loads(json.dumps(step_objects(reply))) for reply in replies]
    found = node_step_objects(tmp_path_factory.mktemp("node"), replies)
    assert found == node_driver.negative_zeros(expected)


MALFORMED = """
import { stepObjects } from "./core/step-columns.js";
import { readFileSync } from "node:fs";
const [reply] = JSON.parse(readFileSync(process.argv[2], "utf8"));
const said = (change) => {
  try {
    stepObjects(change(structuredClone(reply)));
    return "read";
  } catch (err) {
    return err.message;
  }
};
console.log(JSON.stringify([
  said((r) => r),
  said((r) => { delete r.steps.templates; return r; }),
  said((r) => { r.steps.node.pop(); return r; }),
  said((r) => { r.steps.node[0] = 99; return r; }),
  said((r) => { r.steps.template[1] = 99; return r; }),
  said((r) => { r.steps.phase[2] = "sideways"; return r; }),
  said((r) => { r.steps.action[1] = "jump"; return r; }),
]));
"""


@pytest.mark.skipif(NODE is None, reason="Node.js is not installed (make test-deps)")
def test_the_page_s_reader_refuses_malformed_columns(tmp_path: Path) -> None:
    """api.js turns what it throws into a BadResponse error: a reply it cannot read is never
    half shown."""
    reply = json.loads(json.dumps(engine.trace("a = 2\nb = a * 3").to_dict()))
    said = node_driver.run_node(tmp_path, [reply], MALFORMED, [])
    assert said == [
        "read",
        "the reply's steps lack templates",
        "the reply's step columns differ in length",
        "the reply's step 0 is malformed",
        "the reply's step 1 is malformed",
        "the reply's step 2 is malformed",
        'the reply\'s sort has an unknown action "jump"',
    ]
