// What the labs read off a trace (no DOM): every backward contribution with the timeline frame
// that shows it, when a lost one was overwritten, and when each node's gradient is settled.

import { TraceMemo } from "../core/trace-memo.js";
import { framesOf, traceIndex } from "../core/frames.js";

const cache = new TraceMemo("contributions"); // per trace: core/trace-memo.js says why not a WeakMap

/**
 * `{items, lastFrame}` for `trace`: items are `{frame, consumer, c, overwrittenAt}` in timeline
 * order (`c` the API contribution, `consumer` the visited node's id, `overwrittenAt` the frame of
 * the next contribution into the same node, or null); lastFrame: node id → frame of its last one.
 */
export function contributionsOf(trace) {
  let facts = cache.get(trace);
  if (facts) return facts;
  const items = [];
  framesOf(trace).forEach((frame, i) => {
    const step = trace.steps.at(frame.step);
    if (step.phase === "backward" && frame.upto >= 1) {
      items.push({ frame: i, consumer: step.node, c: step.contributions[frame.upto - 1], overwrittenAt: null });
    }
  });
  const lastFrame = new Map();
  const latest = new Map();
  for (const item of items) {
    const before = latest.get(item.c.to);
    if (before) before.overwrittenAt = item.frame;
    latest.set(item.c.to, item);
    lastFrame.set(item.c.to, item.frame);
  }
  facts = { items, lastFrame };
  cache.set(trace, facts);
  return facts;
}

/** True when the trace runs a teaching variant (the = bug or a chosen visit order). */
export function isVariant(trace) {
  return Boolean(trace && (trace.mode === "overwrite" || trace.order));
}

export function sameNumber(a, b) {
  if (typeof a !== "number" || typeof b !== "number") return String(a) === String(b);
  return a === b || Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b));
}

/** Is node `id`'s gradient final at frame `i` (its last contribution shown, or the end)? */
export function isSettled(trace, id, i, finalGrads = false) {
  const last = framesOf(trace).length - 1;
  if (finalGrads || i >= last) return true;
  const frame = contributionsOf(trace).lastFrame.get(id);
  return frame !== undefined && i >= frame;
}

/** Nodes (not constants) whose variant gradient differs from the correct one. */
export function wrongNodes(trace) {
  return trace.nodes.filter((n) => n.kind !== "const" && !sameNumber(n.grad, n.correct_grad));
}

export function nodeById(trace, id) {
  return traceIndex(trace).nodeById.get(id);
}
