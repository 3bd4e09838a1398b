"""The page's timeline read from its columns (static/js/core/step-columns.js `StepList`, and
static/js/core/frames.js's play index), under Node: what reads a step without making its object
agrees with the step's object, and what the play index derives (the frames a step starts at,
what a frame lights, what may change between two frames) agrees with what `viewAt` shows, the
player's own view of each frame, on every preset and edge program in both modes, a custom visit
order, forward mode, another target and a program's own function."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import node_driver
import pytest
from engine_cases import PROGRAMS
from node_driver import NODE

from chainrule import engine

MORE = [
    ("a = 2\nb = -3\nc = 10\nf = (a + b) * c", None, {"pass_": "forward", "wrt": "a"}),
    ("a = 2\nb = -3\nc = 10\ne = a*b\nf = (e + b) * c", None, {"target": "e"}),
    ("softplus(x) = log(1 + exp(x))\na = 1\nsoftplus(a*2) * softplus(a)", None, {}),
]


def runs() -> list[tuple[str, dict[str, float] | None, dict[str, Any]]]:
    out = []
    for source, values in PROGRAMS:
        graph = engine.build_graph(source, values)
        late = [f"n{node.id}" for node in engine.topo.topo_order(graph.root)]  # the forward order
        out += [(source, values, {}), (source, values, {"mode": "overwrite"})]
        out.append((source, values, {"order": late}))
    return out + MORE


def replies() -> list[dict[str, Any]]:
    return [json.loads(json.dumps(engine.trace(s, v, **k).to_dict())) for s, v, k in runs()]


# Each reply's disagreements (empty when the reader agrees with itself), and counts to show that
# something was compared.
ACCESSORS = """
import { StepList } from "./core/step-columns.js";
import { readFileSync } from "node:fs";
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
const cases = JSON.parse(readFileSync(process.argv[2], "utf8"));
const out = cases.map((reply) => {
  const list = new StepList(reply);
  const steps = [...list];
  const wrong = [];
  let contributions = 0;
  steps.forEach((step, k) => {
    const passes = step.phase === "backward" || step.phase === "tangent";
    const count = passes ? step.contributions.length : 0;
    const read = [list.phaseAt(k), list.nodeAt(k), list.contributionCount(k)];
    if (!same(read, [step.phase, step.node, count])) wrong.push(k);
    if (!same(list.at(k), step) || step.index !== k) wrong.push([k, "at"]);
    for (let j = 0; j < count; j++) {
      const c = step.contributions[j];
      contributions += 1;
      const ends = [list.contributionEdge(k, j), list.contributionTo(k, j)];
      if (!same(ends, [c.edge, c.to ?? c.from])) wrong.push([k, j]);
      const at = [list.contributionEdgePosition(k, j), list.contributionToPosition(k, j)];
      if (!same([`e${at[0]}`, `n${at[1]}`], ends)) wrong.push([k, j, "position"]);
      const made = list.contributionAt(k, j);
      if (step.phase === "backward" && !same(made, c)) wrong.push([k, j, "contribution"]);
    }
  });
  const { reply: numbers, visitOf, firstOf } = list.numbers();
  const backward = steps.filter((step) => step.phase === "backward");
  const upstream = backward.map((step) => numbers.step_grad[visitOf[step.index]]);
  if (!same(backward.map((step) => step.grad), upstream)) wrong.push("step_grad");
  const after = backward.flatMap((s) => s.contributions.map((c) => c.grad_after));
  const read = backward.flatMap((s) => s.contributions.map(
    (_, j) => numbers.grad_after[firstOf[s.index] + j]));
  if (!same(after, read)) wrong.push("grad_after");
  const phase = (name) => (s) => s.phase === name;
  const array = {
    last: same(list.at(-1), steps.at(-1)),
    past: list.at(list.length) === undefined && list.at(-list.length - 1) === undefined,
    slice: same(list.slice(2, 5), steps.slice(2, 5)) && same(list.slice(-3), steps.slice(-3)),
    filter: same(list.filter(phase("seed")), steps.filter(phase("seed"))),
    find: list.findIndex(phase("backward")) === steps.findIndex(phase("backward"))
      && list.findLastIndex(phase("forward")) === steps.findLastIndex(phase("forward")),
    json: JSON.stringify(list) === JSON.stringify(steps),
    keys: same([...list.keys()], [...steps.keys()]),
  };
  return { wrong, steps: steps.length, contributions, array };
});
console.log(JSON.stringify(out));
"""


@pytest.mark.skipif(NODE is None, reason="Node.js is not installed (make test-deps)")
def test_the_step_list_s_accessors_read_what_its_step_objects_hold(tmp_path: Path) -> None:
    found = node_driver.run_node(tmp_path, replies(), ACCESSORS)
    assert all(not reply["wrong"] for reply in found), [r["wrong"][:5] for r in found if r["wrong"]]
    assert all(all(reply["array"].values()) for reply in found), [r["array"] for r in found]
    assert sum(reply["contributions"] for reply in found) > 1_000


# For every frame f: what activeAt says it lights is viewAt's current node and lit edges;
# every node and edge whose view differs between frames f − 1 and f (and between the first
# and a later frame) is among what changedBetween names; frameOfStep is the first frame of a step.
FRAMES = """
import { withStepObjects } from "./core/step-columns.js";
import { activeAt, changedBetween, frameOfStep, framesOf, viewAt } from "./core/frames.js";
import { readFileSync } from "node:fs";
const out = JSON.parse(readFileSync(process.argv[2], "utf8")).map((reply) => {
  const trace = withStepObjects(reply);
  const frames = framesOf(trace);
  const shown = (f) => {
    const view = viewAt(trace, f);
    const card = (id) => [view.data.get(id), view.grad.get(id), view.computed.has(id),
      view.visited.has(id), view.current === id];
    return {
      view,
      nodes: new Map(trace.nodes.map((n) => [n.id, JSON.stringify(card(n.id))])),
      edges: new Map(trace.edges.map((e) => [e.id, JSON.stringify(view.edges.get(e.id) ?? null)])),
    };
  };
  const wrong = [];
  const missed = (a, b, from, to) => {
    const [nodes, edges] = changedBetween(trace, from, to).map((ids) => new Set(ids));
    for (const [kind, named] of [["nodes", nodes], ["edges", edges]]) {
      for (const [id, text] of a[kind]) {
        if (b[kind].get(id) !== text && !named.has(id)) wrong.push([from, to, id]);
      }
    }
  };
  const views = frames.map((_, f) => shown(f));
  views.forEach((now, f) => {
    const lit = activeAt(trace, f);
    const edges = JSON.stringify(lit.edges) === JSON.stringify(now.view.active);
    if (lit.node !== now.view.current || !edges) wrong.push([f, "active"]);
    if (f > 0) missed(views[f - 1], now, f - 1, f);
    if (f > 0) missed(now, views[0], f, 0);
  });
  trace.steps.forEach((_, k) => {
    const first = frames.findIndex((frame) => frame.step === k);
    if (frameOfStep(trace, k) !== first) wrong.push([k, "first frame"]);
  });
  const outside = activeAt(trace, -1) === undefined && activeAt(trace, frames.length) === undefined
    && changedBetween(trace, 0, frames.length) === null;
  return { wrong, frames: frames.length, outside };
});
console.log(JSON.stringify(out));
"""


@pytest.mark.skipif(NODE is None, reason="Node.js is not installed (make test-deps)")
def test_the_play_index_agrees_with_the_view_of_every_frame(tmp_path: Path) -> None:
    found = node_driver.run_node(tmp_path, replies(), FRAMES)
    assert all(not reply["wrong"] for reply in found), [r["wrong"][:5] for r in found if r["wrong"]]
    assert all(reply["outside"] for reply in found)
    assert sum(reply["frames"] for reply in found) > 2_000
