// New numbers for a trace the page already has: a numbers reply (POST /api/values, the arrays of
// docs/api.md "The numbers reply") merged into the trace of the same structure gives the trace
// /api/graph would answer for the new values. Everything that does not depend on the values
// (layout, names, spans, the sort's steps, templates) is shared with the old trace; a node, edge,
// contribution or step whose numbers did not change is the old object itself. Narration is
// filled from the templates by whoever shows it (narration.js `narrationOf`).

const NO_WARNINGS = [];
const bases = new WeakMap(); // a merged trace → the trace the first merge of its line started from

/**
 * The trace whose structure `trace` shares (its steps, frames and events alike, numbers aside):
 * the trace the first merge of its line started from, or `trace` itself.
 */
export function drawingOf(trace) {
  return bases.get(trace) ?? trace;
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
    if (!Array.isArray(reply[array]) || reply[array].length !== count) {
      throw new Error(`the numbers reply's ${array} does not fit the trace (${count} expected)`);
    }
  }
}

/** The backward pass's counts in `trace`: {contributions, visits} (the numbers reply's array lengths). */
function backwardCounts(trace) {
  let [contributions, visits] = [0, 0];
  for (const step of trace.steps) {
    if (step.phase !== "backward") continue;
    contributions += (step.contributions ?? []).length;
    visits += 1;
  }
  return { contributions, visits };
}

/** The nodes with `reply`'s data, grads and warnings (a node whose numbers did not change is kept). */
function mergedNodes(trace, reply) {
  const { data, grad } = reply;
  const correctGrad = reply.correct_grad ?? grad;
  const tangent = reply.tangent ?? null; // forward mode's ∂node/∂wrt, null in reverse mode
  const nodeWarnings = reply.node_warnings ?? {};
  return trace.nodes.map((node, i) => {
    const warnings = nodeWarnings[node.id] ?? NO_WARNINGS;
    const nodeTangent = tangent === null ? node.tangent : tangent[i];
    if (Object.is(node.data, data[i]) && Object.is(node.grad, grad[i]) && Object.is(node.tangent, nodeTangent)
      && Object.is(node.correct_grad, correctGrad[i]) && sameWarnings(node.warnings, warnings)) return node;
    return {
      ...node, data: data[i], grad: grad[i], correct_grad: correctGrad[i], tangent: nodeTangent,
      warnings: warnings === NO_WARNINGS ? [] : warnings,
    };
  });
}

/** A forward-mode step with `reply`'s value, tangent and the contributions of its input edges. */
function mergedTangentStep(step, reply, position, edgeIndex) {
  const { data, tangent, local_grad: localGrad, tangent_contribution: added } = reply;
  const contributions = step.contributions.map((c) => {
    const edge = edgeIndex.get(c.edge);
    const numbers = { tangent_in: tangent[position.get(c.from)], local: localGrad[edge], contribution: added[edge] };
    return Object.entries(numbers).every(([key, x]) => Object.is(c[key], x)) ? c : { ...c, ...numbers };
  });
  const at = position.get(step.node);
  const same = Object.is(step.data, data[at]) && Object.is(step.tangent, tangent[at])
    && contributions.every((c, i) => c === step.contributions[i]);
  return same ? step : { ...step, data: data[at], tangent: tangent[at], contributions };
}

/**
 * The steps with `reply`'s numbers (a step whose numbers did not change is the old object).
 * Steps hold templates, not narration: `narrationOf` (narration.js) fills the one shown.
 * `position`: node id → its index in the node arrays.
 */
function mergedSteps(trace, reply, position) {
  const { data, local_grad: localGrad, step_grad: stepGrad } = reply;
  const edgeIndex = new Map(trace.edges.map((edge, i) => [edge.id, i]));
  let k = 0; // the next contribution's index in the flattened arrays
  let visit = 0;
  return trace.steps.map((step) => {
    if (step.phase === "forward") {
      const value = data[position.get(step.node)];
      return Object.is(step.data, value) ? step : { ...step, data: value };
    }
    if (step.phase === "tangent") return mergedTangentStep(step, reply, position, edgeIndex);
    if (step.phase !== "backward") return step; // the sort and the seed: no numbers (the seed's grad is 1)
    const upstream = stepGrad[visit++];
    const contributions = step.contributions.map((c) => {
      // A contribution's upstream is its visit's grad, its local its edge's local_grad.
      const numbers = {
        upstream, local: localGrad[edgeIndex.get(c.edge)], contribution: reply.contribution[k],
        grad_before: reply.grad_before[k], grad_after: reply.grad_after[k],
      };
      k += 1;
      return Object.entries(numbers).every(([key, x]) => Object.is(c[key], x)) ? c : { ...c, ...numbers };
    });
    const same = Object.is(step.grad, upstream) && contributions.every((c, i) => c === step.contributions[i]);
    return same ? step : { ...step, grad: upstream, contributions };
  });
}

/**
 * The trace `trace` would be for the values of `reply` (a numbers reply of the same structure):
 * deep-equal to /api/graph's answer for those values, except `layout.cached`. `trace` is not
 * changed; what the values do not change is shared with it.
 */
export function mergeNumbers(trace, reply) {
  const { contributions, visits } = backwardCounts(trace);
  checkShape(trace, reply, contributions, visits);
  const position = new Map(trace.nodes.map((node, i) => [node.id, i]));
  const edges = trace.edges.map((edge, i) => (Object.is(edge.local_grad, reply.local_grad[i])
    ? edge : { ...edge, local_grad: reply.local_grad[i] }));
  const leaves = trace.leaves.map((leaf) => {
    const value = reply.data[position.get(leaf.id)];
    return Object.is(leaf.value, value) ? leaf : { ...leaf, value };
  });
  const steps = mergedSteps(trace, reply, position);
  const merged = { ...trace, nodes: mergedNodes(trace, reply), edges, leaves, steps, gradcheck: reply.gradcheck, warnings: reply.warnings };
  if (reply.grad_flags !== undefined) merged.grad_flags = reply.grad_flags;
  if (reply.structure !== undefined) merged.structure = reply.structure;
  bases.set(merged, bases.get(trace) ?? trace);
  return merged;
}

/**
 * The numbers reply of `trace` (the inverse of mergeNumbers): its data, grads, local grads, every
 * backward step's grad and contributions, gradcheck, warnings and node warnings, as the arrays of
 * POST /api/values. What the page compares its own numbers with (instant.js).
 */
export function numbersOf(trace) {
  const backward = trace.steps.filter((step) => step.phase === "backward");
  const contributions = backward.flatMap((step) => step.contributions ?? []);
  const grad = trace.nodes.map((node) => node.grad);
  const correctGrad = trace.nodes.map((node) => node.correct_grad ?? node.grad);
  const nodeWarnings = {};
  for (const node of trace.nodes) if (node.warnings?.length) nodeWarnings[node.id] = node.warnings;
  return {
    structure: trace.structure,
    data: trace.nodes.map((node) => node.data),
    grad,
    correct_grad: correctGrad.every((x, i) => Object.is(x, grad[i])) ? null : correctGrad,
    local_grad: trace.edges.map((edge) => edge.local_grad),
    step_grad: backward.map((step) => step.grad),
    contribution: contributions.map((c) => c.contribution),
    grad_before: contributions.map((c) => c.grad_before),
    grad_after: contributions.map((c) => c.grad_after),
    gradcheck: trace.gradcheck,
    warnings: trace.warnings,
    node_warnings: nodeWarnings,
  };
}
