// What the page shows at position i of the timeline, derived from the steps up to i alone (no DOM,
// no globals), so that stepping back restores exactly the earlier state.
//
// The timeline's positions are *frames*: one per API step, except that a backward step with
// several contributions gets one frame per contribution, so that a gradient visibly accumulates
// (`a*a`: grad[a] reads 3, then 6). `state.step` is a frame index.

import { t } from "./i18n.js";
import { nodeName } from "./names.js";
import { useFunctions } from "../compute/ops.js";
import { TraceMemo } from "./trace-memo.js";
import { drawingOf, mergedNumbersOf, numberAt, sameDrawing } from "../compute/merge-numbers.js";

const indexCache = new TraceMemo("trace index"); // a slider move's trace has its own: core/trace-memo.js
const framesCache = new WeakMap();
const playCache = new WeakMap();

/** [{step, upto}]: frame → API step index and how many of its contributions are shown (once per
 *  drawing: new numbers have the same frames). */
export function framesOf(trace) {
  let frames = framesCache.get(drawingOf(trace));
  if (frames) return frames;
  trace = drawingOf(trace);
  frames = [];
  trace.steps.forEach((step, k) => {
    const count = step.phase === "backward" ? (step.contributions ?? []).length : 0;
    if (count <= 1) frames.push({ step: k, upto: count });
    else for (let j = 1; j <= count; j++) frames.push({ step: k, upto: j });
  });
  framesCache.set(trace, frames);
  return frames;
}

/** The first frame showing API step `stepIndex`. */
export function frameOfStep(trace, stepIndex) {
  return framesOf(trace).findIndex((f) => f.step === stepIndex);
}

/**
 * Lookups computed once per trace: nodes/edges by id, phase ranges, each node's forward and backward
 * step, the edges into each node (for their ids and count: a merged trace shares its drawing's).
 */
export function traceIndex(trace) {
  let index = indexCache.get(trace);
  if (index) return index;
  useFunctions(trace); // the rows of its own functions, for its calls' cards and formulas
  const drawing = drawingOf(trace);
  if (drawing !== trace) {
    // New numbers of a drawing (a slider move): its nodes, steps and edges are where they were.
    const { nodeAt, edgeAt, inputEdges, phases, forwardStep, backwardStep } = traceIndex(drawing);
    const [nodeById, edgeById] = [new ById(trace.nodes, nodeAt), new ById(trace.edges, edgeAt)];
    index = { nodeAt, edgeAt, nodeById, edgeById, inputEdges, phases, forwardStep, backwardStep };
    indexCache.set(trace, index);
    return index;
  }
  const nodeAt = new Map(trace.nodes.map((n, i) => [n.id, i]));
  const edgeAt = new Map(trace.edges.map((e, i) => [e.id, i]));
  const [nodeById, edgeById] = [new ById(trace.nodes, nodeAt), new ById(trace.edges, edgeAt)];
  const inputEdges = new Map(trace.nodes.map((n) => [n.id, []]));
  for (const edge of trace.edges) inputEdges.get(edge.target)?.push(edge);
  const phases = {};
  const forwardStep = new Map();
  const backwardStep = new Map();
  trace.steps.forEach((step, i) => {
    const range = (phases[step.phase] ??= { first: i, last: i });
    range.last = i;
    if (step.phase === "forward") forwardStep.set(step.node, i);
    if (step.phase === "backward") backwardStep.set(step.node, i);
  });
  index = { nodeAt, edgeAt, nodeById, edgeById, inputEdges, phases, forwardStep, backwardStep };
  indexCache.set(trace, index);
  return index;
}

/** A trace's nodes or edges by id, as a Map's `get`: through `at` (id → position), which every
 *  trace of one drawing shares, so a slider move's trace builds no map of its own. */
class ById {
  constructor(items, at) {
    this.items = items;
    this.at = at;
  }

  get(id) {
    const i = this.at.get(id);
    return i === undefined ? undefined : this.items[i];
  }
}

/**
 * `{phase, position, count, part, parts}` at frame i: "forward 3 / 5" is API step 3 of 5 in its
 * phase (1-based); `part` of `parts` counts the contributions of a multi-contribution step.
 */
export function phaseAt(trace, i) {
  const frame = framesOf(trace)[i];
  const step = frame && trace.steps[frame.step];
  if (!step) return { phase: "", position: 0, count: 0, part: 0, parts: 0 };
  const range = traceIndex(trace).phases[step.phase];
  const parts = step.phase === "backward" ? (step.contributions ?? []).length : 0;
  return {
    phase: step.phase,
    position: frame.step - range.first + 1,
    count: range.last - range.first + 1,
    part: frame.upto,
    parts,
  };
}

