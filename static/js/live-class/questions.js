// What a teacher can ask the class at a frame, and where a following student's timeline waits
// while that question is open (no DOM). A value can be asked until the pulse shows it: a node's
// data until its forward step, its gradient until its first contribution arrives, one edge's
// contribution until it is added. On a tensor program (its reply, kind "tensor"), one cell of a
// tensor: an op's data until its forward step, a gradient until the first op passes it back
// (the root's: the seed).

import { frameOfStep, framesOf, traceIndex } from "../core/frames.js";
import { formulaName } from "../core/names.js";
import { contributionsOf } from "../labs/contributions.js";
import { gradName, shapeText, tensorIndex, tensorName } from "../tensor/timeline.js";

/** Tensors of at most this many cells offer them to ask (as the tensor predict lab's). */
const MAX_CELLS = 64;

/** The tensor `ref` names in `reply`: its id (`t3`), else the last tensor of that name. */
function tensorOf(reply, ref) {
  return tensorIndex(reply).nodeById.get(ref) ?? reply.nodes.findLast((n) => n.name === ref) ?? null;
}

/** The step at which a tensor question ({kind, tensor}) is first shown, or null. */
function tensorRevealFrame(reply, { kind, tensor }) {
  const node = tensorOf(reply, tensor);
  if (!node) return null;
  const { forwardStep, passedAt, phases } = tensorIndex(reply);
  if (kind === "data") return forwardStep.get(node.id) ?? null;
  if (node.id === reply.root) return phases.seed?.first ?? null;
  const passed = passedAt.get(node.id);
  return passed?.length ? Math.min(...passed) : null;
}

/** `W[1,2]`, `dW[1,2]`: a tensor's name, or its gradient's, with a cell's index (none for one number). */
const cellText = (name, index) => (index.length ? `${name}[${index.join(",")}]` : name);
const dataName = (node) => (node.name || `(${node.label})`);

/** Every index of `shape`, row-major (`[[]]` for one number). */
function indices(shape) {
  return shape.reduce((all, size) => all.flatMap((head) => Array.from({ length: size }, (_, i) => [...head, i])), [[]]);
}

/**
 * The cells of `reply`'s tensors not shown yet at step `step`, in the order the pulse reaches
 * them: `[{kind, tensor, index, label, group, frame}]` (label `dW[1,2]` or `h[0,2]`; group the
 * tensor's, `dW · 2×3`). Tensors of more than MAX_CELLS cells are left out.
 */
export function askableCells(reply, step) {
  if (!reply) return [];
  const asks = [];
  for (const node of reply.nodes) {
    const cells = node.shape.reduce((n, size) => n * size, 1);
    if (node.grad === null || node.kind === "const" || cells > MAX_CELLS) continue;
    const kinds = node.kind === "op" ? ["data", "grad"] : ["grad"];
    for (const kind of kinds) {
      const frame = tensorRevealFrame(reply, { kind, tensor: node.id });
      if (frame === null || frame <= step) continue;
      const name = kind === "grad" ? gradName(node) : dataName(node);
      const group = `${name} · ${shapeText(node.shape)}`;
      for (const index of indices(node.shape)) {
        asks.push({ kind, tensor: node.id, index, label: cellText(name, index), group, frame });
      }
    }
  }
  return asks.sort((a, b) => a.frame - b.frame);
}

/**
 * What a student reads under a tensor gradient question ({tensor, index, label}) on `reply`:
 * `{label, root, cell}` (`dW[1,2]`, `loss`, `W[1,2]`), or null (not a gradient cell, or the
 * program is not shown yet).
 */
export function cellWords(reply, question) {
  if (!reply || reply.kind !== "tensor" || question?.tensor == null || question.kind !== "grad") return null;
  const node = tensorOf(reply, question.tensor);
  const root = tensorIndex(reply).nodeById.get(reply.root);
  if (!node || !root) return null;
  return { label: question.label, root: tensorName(root), cell: cellText(dataName(node), question.index) };
}

/** The frame at which `question` ({kind, node, edge}, or {kind, tensor, index}) is first shown in `trace` (a scalar trace or a tensor program's reply), or null. */
export function revealFrame(trace, question) {
  if (!trace || !question) return null;
  if ((question.tensor != null) !== (trace.kind === "tensor")) return null; // asked of another program
  if (question.tensor != null) return tensorRevealFrame(trace, question);
  if (question.kind === "data") {
    const step = traceIndex(trace).forwardStep.get(question.node);
    return step === undefined ? null : frameOfStep(trace, step);
  }
  const item = contributionsOf(trace).items.find((it) =>
    question.kind === "grad" ? it.c.to === question.node : it.c.edge === question.edge);
  return item ? item.frame : null;
}

/** The furthest frame a student may see while `question` is open (null: no limit). */
export function holdFrame(trace, question) {
  if (!question?.open) return null;
  const frame = revealFrame(trace, question);
  return frame === null ? null : Math.max(0, frame - 1);
}

/**
 * The values not shown yet at frame `step`, in the order the pulse reaches them:
 * `[{kind, node, edge, label, frame}]` (label: `data[c]`, `grad[a]`, `grad[a] ← c`).
 */
export function askable(trace, step) {
  if (!trace) return [];
  const { nodeById } = traceIndex(trace);
  const name = (id) => formulaName(nodeById.get(id));
  const asks = [];
  const frames = framesOf(trace);
  frames.forEach((frame, i) => {
    const s = trace.steps.at(frame.step);
    if (i <= step || s.phase !== "forward" || nodeById.get(s.node)?.kind !== "op") return;
    asks.push({ kind: "data", node: s.node, edge: null, label: `data[${name(s.node)}]`, frame: i });
  });
  const reached = new Set();
  for (const { frame, c, consumer } of contributionsOf(trace).items) {
    if (nodeById.get(c.to)?.kind === "const") continue;
    if (!reached.has(c.to)) {
      reached.add(c.to);
      if (frame > step) asks.push({ kind: "grad", node: c.to, edge: null, label: `grad[${name(c.to)}]`, frame });
    }
    if (frame > step) asks.push({ kind: "contribution", node: c.to, edge: c.edge, label: `grad[${name(c.to)}] \u2190 ${name(consumer)}`, frame });
  }
  return asks.sort((a, b) => a.frame - b.frame);
}
