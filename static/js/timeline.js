// What the page shows at position i of the timeline, derived from the steps up to i alone (no DOM,
// no globals), so that stepping back restores exactly the earlier state.
//
// The timeline's positions are *frames*: one per API step, except that a backward step with
// several contributions gets one frame per contribution, so that a gradient visibly accumulates
// (`a*a`: grad[a] reads 3, then 6). `state.step` is a frame index.

const indexCache = new WeakMap();
const framesCache = new WeakMap();

/** [{step, upto}]: frame → API step index and how many of its contributions are shown. */
export function framesOf(trace) {
  let frames = framesCache.get(trace);
  if (frames) return frames;
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

/** Lookups computed once per trace: nodes/edges by id, phase ranges, each node's forward step. */
export function traceIndex(trace) {
  let index = indexCache.get(trace);
  if (index) return index;
  const nodeById = new Map(trace.nodes.map((n) => [n.id, n]));
  const edgeById = new Map(trace.edges.map((e) => [e.id, e]));
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
  index = { nodeById, edgeById, inputEdges, phases, forwardStep, backwardStep };
  indexCache.set(trace, index);
  return index;
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

export function phaseLabel({ phase, position, count }) {
  if (!phase) return "";
  if (phase === "seed") return "seed";
  return `${phase} ${position} / ${count}`;
}

/**
 * The display state at frame `i`:
 *   data: Map id → value shown (undefined = "--"); leaves and consts are known from the start,
 *         an op node's data appears at its forward step.
 *   grad: Map id → value shown (undefined = "--"); the root's at the seed, others at their first
 *         contribution, then each contribution's grad_after (accumulating).
 *   computed / visited: Sets of ids (forward done / backward visit done), current: id or null,
 *   edges: Map edgeId → {state: "forward"|"backward"|"forward-active"|"backward-active",
 *                        contribution?, pulse (a dot travels along it now)}
 *   step: the API step shown, stepIndex, shown: how many of its contributions are shown.
 */
export function viewAt(trace, i, { finalGrads = false } = {}) {
  const index = traceIndex(trace);
  const data = new Map();
  const grad = new Map();
  const computed = new Set();
  const visited = new Set();
  const edges = new Map();
  for (const node of trace.nodes) {
    if (node.kind !== "op") data.set(node.id, node.data);
  }
  const frames = framesOf(trace);
  const frame = frames[Math.max(0, Math.min(i, frames.length - 1))] ?? { step: -1, upto: 0 };
  const last = frame.step;
  for (let k = 0; k <= last; k++) {
    const step = trace.steps[k];
    if (step.phase === "forward") {
      const node = index.nodeById.get(step.node);
      data.set(step.node, step.data ?? node.data);
      computed.add(step.node);
      for (const edge of index.inputEdges.get(step.node) ?? []) {
        edges.set(edge.id, k === last ? { state: "forward-active", pulse: true } : { state: "forward" });
      }
    } else if (step.phase === "seed") {
      grad.set(step.node, step.grad);
    } else if (step.phase === "backward") {
      visited.add(step.node);
      const contributions = step.contributions ?? [];
      const shown = k === last ? frame.upto : contributions.length;
      contributions.slice(0, shown).forEach((c, j) => {
        grad.set(c.to, c.grad_after);
        edges.set(c.edge, k === last
          ? { state: "backward-active", contribution: c, pulse: j === shown - 1 }
          : { state: "backward", contribution: c });
      });
    }
  }
  if (finalGrads) {
    for (const node of trace.nodes) grad.set(node.id, node.grad);
  }
  for (const node of trace.nodes) {
    if (node.kind === "const") grad.delete(node.id); // constants get a grad; the page hides it
  }
  const step = trace.steps[last];
  return {
    data, grad, computed, visited, edges,
    current: step ? step.node : null, step, stepIndex: last, shown: frame.upto,
  };
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