const PHASE_LABELS = { topo: "ui.phase.topo", forward: "ui.phase.forward", seed: "ui.phase.seed", backward: "ui.phase.backward", tangent: "ui.phase.tangent" };

/** "backward 3 / 7" in the page's language ("seed" alone). */
export function phaseLabel({ phase, position, count }) {
  if (!phase) return "";
  return PHASE_LABELS[phase] ? t(PHASE_LABELS[phase], { position, count }) : `${phase} ${position} / ${count}`;
}

// Where an event's number is read in the trace shown (a grad event's `at`): the seed's grad or a
// tangent step's tangent, else contribution `at` of the step (its grad_after).
const STEP_GRAD = -1;
const STEP_TANGENT = -2;

/**
 * What the player needs to show any frame by lookups alone, computed once per drawing (a slider's
 * new numbers share it: compute/merge-numbers.js drawingOf), numbers read from the trace shown (`eventGrad`,
 * `eventContribution`, `forwardValue`):
 *   dataFrame: op node id → the frame its forward step computes it (its data appears there);
 *   forwardStep: id → that step's index (its data is the value shown);
 *   gradEvents: id → [[frame, step index, at], …] in frame order (the seed, then each
 *               contribution's grad_after: the grad shown from that frame on);
 *   visitFrame: id → the first frame of its backward step;
 *   edgeEvents: edge id → [{frame, until, backward, step, at}] in frame order: forward at its
 *               consumer's forward frame, backward at the frame contribution `at` of step `step`
 *               is shown, active until the last frame of that step;
 *   active: frame → {node, edges}: the current node and the edges lit at that frame;
 *   touched: frame f → [node ids, edge ids] whose drawing may differ between f − 1 and f.
 */
export function playIndex(trace) {
  const drawing = drawingOf(trace);
  let index = playCache.get(drawing);
  if (!index) {
    index = buildPlayIndex(drawing);
    playCache.set(drawing, index);
  }
  return index;
}

function buildPlayIndex(trace) {
  const frames = framesOf(trace);
  const { inputEdges } = traceIndex(trace);
  const dataFrame = new Map();
  const forwardStep = new Map();
  const gradEvents = new Map();
  const visitFrame = new Map();
  const edgeEvents = new Map();
  const active = [];
  const touched = frames.map(() => [[], []]);
  const addEvent = (map, id, event) => {
    const list = map.get(id);
    if (list) list.push(event);
    else map.set(id, [event]);
  };
  let first = 0;
  trace.steps.forEach((step, k) => {
    const count = step.phase === "backward" ? (step.contributions ?? []).length : 0;
    const last = first + Math.max(1, count) - 1;
    if (step.phase === "forward" || step.phase === "tangent") {
      // Forward mode's step computes the node's value and its tangent, shown in the grad row.
      if (step.phase === "tangent") addEvent(gradEvents, step.node, [first, k, STEP_TANGENT]);
      dataFrame.set(step.node, first);
      forwardStep.set(step.node, k);
      const lit = (inputEdges.get(step.node) ?? []).map((e) => e.id);
      // A tangent step's edge shows its term of the chain rule (tangent_in × local): `at` is its
      // contribution; a value's forward edge shows the input's value (at −1).
      const term = new Map((step.contributions ?? []).map((c, j) => [c.edge, j]));
      for (const id of lit) addEvent(edgeEvents, id, { frame: first, until: first, backward: false, step: k, at: term.get(id) ?? -1 });
      active[first] = { node: step.node, edges: lit };
    } else if (step.phase === "seed") {
      addEvent(gradEvents, step.node, [first, k, STEP_GRAD]);
      active[first] = { node: step.node, edges: [] };
    } else if (step.phase === "backward") {
      visitFrame.set(step.node, first);
      const lit = [];
      (step.contributions ?? []).forEach((c, j) => {
        addEvent(gradEvents, c.to, [first + j, k, j]);
        addEvent(edgeEvents, c.edge, { frame: first + j, until: last, backward: true, step: k, at: j });
        lit.push(c.edge);
        active[first + j] = { node: step.node, edges: lit.slice() };
        touched[first + j][0].push(c.to);
      });
      if (count === 0) active[first] = { node: step.node, edges: [] };
    } else {
      for (let f = first; f <= last; f++) active[f] = { node: step.node, edges: [] };
    }
    first = last + 1;
  });
  // Whatever frame f lights, and whatever frame f − 1 lit, may be drawn differently at f.
  frames.forEach((_, f) => {
    for (const at of [active[f], active[f - 1]]) {
      if (!at) continue;
      touched[f][0].push(at.node);
      touched[f][1].push(...at.edges);
    }
  });
  return { dataFrame, forwardStep, gradEvents, visitFrame, edgeEvents, active, touched };
}

