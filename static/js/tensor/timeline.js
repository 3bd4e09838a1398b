// A tensor program's timeline (docs/api.md, TensorStep): what step i shows, read from the reply
// alone (no DOM, no globals), so that stepping back restores exactly the earlier state. One
// position a step: the forward steps, the seed, the backward steps.

import { phaseLabel } from "../core/frames.js";
import { t } from "../core/i18n.js";

const indexCache = new WeakMap();

/** Lookups computed once per reply: nodes by id, each op's forward step, the backward steps
 *  that pass each tensor gradient, the phases' ranges, the edges (input → op, once each). */
export function tensorIndex(reply) {
  let index = indexCache.get(reply);
  if (index) return index;
  const nodeById = new Map(reply.nodes.map((node) => [node.id, node]));
  const forwardStep = new Map();
  const passedAt = new Map(); // tensor id → [backward step index, …]
  const phases = {};
  reply.steps.forEach((step, i) => {
    const range = (phases[step.phase] ??= { first: i, last: i });
    range.last = i;
    if (step.phase === "forward") forwardStep.set(step.node, i);
    for (const passed of step.grads ?? []) {
      if (!passedAt.has(passed.input)) passedAt.set(passed.input, []);
      passedAt.get(passed.input).push(i);
    }
  });
  const edges = [];
  for (const node of reply.nodes) {
    for (const input of new Set(node.inputs)) edges.push({ id: `${input}>${node.id}`, source: input, target: node.id });
  }
  index = { nodeById, forwardStep, passedAt, phases, edges };
  indexCache.set(reply, index);
  return index;
}

/** Nested lists of one shape, added element by element. */
function addNested(a, b) {
  if (Array.isArray(a)) return a.map((x, k) => addNested(x, b[k]));
  return Number(a) + Number(b);
}

/**
 * What step `i` shows: `data(id)` (nested lists, undefined before an op's forward step),
 * `grad(id)` (undefined until the backward pass reaches the tensor: the seed for the root, then
 * what the ops that read it passed so far, its final `grad` once the last has), `current` (the
 * step's tensor), `arriving` (the ids whose gradient this backward step passes), `edges(id)`:
 * "forward-active" | "backward-active" | "forward" | "backward" | undefined.
 * `finalGrads`: every gradient at once.
 */
export function tensorViewAt(reply, i, { finalGrads = false } = {}) {
  const { nodeById, forwardStep, passedAt, phases } = tensorIndex(reply);
  const at = Math.max(0, Math.min(i, reply.steps.length - 1));
  const step = reply.steps[at] ?? null;
  const computed = (id) => nodeById.get(id)?.kind !== "op" || (forwardStep.get(id) ?? Infinity) <= at;
  const seed = phases.seed?.first ?? Infinity;
  const gradOf = (id) => {
    const node = nodeById.get(id);
    if (!node || node.grad === null || node.kind === "const") return undefined;
    if (finalGrads) return node.grad;
    if (id === reply.root) return at >= seed ? node.grad : undefined;
    const passed = (passedAt.get(id) ?? []).filter((k) => k <= at);
    if (!passed.length) return undefined;
    if (passed.length === (passedAt.get(id) ?? []).length) return node.grad;
    // Some of its readers have passed their part: their sum so far.
    const parts = passed.map((k) => reply.steps[k].grads.find((g) => g.input === id).grad);
    return parts.reduce(addNested);
  };
  const arriving = step?.phase === "backward" ? (step.grads ?? []).map((g) => g.input) : [];
  const edgeOf = (edge) => {
    const forwardAt = forwardStep.get(edge.target) ?? Infinity;
    const back = (passedAt.get(edge.source) ?? []).filter((k) => reply.steps[k].node === edge.target)[0] ?? Infinity;
    if (back === at) return "backward-active";
    if (back < at) return "backward";
    if (forwardAt === at) return "forward-active";
    if (forwardAt < at) return "forward";
    return undefined;
  };
  return {
    data: (id) => (computed(id) ? nodeById.get(id)?.data : undefined),
    grad: gradOf,
    computed,
    current: step?.node ?? null,
    phase: step?.phase ?? "",
    arriving,
    edge: edgeOf,
  };
}

/** `{phase, position, count}` of step i ("backward 2 / 5"), as core/frames.js phaseAt gives. */
export function tensorPhaseAt(reply, i) {
  const step = reply.steps[i];
  if (!step) return { phase: "", position: 0, count: 0, part: 0, parts: 0 };
  const range = tensorIndex(reply).phases[step.phase];
  return { phase: step.phase, position: i - range.first + 1, count: range.last - range.first + 1, part: 0, parts: 0 };
}

/** The longest phase label the reply can show (the transport sizes its label so). */
export function widestTensorPhaseLabel(reply) {
  const counts = Object.entries(tensorIndex(reply).phases).map(([phase, { first, last }]) => [phase, last - first + 1]);
  return Math.max(0, ...counts.map(([phase, count]) => phaseLabel({ phase, position: count, count }).length));
}

/** `3×3`, `27` (one dim), a number's shape in words. */
export function shapeText(shape) {
  return shape.length ? shape.join("\u00d7") : t("ui.tensor.one_number");
}

/** The name of a tensor's gradient as the rules write it: `dW`, `d(X @ W)`. */
export function gradName(node) {
  return node.name ? `d${node.name}` : `d(${node.label})`;
}

/** The name of a tensor in a formula: its name, else its expression. */
export const tensorName = (node) => node.name || node.label;

/** The narration of step i: what the op made, the seed, or the rules a backward step applied. */
export function tensorNarration(reply, i) {
  const step = reply.steps[i];
  if (!step) return "";
  const { nodeById } = tensorIndex(reply);
  const node = nodeById.get(step.node);
  if (step.phase === "forward") {
    const inputs = node.inputs.map((id) => tensorName(nodeById.get(id))).join(", ");
    return t("ui.tensor.forward", { name: tensorName(node), label: node.label, shape: shapeText(node.shape), inputs });
  }
  if (step.phase === "seed") return t("ui.tensor.seed", { grad: gradName(node), name: tensorName(node) });
  const rules = (step.grads ?? []).map((g) => g.rule).join("; ");
  return rules ? t("ui.tensor.backward", { label: node.label, rules }) : t("ui.tensor.backward_none", { label: node.label });
}

/**
 * The reused tensors of `reply` (read by two ops or more): `{tensor, parts: [{op, grad}],
 * grad}`, the parts in the order the backward pass brought them; `grad` the reply's (their sum).
 */
export function reusedTensorsOf(reply) {
  const { nodeById, passedAt } = tensorIndex(reply);
  const reused = [];
  for (const [id, frames] of passedAt) {
    if (frames.length < 2) continue;
    const parts = frames.map((k) => ({ op: reply.steps[k].node, grad: reply.steps[k].grads.find((g) => g.input === id).grad }));
    reused.push({ tensor: nodeById.get(id), parts, grad: nodeById.get(id).grad });
  }
  return reused;
}
