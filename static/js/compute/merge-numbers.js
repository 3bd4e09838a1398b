// New numbers for a trace the page already has: a numbers reply (POST /api/values, the arrays of
// docs/api.md "The numbers reply") merged into the trace of the same structure gives the trace
// /api/graph would answer for the new values. Everything that does not depend on the values
// (layout, names, spans, the sort's steps, templates) is shared with the old trace. Its nodes,
// edges and steps are made when first read, each from its drawing's (the trace the first merge of
// the line started from) and the reply's numbers: a slider move on micrograd's demo reads a
// hundred of its 65,818 nodes, and made every one of them. A node, edge, step or leaf whose numbers
// are its drawing's is the drawing's object itself. The reply's arrays are JSON's (the server's)
// or Float64Arrays (the page's own numbers, compute/evaluator.js evaluateNumbers); what is made of
// them holds JSON's numbers either way (`jsonNumber`). Narration is filled from the templates by
// whoever shows it (core/narration.js `narrationOf`).

import { TraceMemo } from "../core/trace-memo.js";
import { toJson } from "./json-numbers.js";
import { stepColumns } from "../core/step-columns.js";

const NO_WARNINGS = [];

/** How long a slider's numbers rest (a drag pauses) before what reads the whole graph of them is
 *  written: a big graph's overview counts (graph/overview-view.js) and gradient table
 *  (controls/grad-table.js) each take a frame's time or more on micrograd's demo. */
export const NUMBERS_REST_MS = 150;
const bases = new TraceMemo("drawing"); // a merged trace → the trace the first merge of its line started from
const replies = new TraceMemo("reply"); // a merged trace → the numbers reply merged into it
const stepNumbers = new TraceMemo("step numbers"); // a merge's steps → {reply, visitOf, firstOf} (mergedSteps)

/**
 * Give `object` a property `key` computed by `compute()` when first read, then kept: a slider
 * move's gradient check and gradient flags (compute/evaluator.js) are computed only if something shows
 * them. Enumerable, so JSON and spreads see it (a spread computes it: `copied` does not). The
 * value is kept by the getter, so a copy that took the getter (`copied`, `takeProperty`) computes
 * it once with the object, not once a read.
 */
export function lazily(object, key, compute) {
  let value;
  let computed = false;
  Object.defineProperty(object, key, {
    configurable: true,
    enumerable: true,
    get() {
      if (!computed) [value, computed] = [compute(), true];
      return value;
    },
  });
  return object;
}

/** A shallow copy of `object` that keeps its `lazily` properties lazy (a spread computes them), and
 *  leaves behind what is attached to it (core/trace-memo.js: a copy is another object). */
export function copied(object) {
  const copy = {};
  for (const key of Object.getOwnPropertyNames(object)) Object.defineProperty(copy, key, Object.getOwnPropertyDescriptor(object, key));
  return copy;
}

/** Set `key` of `target` to `source`'s, as lazy as it is there. */
function takeProperty(target, source, key) {
  Object.defineProperty(target, key, Object.getOwnPropertyDescriptor(source, key));
}

/**
 * The trace whose structure `trace` shares (its steps, frames and events alike, numbers aside):
 * the trace the first merge of its line started from, or `trace` itself.
 */
export function drawingOf(trace) {
  return bases.get(trace) ?? trace;
}

/**
 * Record that `trace` is drawn as `like` with other numbers: graph/groups.js's showing of a merged trace
 * in an arrangement is that arrangement's showing of its drawing (their steps and edges alike).
 */
export function drawnLike(trace, like) {
  bases.set(trace, drawingOf(like));
}

/**
 * Whether traces `a` and `b` differ in their numbers alone: the same trace, or two merges
 * (mergeNumbers) of one trace. Their cards, edges, steps and layout are alike: a view of both
 * redraws the numbers that changed, not the graph.
 */
export function sameDrawing(a, b) {
  if (a === b) return true;
  return Boolean(a && b) && drawingOf(a) === drawingOf(b);
}