/** The grad a grad event ([frame, step index, at]) shows, read from `trace`; `last`: whether it is
 *  its node's last (node `index`'s). */
function eventGrad(trace, [, k, at], merged, last, index) {
  // A node's grad changes at its contributions alone (the seed's root has none): after its last
  // one it is the node's grad, which a slider move's numbers hold without recording every
  // contribution (compute/evaluator.js evaluateNumbers).
  if (merged && at !== STEP_TANGENT && last) return numberAt(merged.reply.grad, index);
  if (merged && at !== STEP_TANGENT && merged.visitOf[k] >= 0) {
    // A slider move's trace: the grad read where its merge would put it (compute/merge-numbers.js), unmerged.
    return at === STEP_GRAD ? numberAt(merged.reply.step_grad, merged.visitOf[k]) : numberAt(merged.reply.grad_after, merged.firstOf[k] + at);
  }
  const step = trace.steps[k];
  if (at === STEP_GRAD) return step.grad;
  if (at === STEP_TANGENT) return step.tangent;
  return step.contributions[at].grad_after;
}

/** The contribution an edge event shows, read from `trace`: a backward step's, or a tangent
 * step's term as one ({upstream: tangent_in, local, contribution}); null for a value's edge. */
function eventContribution(trace, event) {
  if (event.at < 0) return null;
  const c = trace.steps[event.step].contributions[event.at];
  return event.backward ? c : { upstream: c.tangent_in, local: c.local, contribution: c.contribution };
}

