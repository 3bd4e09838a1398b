"""The page's tensor timeline and layout (static/js/tensor/timeline.js, layout.js) under Node,
against the engine's replies: what each step shows of every tensor is what the reply's steps say
(a gradient appears when the pass reaches it, a reused tensor's is the sum of what each op passed
so far, and its final one is the reply's `grad`), and the layout is deterministic, left to right
along every edge, with no card over another."""

from __future__ import annotations

import json

import node_driver
import pytest
from node_driver import NODE

from chainrule import engine
from chainrule.bench.tensors import makemore
from chainrule.engine.tensor_program import trace_tensors
from chainrule.engine.tensor_reply import tensor_reply

pytestmark = pytest.mark.skipif(NODE is None, reason="Node.js is not installed")

DRIVER = """
import { readFileSync } from "node:fs";
const { tensorViewAt } = await import("./tensor/timeline.js");
const { tensorLayout } = await import("./tensor/layout.js");
const replies = JSON.parse(readFileSync(process.argv[2], "utf8"));
const out = replies.map((reply) => {
  const frames = reply.steps.map((_, i) => {
    const view = tensorViewAt(reply, i);
    const shown = (id) => ({ data: view.data(id) ?? null, grad: view.grad(id) ?? null });
    return Object.fromEntries(reply.nodes.map((n) => [n.id, shown(n.id)]));
  });
  const place = (layout) => [...layout.cards.values()]
    .map((c) => [c.id, c.x, c.y, c.width, c.height]);
  return { frames, cards: place(tensorLayout(reply)), again: place(tensorLayout(reply)) };
});
console.log(JSON.stringify(out));
"""

REUSED = (
    "X = tensor([[1.0, 2.0], [3.0, 4.0]])\n"
    "W = tensor([[0.5, -1.0], [2.0, 0.25]])\n"
    "L = ((X @ W) * W).sum()"
)
SOURCES = [*(p["source"] for p in engine.TENSOR_PRESETS), REUSED, makemore(1)]


def add(a, b):
    return [add(x, y) for x, y in zip(a, b, strict=True)] if isinstance(a, list) else a + b


def floats(value):
    return [floats(x) for x in value] if isinstance(value, list) else float(value)


def expected_frames(reply: dict) -> list[dict]:
    """Each step's data and gradient of every tensor, from the reply's steps alone."""
    nodes = {n["id"]: n for n in reply["nodes"]}
    passes = {n: [] for n in nodes}  # tensor → [(step index, what it was passed)]
    for k, step in enumerate(reply["steps"]):
        for passed in step["grads"] or []:
            passes[passed["input"]].append((k, passed["grad"]))
    forward = {
        step["node"]: k for k, step in enumerate(reply["steps"]) if step["phase"] == "forward"
    }
    seed = next(k for k, step in enumerate(reply["steps"]) if step["phase"] == "seed")
    frames = []
    for i in range(len(reply["steps"])):
        frame = {}
        for id_, node in nodes.items():
            data = node["data"] if node["kind"] != "op" or forward[id_] <= i else None
            grad = None
            if node["grad"] is not None and node["kind"] != "const":
                done = [g for k, g in passes[id_] if k <= i]
                if id_ == reply["root"]:
                    grad = node["grad"] if i >= seed else None
                elif done and len(done) == len(passes[id_]):
                    grad = node["grad"]
                elif done:
                    grad = done[0]
                    for more in done[1:]:
                        grad = add(grad, more)
            frame[id_] = {"data": data, "grad": grad}
        frames.append(frame)
    return frames


def test_every_step_shows_what_the_reply_says_and_the_layout_reads_left_to_right(tmp_path):
    replies = [json.loads(json.dumps(tensor_reply(trace_tensors(s)))) for s in SOURCES]
    judged = node_driver.run_node(tmp_path, replies, DRIVER)
    for reply, got in zip(replies, judged, strict=True):
        expected = expected_frames(reply)
        assert len(got["frames"]) == len(expected)
        for shown, wanted in zip(got["frames"], expected, strict=True):
            for id_, cell in wanted.items():
                for key in ("data", "grad"):
                    want = None if cell[key] is None else floats(cell[key])
                    assert shown[id_][key] == want, (id_, key)
        assert got["cards"] == got["again"]
        box = {c[0]: c[1:] for c in got["cards"]}
        for node in reply["nodes"]:
            for source in node["inputs"]:
                assert box[source][0] + box[source][2] < box[node["id"]][0], (source, node["id"])
        for a in got["cards"]:
            for b in got["cards"]:
                if a[0] < b[0] and a[1] == b[1]:  # one column: one above the other
                    assert a[2] + a[4] <= b[2] or b[2] + b[4] <= a[2], (a[0], b[0])