/** Whether `xs` is an array of a reply's numbers: JSON's, or a Float64Array of the page's own. */
const isNumbers = (xs) => Array.isArray(xs) || xs instanceof Float64Array;

/** A reply's number as JSON has it: a Float64Array's non-finite numbers as their strings. */
export const jsonNumber = (x) => (typeof x === "number" ? toJson(x) : x);

/** Number `i` of `array` (a reply's, of either kind) as JSON has it. */
export const numberAt = (array, i) => jsonNumber(array[i]);

/** Visit `visit`'s step_grad of `reply` as JSON has it, without making the whole array where the
 *  reply can say one (its `stepGradAt`, of `stepGradAt.count` visits: compute/evaluator.js
 *  evaluateNumbers); undefined past the visits. */
export const stepGradAt = (reply, visit) => {
  const one = reply.stepGradAt;
  if (!one) return numberAt(reply.step_grad, visit);
  return visit >= 0 && visit < one.count ? jsonNumber(one(visit)) : undefined;
};

function sameWarnings(a, b) {
  if (a === b) return true;
  if (!a || !b || a.length !== b.length) return false;
  return a.every((w, i) => w.type === b[i].type && w.message === b[i].message);
}

/**
 * Each array the merge reads, checked against the trace's counts (a mismatch is a bug, never
 * silently merged). A forward-mode trace has no backward steps (its reply's backward arrays are
 * empty); its tangents go into the nodes and the tangent steps.
 */
function checkShape(trace, reply, contributions, visits) {
  const expected = {
    data: trace.nodes.length, grad: trace.nodes.length, local_grad: trace.edges.length,
    step_grad: visits, contribution: contributions, grad_before: contributions, grad_after: contributions,
  };
  if (trace.pass === "forward") Object.assign(expected, { tangent: trace.nodes.length, tangent_contribution: trace.edges.length });
  if (reply.correct_grad !== null && reply.correct_grad !== undefined) expected.correct_grad = trace.nodes.length;
  for (const [array, count] of Object.entries(expected)) {
    // An array made when first read (compute/evaluator.js evaluateNumbers) is of the structure's shape.
    if (Object.getOwnPropertyDescriptor(reply, array)?.get) continue;
    if (!isNumbers(reply[array]) || reply[array].length !== count) {
      throw new Error(`the numbers reply's ${array} does not fit the trace (${count} expected)`);
    }
  }
}

/**
 * What a merge reads of a drawing's structure, found once per drawing (a slider move merges into
 * the same one each time): node id → index, edge id → index, the backward pass's counts, for
 * each contribution of a backward or tangent step its edge's index, and for each backward step
 * its visit (`visitOf`, its step_grad's index) and its first contribution's index in the
 * flattened arrays (`firstOf`); -1 for the other steps.
 */
const structures = new WeakMap();

function structureOf(trace) {
  const base = drawingOf(trace);
  let found = structures.get(base);
  if (found) return found;
  const position = new Map(base.nodes.map((node, i) => [node.id, i]));
  const edgeIndex = new Map(base.edges.map((edge, i) => [edge.id, i]));
  let [contributions, visits] = [0, 0];
  const steps = stepColumns(base.steps); // read without making the steps' objects
  const visitOf = new Int32Array(steps.length).fill(-1);
  const firstOf = new Int32Array(steps.length).fill(-1);
  const edgesOf = Array.from({ length: steps.length }, (_, i) => {
    const phase = steps.phaseAt(i);
    const count = steps.contributionCount(i);
    if (phase === "backward") {
      [visitOf[i], firstOf[i]] = [visits, contributions];
      contributions += count;
      visits += 1;
    }
    return phase === "backward" || phase === "tangent" ? Array.from({ length: count }, (_, j) => edgeIndex.get(steps.contributionEdge(i, j))) : null;
  });
  found = { position, edgeIndex, contributions, visits, edgesOf, visitOf, firstOf };
  structures.set(base, found);
  return found;
}