/** The last event of `list` at or before frame i (lists are in frame order and short). */
function lastAt(list, i, frameOf) {
  if (!list) return undefined;
  let lo = 0;
  let hi = list.length - 1;
  let found;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (frameOf(list[mid]) <= i) {
      found = list[mid];
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
}

const gradFrame = (event) => event[0];
const edgeFrame = (event) => event.frame;

/** The name of the cards' grad row: `grad`, or in forward mode `∂/∂a` (the tangent by leaf a). */
function gradRowName(trace, nodeById) {
  const wrt = trace.pass === "forward" ? nodeById.get(trace.wrt) : null;
  return wrt ? `\u2202/\u2202${nodeName(wrt)}` : "grad";
}

/**
 * The display state at frame `i`, as lookups (each O(log) in one node's or edge's events, built
 * once per trace by playIndex; no replay of the steps before i):
 *   data.get(id): value shown (undefined = "--"); leaves and consts are known from the start,
 *         an op node's data appears at its forward step.
 *   grad.get(id) / grad.has(id): value shown (undefined = "--"); the root's at the seed, others at
 *         their first contribution, then each contribution's grad_after (accumulating).
 *   computed.has(id) / visited.has(id): forward done / backward visit begun; current: id or null,
 *   edges.get(edgeId): {state: "forward"|"backward"|"forward-active"|"backward-active",
 *                       contribution?, pulse (a dot travels along it now)} or undefined (idle);
 *   active: the ids of the edges lit at this frame (the only ones with an *-active state);
 *   step: the API step shown, stepIndex, shown: how many of its contributions are shown,
 *   frame: the frame shown.
 */
export function viewAt(trace, i, { finalGrads = false } = {}) {
  const { nodeById, nodeAt } = traceIndex(trace);
  const merged = mergedNumbersOf(trace.steps); // a slider move's: its numbers, its steps unmerged
  const play = playIndex(trace);
  const frames = framesOf(trace);
  const at = Math.max(0, Math.min(i, frames.length - 1));
  const frame = frames[at] ?? { step: -1, upto: 0 };
  const shownFrame = frames.length ? at : -1;
  const computed = (id) => (play.dataFrame.get(id) ?? Infinity) <= shownFrame;
  const dataOf = (id) => {
    const node = nodeById.get(id);
    if (!node) return undefined;
    if (node.kind !== "op") return node.data;
    if (!computed(id)) return undefined;
    if (merged) return node.data; // a merge's forward step has its node's data
    const k = play.forwardStep.get(id);
    return (k === undefined ? undefined : trace.steps[k].data) ?? node.data;
  };
  const gradOf = (id) => {
    const node = nodeById.get(id);
    if (!node || node.kind === "const") return undefined; // constants get a grad; the page hides it
    if (finalGrads) return trace.pass === "forward" ? node.tangent : node.grad;
    const events = play.gradEvents.get(id);
    const event = lastAt(events, shownFrame, gradFrame);
    return event ? eventGrad(trace, event, merged, event === events.at(-1), nodeAt.get(id)) : undefined;
  };
  const edgeOf = (id) => {
    const event = lastAt(play.edgeEvents.get(id), shownFrame, edgeFrame);
    if (!event) return undefined;
    const lit = shownFrame <= event.until;
    if (!event.backward) {
      return lit ? { state: "forward-active", contribution: eventContribution(trace, event), pulse: true } : { state: "forward" };
    }
    const contribution = eventContribution(trace, event);
    return lit
      ? { state: "backward-active", contribution, pulse: event.frame === shownFrame }
      : { state: "backward", contribution };
  };
  const step = trace.steps[frame.step];
  return {
    data: { get: dataOf },
    grad: { get: gradOf, has: (id) => gradOf(id) !== undefined },
    computed: { has: computed },
    visited: { has: (id) => (play.visitFrame.get(id) ?? Infinity) <= shownFrame },
    edges: { get: edgeOf },
    active: play.active[shownFrame]?.edges ?? [],
    current: step ? step.node : null, step, stepIndex: frame.step, shown: frame.upto, frame: shownFrame,
    gradRow: gradRowName(trace, nodeById),
  };
}

/**
 * The nodes and edges whose drawing may differ between frames `from` and `to` of `trace`
 * ([node ids, edge ids], with repeats); null when every one may (the whole graph is redrawn).
 * Costs the events between the two frames, not the size of the graph.
 */
export function changedBetween(trace, from, to) {
  const { touched } = playIndex(trace);
  const [a, b] = from < to ? [from, to] : [to, from];
  if (a < 0 || b >= touched.length) return null;
  const nodes = [];
  const edges = [];
  for (let f = a + 1; f <= b; f++) {
    nodes.push(...touched[f][0]);
    edges.push(...touched[f][1]);
  }
  // Both ends' lit nodes and edges: what frame `from` lit goes back to its plain state.
  for (const f of [a, b]) {
    const lit = playIndex(trace).active[f];
    if (lit) {
      nodes.push(lit.node);
      edges.push(...lit.edges);
    }
  }
  return [nodes, edges];
}

/**
 * The nodes and edges whose drawing at frame `i` may differ between `before` and `after`, two
 * traces of one layout (a slider's new numbers): [node ids, edge ids]. A node is in it when it is
 * another object (compute/merge-numbers.js keeps a node whose numbers and warnings did not change) or shows
 * other numbers at that frame; the edges are those lit there (their labels carry numbers).
 */
export function numbersChanged(before, after, i, options = {}) {
  const [was, now] = [viewAt(before, i, options), viewAt(after, i, options)];
  const old = traceIndex(before).nodeById;
  const nodes = [];
  for (const node of after.nodes) {
    const { id } = node;
    if (old.get(id) !== node || !Object.is(was.data.get(id), now.data.get(id)) || !Object.is(was.grad.get(id), now.grad.get(id))) {
      nodes.push(id);
    }
  }
  return [nodes, [...was.active, ...now.active]];
}

/**
 * The sort's stack (bottom first, `[id, inputIndex]` entries) and sorted ids after API step
 * `stepIndex`, rebuilt from the topo steps' deltas (`pop`, `pushed`, `emitted`).
 * Steps after the topo phase give the final state (empty stack, every node sorted).
 */
export function topoStateAt(trace, stepIndex) {
  const stack = [];
  const sorted = [];
  for (const step of trace.steps.slice(0, stepIndex + 1)) {
    if (step.phase !== "topo") break;
    if (step.pop !== null) stack.pop();
    for (const entry of step.pushed) stack.push([entry[0], entry[1]]);
    if (step.emitted !== null) sorted.push(step.emitted);
  }
  return { stack, sorted };
}

/**
 * The frame of `trace` at the same place as frame `i` of `before`: the same phase, the same
 * position in it and the same contribution, each clamped within the new trace's phase
 * ("backward 3 / 7, contribution 1" stays there when a new trace has other frame counts).
 * A phase the new trace lacks falls back to the clamped frame index.
 */
export function carryFrame(before, i, trace) {
  if (sameDrawing(before, trace)) return i; // new numbers (a slider move): the same frames
  const frames = framesOf(trace);
  const last = Math.max(0, frames.length - 1);
  const where = phaseAt(before, i);
  const range = where.phase ? traceIndex(trace).phases[where.phase] : undefined;
  if (!range) return Math.min(Math.max(0, i), last);
  const stepIndex = Math.min(range.first + where.position - 1, range.last);
  const first = frameOfStep(trace, stepIndex);
  const parts = frames.filter((f) => f.step === stepIndex).length || 1;
  return first + Math.min(Math.max(1, where.part), parts) - 1;
}
