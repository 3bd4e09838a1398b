"""The tensor labs' questions and tables (static/js/labs/tensor-labs.js) under Node, against
the engine: each cell the predict lab can ask for has the Value's own gradient as its answer
and waits at the backward step where its gradient first arrives; the = lab finds exactly the
tensors two ops read, each part being the sum of the fan-in's terms through that op."""

from __future__ import annotations

import itertools

import node_driver
import pytest
from node_driver import NODE

from chainrule import engine
from chainrule.engine.tensor_program import trace_tensors
from chainrule.engine.tensor_reply import fan_in, tensor_reply

pytestmark = pytest.mark.skipif(NODE is None, reason="Node.js is not installed")

DRIVER = """
import { readFileSync } from "node:fs";
const { tensorPromptsOf, reusedTensorsOf } = await import("./labs/tensor-labs.js");
const replies = JSON.parse(readFileSync(process.argv[2], "utf8"));
console.log(JSON.stringify(replies.map((reply) => ({
  prompts: tensorPromptsOf(reply),
  reused: reusedTensorsOf(reply).map((r) => ({
    tensor: r.tensor.id, ops: r.parts.map((p) => p.op), parts: r.parts.map((p) => p.grad),
  })),
}))));
"""

REUSED_TWICE = (
    "X = tensor([[1.0, 2.0], [3.0, 4.0]])\n"
    "W = tensor([[0.5, -1.0], [2.0, 0.25]])\n"
    "L = ((X @ W) * W).sum() + (W ** 2).sum()"
)
SOURCES = [*(p["source"] for p in engine.TENSOR_PRESETS), REUSED_TWICE]


def flat_index(index: list[int], shape: list[int]) -> int:
    flat = 0
    for i, size in zip(index, shape, strict=True):
        flat = flat * size + i
    return flat


def element(nested, index):
    for i in index:
        nested = nested[i]
    return nested


def test_the_labs_ask_and_table_what_the_engine_computed(tmp_path):
    traces = [trace_tensors(source) for source in SOURCES]
    replies = [tensor_reply(trace) for trace in traces]
    judged = node_driver.run_node(tmp_path, replies, DRIVER)
    seen_reused = {}
    for source, trace, reply, out in zip(SOURCES, traces, replies, judged, strict=True):
        tensors = {f"t{t.id}": t for t in trace.tensors}
        leaves = {f"t{t.id}" for t in trace.leaves if t.elements is not None}
        # Every element of every named float leaf is a question, its answer the Value's grad.
        assert {p["tensor"] for p in out["prompts"]} == leaves, source
        for prompt in out["prompts"]:
            tensor = tensors[prompt["tensor"]]
            value = tensor.elements[
                flat_index([int(i) for i in prompt["index"]], list(tensor.shape))
            ]
            assert prompt["truth"] == value.grad
            first = min(
                k
                for k, s in enumerate(reply["steps"])
                if s["phase"] == "backward"
                for g in s["grads"]
                if g["input"] == prompt["tensor"]
            )
            assert prompt["frame"] == first
        # The = lab: the tensors read by two ops or more, each part the fan-in's terms through it.
        readers = {
            tid: {t2.id for t2 in trace.tensors if t2.op and any(i is t for i in t2.inputs)}
            for tid, t in tensors.items()
            if t.elements is not None
        }
        assert {r["tensor"] for r in out["reused"]} == {
            tid for tid, ops in readers.items() if len(ops) >= 2 and tensors[tid].elements
        }, source
        for reused in out["reused"]:
            tensor = tensors[reused["tensor"]]
            for op, part in zip(reused["ops"], reused["parts"], strict=True):
                for index in itertools.product(*(range(n) for n in tensor.shape)):
                    terms = fan_in(trace, tensor, index)
                    through = sum(t["contribution"] for t in terms if t["tensor"] == op)
                    assert element(part, index) == pytest.approx(through, rel=1e-12, abs=1e-15)
        seen_reused[source] = [r["tensor"] for r in out["reused"]]
    softmax = next(p["source"] for p in engine.TENSOR_PRESETS if p["id"] == "tensor-softmax-ce")
    assert len(seen_reused[softmax]) == 1  # logits
    assert len(seen_reused[REUSED_TWICE]) == 1  # W, read by @, * and ** (three parts)