/** `c` with `numbers` (an object of the same keys' new values), or `c` itself when none changed. */
function withNumbers(c, numbers) {
  for (const key in numbers) if (!Object.is(c[key], numbers[key])) return { ...c, ...numbers };
  return c;
}

/** Node `node` (node i of the drawing) with `reply`'s data, grads and warnings, or `node` itself
 *  when they are its own. */
function mergedNode(node, i, reply) {
  const { data, grad } = reply;
  const correctGrad = reply.correct_grad ?? grad;
  const warnings = reply.node_warnings?.[node.id] ?? NO_WARNINGS;
  const [value, nodeGrad, correct] = [numberAt(data, i), numberAt(grad, i), numberAt(correctGrad, i)];
  // Forward mode's ∂node/∂wrt, when the reply has them (null in reverse mode).
  const tangent = reply.tangent === null || reply.tangent === undefined ? node.tangent : numberAt(reply.tangent, i);
  if (Object.is(node.data, value) && Object.is(node.grad, nodeGrad) && Object.is(node.tangent, tangent)
    && Object.is(node.correct_grad, correct) && sameWarnings(node.warnings, warnings)) return node;
  return {
    ...node, data: value, grad: nodeGrad, correct_grad: correct, tangent,
    warnings: warnings === NO_WARNINGS ? [] : warnings,
  };
}

/** Edge `edge` (edge i of the drawing) with `reply`'s local derivative, or `edge` itself. */
function mergedEdge(edge, i, reply) {
  const local = numberAt(reply.local_grad, i);
  return Object.is(edge.local_grad, local) ? edge : { ...edge, local_grad: local };
}

/** A forward-mode step with `reply`'s value, tangent and the contributions of its input edges. */
function mergedTangentStep(step, reply, position, edges) {
  const { data, tangent, local_grad: localGrad, tangent_contribution: added } = reply;
  let same = true;
  const contributions = step.contributions.map((c, j) => {
    const edge = edges[j];
    const merged = withNumbers(c, {
      tangent_in: numberAt(tangent, position.get(c.from)), local: numberAt(localGrad, edge), contribution: numberAt(added, edge),
    });
    same &&= merged === c;
    return merged;
  });
  const at = position.get(step.node);
  const [value, nodeTangent] = [numberAt(data, at), numberAt(tangent, at)];
  return same && Object.is(step.data, value) && Object.is(step.tangent, nodeTangent)
    ? step : { ...step, data: value, tangent: nodeTangent, contributions };
}

/** Step `step` (step i of the drawing) with `reply`'s numbers, or `step` itself when they are its own. */
function mergedStep(step, i, reply, { position, edgesOf, visitOf, firstOf }) {
  if (step.phase === "forward") {
    const value = numberAt(reply.data, position.get(step.node));
    return Object.is(step.data, value) ? step : { ...step, data: value };
  }
  if (step.phase === "tangent") return mergedTangentStep(step, reply, position, edgesOf[i]);
  if (step.phase !== "backward") return step; // the sort and the seed: no numbers (the seed's grad is 1)
  const upstream = stepGradAt(reply, visitOf[i]);
  const edges = edgesOf[i];
  let same = Object.is(step.grad, upstream);
  // A contribution's upstream is its visit's grad, its local its edge's local_grad. The
  // contributions' arrays are read only for a step that has some (a page's reply records them
  // when first read: a leaf's visit, the timeline's last step, needs none).
  const contributions = step.contributions.map((c, j) => {
    const k = firstOf[i] + j; // its index in the flattened arrays
    const merged = withNumbers(c, {
      upstream, local: numberAt(reply.local_grad, edges[j]), contribution: numberAt(reply.contribution, k),
      grad_before: numberAt(reply.grad_before, k), grad_after: numberAt(reply.grad_after, k),
    });
    same &&= merged === c;
    return merged;
  });
  return same ? step : { ...step, grad: upstream, contributions };
}

/** The array index `key` names (a property key), or -1. */
function indexIn(key, length) {
  if (typeof key !== "string" || key === "" || key.charCodeAt(0) > 57) return -1; // not a digit
  const i = Number(key);
  return Number.isInteger(i) && i >= 0 && i < length && String(i) === key ? i : -1;
}

