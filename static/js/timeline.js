// What the page shows at step i, derived from steps[0..i] alone (no DOM, no globals), so that
// stepping back restores exactly the earlier state.

const indexCache = new WeakMap();

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

/** `{phase, position, count}`: "forward 3 / 5" is position 3 of count 5 (1-based). */
export function phaseAt(trace, i) {
  const step = trace.steps[i];
  if (!step) return { phase: "", position: 0, count: 0 };
  const range = traceIndex(trace).phases[step.phase];
  return { phase: step.phase, position: i - range.first + 1, count: range.last - range.first + 1 };
}

export function phaseLabel({ phase, position, count }) {
  if (!phase) return "";
  if (phase === "seed") return "seed";
  return `${phase} ${position} / ${count}`;
}

/**
 * The display state at step `i`:
 *   data: Map id → value shown (undefined = "--"); leaves and consts are known from the start,
 *         an op node's data appears at its forward step.
 *   grad: Map id → value shown (undefined = "--"); the root's at the seed, others at their first
 *         contribution, then each contribution's grad_after (accumulating).
 *   computed / visited: Sets of ids (forward done / backward visit done), current: id or null,
 *   edges: Map edgeId → {state: "forward"|"backward"|"forward-active"|"backward-active", label?}
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
  const last = Math.min(i, trace.steps.length - 1);
  for (let k = 0; k <= last; k++) {
    const step = trace.steps[k];
    if (step.phase === "forward") {
      const node = index.nodeById.get(step.node);
      data.set(step.node, step.data ?? node.data);
      computed.add(step.node);
      for (const edge of index.inputEdges.get(step.node) ?? []) {
        edges.set(edge.id, { state: k === last ? "forward-active" : "forward" });
      }
    } else if (step.phase === "seed") {
      grad.set(step.node, step.grad);
    } else if (step.phase === "backward") {
      visited.add(step.node);
      for (const c of step.contributions ?? []) {
        grad.set(c.to, c.grad_after);
        edges.set(c.edge, k === last
          ? { state: "backward-active", contribution: c }
          : { state: "backward", contribution: c });
      }
    }
  }
  if (finalGrads) {
    for (const node of trace.nodes) grad.set(node.id, node.grad);
  }
  for (const node of trace.nodes) {
    if (node.kind === "const") grad.delete(node.id); // constants get a grad; the page hides it
  }
  const step = trace.steps[last];
  return { data, grad, computed, visited, edges, current: step ? step.node : null, step };
}
