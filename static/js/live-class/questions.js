// What a teacher can ask the class at a frame, and where a following student's timeline waits
// while that question is open (no DOM). A value can be asked until the pulse shows it: a node's
// data until its forward step, its gradient until its first contribution arrives, one edge's
// contribution until it is added.

import { frameOfStep, framesOf, traceIndex } from "../core/frames.js";
import { formulaName } from "../core/names.js";
import { contributionsOf } from "../labs/contributions.js";

/** The frame at which `question` ({kind, node, edge}) is first shown, or null. */
export function revealFrame(trace, question) {
  if (!trace || !question) return null;
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