/**
 * An array of `length` items to whoever reads it (indexing, length, map, iteration, JSON), item i
 * made by `make(i)` when first read, then kept: a merge's nodes, edges and steps. `target` is the
 * empty array behind it (its methods are an Array's; core/trace-memo.js attaches to it): its
 * length is the proxy's to say (set on the target, it allocated the whole array: 2 MB a move on
 * micrograd's demo). Never changed.
 */
function lazyArray(target, length, make) {
  const made = new Map(); // most reads of a slider move's trace are a few items of many thousands
  const at = (i) => {
    let item = made.get(i);
    if (item === undefined) made.set(i, (item = make(i)));
    return item;
  };
  return new Proxy(target, {
    get(array, key, receiver) {
      if (key === "length") return length;
      const i = indexIn(key, length);
      return i < 0 ? Reflect.get(array, key, receiver) : at(i);
    },
    has: (array, key) => indexIn(key, length) >= 0 || Reflect.has(array, key),
    getOwnPropertyDescriptor(array, key) {
      if (key === "length") return { value: length, writable: true, enumerable: false, configurable: false };
      const i = indexIn(key, length);
      return i < 0 ? Reflect.getOwnPropertyDescriptor(array, key) : { value: at(i), writable: true, enumerable: true, configurable: true };
    },
    ownKeys: () => Array.from({ length }, (_, i) => String(i)).concat("length"),
    set: () => false, // a trace is never changed
    deleteProperty: () => false,
    defineProperty: () => false,
  });
}

/**
 * The steps of `drawing` with `reply`'s numbers, each merged when first read. A slider move reads
 * few of them (the player reads the numbers from the reply: `mergedNumbersOf`), where merging all
 * of them made a few thousand objects a move. Steps hold templates, not narration: `narrationOf`
 * (core/narration.js) fills the one shown.
 */
function mergedSteps(drawing, reply, structure) {
  const steps = drawing.steps;
  const { visitOf, firstOf } = structure;
  const target = [];
  stepNumbers.set(target, { reply, visitOf, firstOf }); // read through the proxy (a symbol: not an index)
  return lazyArray(target, steps.length, (i) => mergedStep(steps.at(i), i, reply, structure));
}

/**
 * Where the numbers of `steps` (a trace's steps) are, when they are a merge's: {reply, visitOf,
 * firstOf}, step k's step_grad is `reply.step_grad[visitOf[k]]` and its contribution j's numbers
 * are at `firstOf[k] + j` of the flattened arrays. Undefined for steps that are not a merge's.
 * What the player reads a slider move's numbers from, without merging the steps.
 */
export function mergedNumbersOf(steps) {
  return stepNumbers.get(steps);
}

/**
 * The trace `trace` would be for the values of `reply` (a numbers reply of the same structure):
 * deep-equal to /api/graph's answer for those values, except `layout.cached`. `trace` is not
 * changed; what the values do not change is shared with it.
 */
export function mergeNumbers(trace, reply) {
  const structure = structureOf(trace);
  const { position, contributions, visits } = structure;
  checkShape(trace, reply, contributions, visits);
  const drawing = drawingOf(trace);
  const leaves = drawing.leaves.map((leaf) => {
    const value = numberAt(reply.data, position.get(leaf.id));
    return Object.is(leaf.value, value) ? leaf : { ...leaf, value };
  });
  const merged = Object.assign(copied(trace), {
    nodes: lazyArray([], drawing.nodes.length, (i) => mergedNode(drawing.nodes[i], i, reply)),
    edges: lazyArray([], drawing.edges.length, (i) => mergedEdge(drawing.edges[i], i, reply)),
    leaves, steps: mergedSteps(drawing, reply, structure), warnings: reply.warnings,
  });
  takeProperty(merged, reply, "gradcheck");
  if (Object.hasOwn(reply, "grad_flags")) takeProperty(merged, reply, "grad_flags"); // lazy in the page's replies
  if (reply.structure !== undefined) merged.structure = reply.structure;
  bases.set(merged, drawing);
  replies.set(merged, reply);
  return merged;
}

