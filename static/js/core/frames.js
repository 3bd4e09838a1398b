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
import { copied, drawingOf, lazily, mergedNumbersOf, numberAt, sameDrawing, stepGradAt } from "../compute/merge-numbers.js";
import { StepList, stepColumns } from "./step-columns.js";

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
  const steps = stepColumns(trace.steps);
  for (let k = 0; k < steps.length; k++) {
    const count = steps.phaseAt(k) === "backward" ? steps.contributionCount(k) : 0;
    if (count <= 1) frames.push({ step: k, upto: count });
    else for (let j = 1; j <= count; j++) frames.push({ step: k, upto: j });
  }
  framesCache.set(trace, frames);
  return frames;
}

/** The first frame showing API step `stepIndex` (-1 for none). */
export function frameOfStep(trace, stepIndex) {
  const first = playIndex(trace).firstFrame;
  return stepIndex >= 0 && stepIndex < first.length ? first[stepIndex] : -1;
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
    const shared = traceIndex(drawing);
    index = Object.assign(copied(shared), { nodeById: new ById(trace.nodes, shared.nodeAt) });
    lazily(index, "edgeById", () => new ById(trace.edges, shared.edgeAt));
    indexCache.set(trace, index);
    return index;
  }
  const nodeAt = new Map(trace.nodes.map((n, i) => [n.id, i]));
  const nodeById = new ById(trace.nodes, nodeAt);
  const phases = {};
  const steps = stepColumns(trace.steps);
  for (let i = 0; i < steps.length; i++) {
    const phase = steps.phaseAt(i);
    const range = (phases[phase] ??= { first: i, last: i });
    range.last = i;
  }
  index = { nodeAt, nodeById, phases };
  // What is read of the edges, and each node's forward and backward step: made when first read
  // (micrograd's demo has 126,854 edges; its overview reads none of them).
  lazily(index, "edgeAt", () => new Map(trace.edges.map((e, i) => [e.id, i])));
  lazily(index, "edgeById", () => new ById(trace.edges, index.edgeAt));
  lazily(index, "inputEdges", () => {
    const inputEdges = new Map(trace.nodes.map((n) => [n.id, []]));
    for (const edge of trace.edges) inputEdges.get(edge.target)?.push(edge);
    return inputEdges;
  });
  const stepOf = (phase) => {
    const found = new Map();
    const range = phases[phase];
    for (let i = range?.first ?? 0; i <= (range?.last ?? -1); i++) if (steps.phaseAt(i) === phase) found.set(steps.nodeAt(i), i);
    return found;
  };
  lazily(index, "forwardStep", () => stepOf("forward"));
  lazily(index, "backwardStep", () => stepOf("backward"));
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
  const steps = stepColumns(drawingOf(trace).steps); // a slider's new numbers have its drawing's phases
  if (!frame || frame.step >= steps.length) return { phase: "", position: 0, count: 0, part: 0, parts: 0 };
  const phase = steps.phaseAt(frame.step);
  const range = traceIndex(trace).phases[phase];
  const parts = phase === "backward" ? steps.contributionCount(frame.step) : 0;
  return {
    phase,
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
 * new numbers share it: compute/merge-numbers.js drawingOf), numbers read from the trace shown
 * (`eventGrad`, `eventContribution`). Flat typed arrays (micrograd's demo: 390,000 frames,
 * 190,000 events), indexed by node and edge position (traceIndex's nodeAt, edgeAt):
 *   firstFrame[k]: the first frame of API step k;
 *   dataFrame[n]: the frame op node n's forward step computes it (its data appears there), -1 for none;
 *   visitFrame[n]: the first frame of its backward step, -1 for none;
 *   grad events of node n, in frame order, at gradStart[n] … gradStart[n + 1] − 1: gradFrame (the
 *       seed, then each contribution's grad_after: the grad shown from that frame on), gradStep
 *       (the API step), gradAt (the contribution, or STEP_GRAD, STEP_TANGENT);
 *   edge events of edge e, in frame order, at edgeStart[e] … edgeStart[e + 1] − 1: edgeFrame,
 *       edgeUntil (active until that frame), edgeStep, edgeContribution (its index; -1 for a value's
 *       forward edge), edgeBackward (1 on the backward pass).
 * What a frame lights and what it may change are read from the steps when asked (`activeAt`,
 * `changedBetween`).
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

/** Lists of events kept flat: `add(owner, ...fields)` (as many fields as `fields` names) in any
 *  order of owners, `done()` sorts them by owner (a counting sort: each owner's events stay in the
 *  order they were added). Written out field by field: a big graph adds hundreds of thousands
 *  (micrograd's demo: 380,000), where a rest parameter and a callback an event cost a third of
 *  the play index's time. */
function eventColumns(owners, fields) {
  const owner = [];
  const values = fields.map(() => []);
  const [a, b, c, d, e] = values;
  const add = fields.length === 3
    ? (at, x, y, z) => { owner.push(at); a.push(x); b.push(y); c.push(z); }
    : (at, x, y, z, u, v) => { owner.push(at); a.push(x); b.push(y); c.push(z); d.push(u); e.push(v); };
  if (fields.length !== 3 && fields.length !== 5) throw new Error("eventColumns: 3 or 5 fields");
  return {
    add,
    done() {
      const count = owner.length;
      const start = new Int32Array(owners + 1);
      for (let k = 0; k < count; k++) start[owner[k] + 1] += 1;
      for (let i = 0; i < owners; i++) start[i + 1] += start[i];
      const next = start.slice(0, owners);
      const to = new Int32Array(count);
      for (let k = 0; k < count; k++) to[k] = next[owner[k]]++;
      const sorted = values.map((column) => {
        const out = new Int32Array(count);
        for (let k = 0; k < count; k++) out[to[k]] = column[k];
        return out;
      });
      return { start, columns: Object.fromEntries(fields.map((name, f) => [name, sorted[f]])) };
    },
  };
}

function buildPlayIndex(trace) {
  const steps = stepColumns(trace.steps);
  const index = traceIndex(trace);
  const { nodeAt } = index;
  // Positions of nodes and edges: a StepList's own, else by id.
  const list = steps instanceof StepList;
  const noTerms = new Map();
  // A node's input edges' positions: a StepList's a range of them (no list made).
  const inputsOf = list
    ? (node, each) => {
      for (let at = steps.edgeStart[node]; at < steps.edgeStart[node + 1]; at++) each(at);
    }
    : (node, each) => {
      for (const edge of index.inputEdges.get(trace.nodes[node].id) ?? []) each(index.edgeAt.get(edge.id));
    };
  const nodeOf = list ? (k) => steps.nodePositionAt(k) : (k) => nodeAt.get(steps.nodeAt(k));
  const edgeOf = list ? (k, j) => steps.contributionEdgePosition(k, j) : (k, j) => index.edgeAt.get(steps.contributionEdge(k, j));
  const toOf = list ? (k, j) => steps.contributionToPosition(k, j) : (k, j) => nodeAt.get(steps.contributionTo(k, j));
  const nodeCount = trace.nodes.length;
  const firstFrame = new Int32Array(steps.length);
  const dataFrame = new Int32Array(nodeCount).fill(-1);
  const visitFrame = new Int32Array(nodeCount).fill(-1);
  const grads = eventColumns(nodeCount, ["frame", "step", "at"]);
  const edges = eventColumns(trace.edges.length, ["frame", "until", "step", "at", "backward"]);
  let first = 0;
  for (let k = 0; k < steps.length; k++) {
    firstFrame[k] = first;
    const phase = steps.phaseAt(k);
    const count = phase === "backward" ? steps.contributionCount(k) : 0;
    const last = first + Math.max(1, count) - 1;
    if (phase === "forward" || phase === "tangent") {
      const node = nodeOf(k);
      // Forward mode's step computes the node's value and its tangent, shown in the grad row.
      dataFrame[node] = first;
      // A value's forward edge shows the input's value (at −1); a tangent step's its term of the
      // chain rule (tangent_in × local): `at` is its contribution.
      let term = noTerms;
      if (phase === "tangent") {
        term = new Map();
        grads.add(node, first, k, STEP_TANGENT);
        for (let j = 0; j < steps.contributionCount(k); j++) term.set(edgeOf(k, j), j);
      }
      inputsOf(node, (at) => edges.add(at, first, first, k, term.get(at) ?? -1, 0));
    } else if (phase === "seed") {
      grads.add(nodeOf(k), first, k, STEP_GRAD);
    } else if (phase === "backward") {
      visitFrame[nodeOf(k)] = first;
      for (let j = 0; j < count; j++) {
        grads.add(toOf(k, j), first + j, k, j);
        edges.add(edgeOf(k, j), first + j, last, k, j, 1);
      }
    }
    first = last + 1;
  }
  const [g, e] = [grads.done(), edges.done()];
  return {
    firstFrame, dataFrame, visitFrame,
    gradStart: g.start, gradFrame: g.columns.frame, gradStep: g.columns.step, gradAt: g.columns.at,
    edgeStart: e.start, edgeFrame: e.columns.frame, edgeUntil: e.columns.until, edgeStep: e.columns.step,
    edgeContribution: e.columns.at, edgeBackward: e.columns.backward,
  };
}

/**
 * What frame `f` of `trace` lights, {node, edges: ids}: its step's node, and the edges of a
 * forward step's inputs or of the contributions shown so far at a backward step; undefined
 * outside the timeline.
 */
export function activeAt(trace, f) {
  const frame = framesOf(trace)[f];
  if (!frame) return undefined;
  const drawing = drawingOf(trace);
  const steps = stepColumns(drawing.steps);
  const node = steps.nodeAt(frame.step);
  const phase = steps.phaseAt(frame.step);
  if (phase === "forward" || phase === "tangent") return { node, edges: (traceIndex(drawing).inputEdges.get(node) ?? []).map((e) => e.id) };
  const edges = [];
  if (phase === "backward") for (let j = 0; j < frame.upto; j++) edges.push(steps.contributionEdge(frame.step, j));
  return { node, edges };
}

/** The grad shown from grad event `e` of the play index on, read from `trace` (`numbers`: where
 *  its backward numbers are, a merge's or its step list's; `merged`: whether they are a merge's,
 *  whose reply holds every node's grad; `node`: the event's node position). */
function eventGrad(trace, play, e, numbers, merged, node) {
  const [k, at] = [play.gradStep[e], play.gradAt[e]];
  // A node's grad changes at its contributions alone (the seed's root has none): after its last
  // one it is the node's grad, which a slider move's numbers hold without recording every
  // contribution (compute/evaluator.js evaluateNumbers).
  if (merged && at !== STEP_TANGENT && e === play.gradStart[node + 1] - 1) return numberAt(numbers.reply.grad, node);
  if (numbers && at !== STEP_TANGENT && numbers.visitOf[k] >= 0) {
    // A slider move's trace: the grad read where its merge would put it (compute/merge-numbers.js),
    // unmerged; or a step list's columns. Either kind of array, read as JSON's numbers.
    return at === STEP_GRAD ? stepGradAt(numbers.reply, numbers.visitOf[k]) : numberAt(numbers.reply.grad_after, numbers.firstOf[k] + at);
  }
  const step = trace.steps.at(k);
  if (at === STEP_GRAD) return step.grad;
  if (at === STEP_TANGENT) return step.tangent;
  return step.contributions[at].grad_after;
}

/** The contribution edge event `e` shows, read from `trace`: a backward step's, or a tangent
 * step's term as one ({upstream: tangent_in, local, contribution}); null for a value's edge. */
function eventContribution(trace, play, e) {
  const [k, at] = [play.edgeStep[e], play.edgeContribution[e]];
  if (at < 0) return null;
  const steps = trace.steps;
  const backward = play.edgeBackward[e] === 1;
  const c = backward && steps.contributionAt ? steps.contributionAt(k, at) : steps.at(k).contributions[at];
  return backward ? c : { upstream: c.tangent_in, local: c.local, contribution: c.contribution };
}

/** The last of the events `start` … `end` − 1 (in frame order, from `frames`) at or before frame
 *  i, or -1 (a node's or an edge's events are few). */
function lastAt(frames, start, end, i) {
  let [lo, hi, found] = [start, end - 1, -1];
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (frames[mid] <= i) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
}

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
  const index = traceIndex(trace);
  const { nodeById, nodeAt } = index;
  // Where the backward numbers are: a slider move's reply (its steps unmerged), or the columns.
  const merged = mergedNumbersOf(trace.steps);
  const numbers = merged ?? trace.steps.numbers?.() ?? null;
  const play = playIndex(trace);
  const frames = framesOf(trace);
  const at = Math.max(0, Math.min(i, frames.length - 1));
  const frame = frames[at] ?? { step: -1, upto: 0 };
  const shownFrame = frames.length ? at : -1;
  const after = (f) => f >= 0 && f <= shownFrame;
  const computed = (id) => after(play.dataFrame[nodeAt.get(id)] ?? -1);
  // A forward step's data is its node's (compute/merge-numbers.js gives a merge's nodes theirs).
  const dataOf = (id) => {
    const node = nodeById.get(id);
    if (!node) return undefined;
    if (node.kind !== "op") return node.data;
    return computed(id) ? node.data : undefined;
  };
  const gradOf = (id) => {
    const node = nodeById.get(id);
    if (!node || node.kind === "const") return undefined; // constants get a grad; the page hides it
    if (finalGrads) return trace.pass === "forward" ? node.tangent : node.grad;
    const n = nodeAt.get(id);
    const e = lastAt(play.gradFrame, play.gradStart[n], play.gradStart[n + 1], shownFrame);
    return e < 0 ? undefined : eventGrad(trace, play, e, numbers, merged !== undefined, n);
  };
  const edgeOf = (id) => {
    const n = index.edgeAt.get(id);
    if (n === undefined) return undefined;
    const e = lastAt(play.edgeFrame, play.edgeStart[n], play.edgeStart[n + 1], shownFrame);
    if (e < 0) return undefined;
    const lit = shownFrame <= play.edgeUntil[e];
    if (play.edgeBackward[e] !== 1) {
      return lit ? { state: "forward-active", contribution: eventContribution(trace, play, e), pulse: true } : { state: "forward" };
    }
    const contribution = eventContribution(trace, play, e);
    return lit
      ? { state: "backward-active", contribution, pulse: play.edgeFrame[e] === shownFrame }
      : { state: "backward", contribution };
  };
  const step = frame.step >= 0 ? trace.steps.at(frame.step) : undefined;
  return {
    data: { get: dataOf },
    grad: { get: gradOf, has: (id) => gradOf(id) !== undefined },
    computed: { has: computed },
    visited: { has: (id) => after(play.visitFrame[nodeAt.get(id)] ?? -1) },
    edges: { get: edgeOf },
    active: activeAt(trace, shownFrame)?.edges ?? [],
    current: step ? step.node : null, step, stepIndex: frame.step, shown: frame.upto, frame: shownFrame,
    gradRow: gradRowName(trace, nodeById),
  };
}

/**
 * The nodes and edges whose drawing may differ between frames `from` and `to` of `trace`
 * ([node ids, edge ids], with repeats); null when every one may (the whole graph is redrawn).
 * Costs the frames between the two, not the size of the graph: at each frame, the node a
 * contribution flows to, and what that frame and the one before it light.
 */
export function changedBetween(trace, from, to) {
  const frames = framesOf(trace);
  const [a, b] = from < to ? [from, to] : [to, from];
  if (a < 0 || b >= frames.length) return null;
  const steps = stepColumns(drawingOf(trace).steps);
  const nodes = [];
  const edges = [];
  const lit = (f) => {
    const at = activeAt(trace, f);
    if (!at) return;
    nodes.push(at.node);
    edges.push(...at.edges);
  };
  for (let f = a + 1; f <= b; f++) {
    const { step, upto } = frames[f];
    if (upto > 0 && steps.phaseAt(step) === "backward") nodes.push(steps.contributionTo(step, upto - 1));
    lit(f);
    lit(f - 1);
  }
  // Both ends' lit nodes and edges: what frame `from` lit goes back to its plain state.
  lit(a);
  lit(b);
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
  const state = { stack: [], sorted: [] };
  const steps = stepColumns(drawingOf(trace).steps);
  for (let k = 0; k <= stepIndex && k < steps.length && steps.phaseAt(k) === "topo"; k++) topoStep(state, steps.at(k));
  return state;
}

/** `state` ({stack, sorted}, as topoStateAt gives) after the sort's step `step`, changed in place. */
export function topoStep({ stack, sorted }, step) {
  if (step.pop !== null) stack.pop();
  for (const entry of step.pushed) stack.push([entry[0], entry[1]]);
  if (step.emitted !== null) sorted.push(step.emitted);
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