/**
 * The number arrays of `trace` as POST /api/values names them: data, grad, correct_grad (null
 * when it is grad), local_grad, step_grad, contribution, grad_before, grad_after. A merged trace's
 * are the reply's it was merged with (the same numbers: mergeNumbers put them there), of either
 * kind: JSON's, or the page's Float64Arrays (read a number with `numberAt` where JSON's is needed),
 * those the reply makes when first read made when first read here too (a spread reads them all).
 */
export function numberArrays(trace) {
  const reply = replies.get(trace);
  if (reply) {
    const correct = reply.correct_grad ?? null;
    const same = correct !== null && correct.every((x, i) => Object.is(numberAt(correct, i), numberAt(reply.grad, i)));
    const arrays = { data: reply.data, grad: reply.grad, correct_grad: same ? null : correct };
    for (const key of ["local_grad", "step_grad", "contribution", "grad_before", "grad_after"]) takeProperty(arrays, reply, key);
    if (reply.stepGradAt) takeProperty(arrays, reply, "stepGradAt"); // a step's grad read alone
    return arrays;
  }
  if (trace.steps.numbers) return stepListArrays(trace, trace.steps.numbers().reply);
  const grad = trace.nodes.map((node) => node.grad);
  const correctGrad = trace.nodes.map((node) => node.correct_grad ?? node.grad);
  const backward = trace.steps.filter((step) => step.phase === "backward");
  const contributions = backward.flatMap((step) => step.contributions ?? []);
  return {
    data: trace.nodes.map((node) => node.data),
    grad,
    correct_grad: correctGrad.every((x, i) => Object.is(x, grad[i])) ? null : correctGrad,
    local_grad: trace.edges.map((edge) => edge.local_grad),
    step_grad: backward.map((step) => step.grad),
    contribution: contributions.map((c) => c.contribution),
    grad_before: contributions.map((c) => c.grad_before),
    grad_after: contributions.map((c) => c.grad_after),
  };
}

/** numberArrays of a trace read by core/step-columns.js (its backward numbers are its columns),
 *  each of the others made when first read: the overview reads `data` alone, a step's narration
 *  the few it names. */
function stepListArrays(trace, columns) {
  const arrays = {};
  lazily(arrays, "data", () => trace.nodes.map((node) => node.data));
  lazily(arrays, "grad", () => trace.nodes.map((node) => node.grad));
  lazily(arrays, "correct_grad", () => {
    const correctGrad = trace.nodes.map((node) => node.correct_grad ?? node.grad);
    return correctGrad.every((x, i) => Object.is(x, arrays.grad[i])) ? null : correctGrad;
  });
  lazily(arrays, "local_grad", () => trace.edges.map((edge) => edge.local_grad));
  const { step_grad, contribution, grad_before, grad_after } = columns;
  return Object.assign(arrays, { step_grad, contribution, grad_before, grad_after });
}

/**
 * The numbers reply of `trace` (the inverse of mergeNumbers): its number arrays (numberArrays),
 * gradcheck, warnings, node warnings and gradient flags, as POST /api/values answers. What the page compares its
 * own numbers with (compute/instant-numbers.js).
 */
export function numbersOf(trace) {
  const reply = replies.get(trace);
  const nodeWarnings = {};
  if (reply) {
    // What a merge's nodes hold (mergedNode), without making them.
    for (const [id, warnings] of Object.entries(reply.node_warnings ?? {})) if (warnings?.length) nodeWarnings[id] = warnings;
  } else {
    for (const node of trace.nodes) if (node.warnings?.length) nodeWarnings[node.id] = node.warnings;
  }
  return {
    structure: trace.structure,
    ...numberArrays(trace),
    gradcheck: trace.gradcheck,
    warnings: trace.warnings,
    node_warnings: nodeWarnings,
    grad_flags: trace.grad_flags ?? {},
  };
}
