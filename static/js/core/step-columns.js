// The one reader of a trace's timeline in the page (engine/step_reader.py is Python's): an
// /api/graph reply sends its `steps` as columns (docs/api.md, "Steps"): per step its phase, node
// and template (an index into `templates`, the patterns), the sort's action and input index, and
// the backward pass's numbers as flat arrays. `withStepObjects(reply)` is the reply with one
// object a step instead, the fields a step has always had (`index`, `phase`, `node`, `template`
// and those of its phase), the rest read from the reply's nodes and edges: what every other
// module of the page reads. The page (core/api.js) and the embedded player (embed.js: the notebook
// widget, the one-file HTML) read every reply through it.
//
// The steps are a `StepList`: an array-like whose step objects are made when read (`at(k)`,
// iteration, the usual Array methods), never all at load: micrograd's demo has 324,310 steps, and
// making them all cost half a second and 120 MB before the first paint. What reads every step
// (core/frames.js's frames and play index, the evaluator, the numbers arrays) reads the columns
// through the list's accessors instead (`phaseAt`, `nodeAt`, `contributionCount`,
// `contributionEdge`, `contributionTo`, `numbers`), which make no object. A list is never changed: a slider's new numbers are another
// trace (compute/merge-numbers.js).
//
// A pattern is a template (core/narration.js) whose slots may name their INDEX relative to the step:
// `node`, `in<j>` (its node's j-th input), `e<j>` (its j-th input edge), `c<j>` (the j-th
// contribution of its visit) and `visit` (its position among the backward steps). `resolve`
// writes them as the step's plain indices: the step's template.

const REF = /\{\{|\}\}|\{([nft]):([a-z_]+):(?:(node|visit)|(in|e|c)(\d+))\}/g;

/** `pattern` with each relative INDEX written as the index it names for a step on `node`. */
export function resolve(pattern, node, inputs, edge = 0, contribution = 0, visit = 0) {
  if (!pattern.includes("{")) return pattern;
  return pattern.replace(REF, (match, format, array, whole, numbered, j) => {
    if (whole === undefined && numbered === undefined) return match; // a literal brace
    let at;
    if (whole !== undefined) at = whole === "node" ? node : visit;
    else if (numbered === "in") at = inputs[Number(j)];
    else at = (numbered === "e" ? edge : contribution) + Number(j);
    return `{${format}:${array}:${at}}`;
  });
}

const PHASES = new Set(["topo", "forward", "seed", "backward", "tangent"]);

/** Throws unless `columns` has every column, of the lengths the steps need. */
function checkColumns(columns, nodeCount) {
  const lists = ["phase", "node", "template", "templates", "action", "input_index", "step_grad",
    "contribution", "grad_before", "grad_after", "lost", "late"];
  const missing = lists.filter((name) => !Array.isArray(columns?.[name]));
  if (missing.length) throw new Error(`the reply's steps lack ${missing.join(", ")}`);
  const { phase, node, template, templates, action } = columns;
  if (node.length !== phase.length || template.length !== phase.length || columns.input_index.length !== action.length) {
    throw new Error("the reply's step columns differ in length");
  }
  phase.forEach((p, i) => {
    if (!PHASES.has(p) || !(node[i] >= 0 && node[i] < nodeCount) || typeof templates[template[i]] !== "string") {
      throw new Error(`the reply's step ${i} is malformed`);
    }
  });
}

/** A sort step's action, and what it pops, looks at, pushes and emits. */
function topoFields(action, name, at, inputs) {
  const looked = action === "visit" || action === "skip" ? `n${inputs[at]}` : null;
  const pushed = {
    start: [[name, 0]], visit: [[name, at + 1], [looked, 0]], skip: [[name, at + 1]], emit: [],
  }[action];
  if (!pushed) throw new Error(`the reply's sort has an unknown action ${JSON.stringify(action)}`);
  return { action, pop: action === "start" ? null : [name, at], input: looked, pushed, emitted: action === "emit" ? name : null };
}

/** A sort step's object, a step of another phase's, given where its numbers are. */
function stepObject(list, index) {
  const { columns, nodes, edges } = list;
  const node = columns.node[index];
  const phase = columns.phase[index];
  const edge = list.edgeStart[node];
  const count = list.edgeStart[node + 1] - edge;
  const ins = Array.from({ length: count }, (_, j) => list.inputNode[edge + j]);
  const written = nodes[node];
  const name = `n${node}`;
  const visit = Math.max(0, list.visitOf[index]);
  const first = Math.max(0, list.firstOf[index]);
  const template = resolve(columns.templates[columns.template[index]], node, ins, edge, first, visit);
  const step = { phase, node: name, template };
  if (phase === "topo") Object.assign(step, topoFields(columns.action[index], name, columns.input_index[index], ins));
  if (phase === "forward" || phase === "tangent") Object.assign(step, { op: written.op, inputs: [...written.inputs], data: written.data });
  if (phase === "seed") step.grad = 1;
  if (phase === "tangent") {
    step.tangent = written.tangent;
    step.contributions = ins.map((child, j) => ({
      edge: `e${edge + j}`, from: `n${child}`, tangent_in: nodes[child].tangent,
      local: edges[edge + j].local_grad, contribution: columns.tangent_contribution[edge + j],
    }));
  }
  if (phase === "backward") {
    step.grad = columns.step_grad[visit];
    step.contributions = ins.map((_, j) => list.contributionAt(index, j));
  }
  step.index = index;
  return step;
}

/**
 * The steps of an /api/graph reply (its `steps` as columns): an array-like whose step k is made
 * when read (`at(k)`; indexing with `[k]` is an Array's alone). Throws on malformed columns.
 */
export class StepList {
  constructor(reply) {
    const { steps: columns, nodes, edges } = reply;
    checkColumns(columns, nodes.length);
    Object.assign(this, { columns, nodes, edges, length: columns.phase.length });
    // Node i's input edges are edges edgeStart[i] … edgeStart[i + 1] − 1, in input order (docs/api.md).
    this.edgeStart = new Int32Array(nodes.length + 1);
    nodes.forEach((node, i) => (this.edgeStart[i + 1] = this.edgeStart[i] + node.inputs.length));
    this.inputNode = new Int32Array(this.edgeStart[nodes.length]);
    nodes.forEach((node, i) => node.inputs.forEach((id, j) => (this.inputNode[this.edgeStart[i] + j] = Number(id.slice(1)))));
    // A backward step's visit (its step_grad's index) and its first contribution's index in the
    // flattened arrays; -1 for the other steps (as compute/merge-numbers.js names them).
    this.visitOf = new Int32Array(this.length).fill(-1);
    this.firstOf = new Int32Array(this.length).fill(-1);
    let [visit, first] = [0, 0];
    for (let k = 0; k < this.length; k++) {
      if (columns.phase[k] !== "backward") continue;
      [this.visitOf[k], this.firstOf[k]] = [visit, first];
      visit += 1;
      first += this.contributionCount(k);
    }
    this.lost = new Set(columns.lost);
    this.late = new Set(columns.late);
  }

  /** Step `index`'s object (negative counts from the end, as Array's `at`); undefined past the ends. */
  at(index) {
    const k = index < 0 ? index + this.length : index;
    return k >= 0 && k < this.length ? stepObject(this, k) : undefined;
  }

  /** Step k's phase and its node's id: read from the columns, no object made. */
  phaseAt(k) {
    return this.columns.phase[k];
  }

  nodeAt(k) {
    return `n${this.columns.node[k]}`;
  }

  /** How many contributions step k lists (a backward or tangent step's: one per input edge). */
  contributionCount(k) {
    const phase = this.columns.phase[k];
    if (phase !== "backward" && phase !== "tangent") return 0;
    const node = this.columns.node[k];
    return this.edgeStart[node + 1] - this.edgeStart[node];
  }

  /** Contribution j of backward step k, as its step object lists it (made from the columns). */
  contributionAt(k, j) {
    const { columns, edges } = this;
    const edge = this.edgeStart[columns.node[k]] + j;
    const at = this.firstOf[k] + j;
    return {
      edge: `e${edge}`, to: `n${this.inputNode[edge]}`, upstream: columns.step_grad[this.visitOf[k]], local: edges[edge].local_grad,
      contribution: columns.contribution[at], grad_before: columns.grad_before[at], grad_after: columns.grad_after[at],
      lost: this.lost.has(at), late: this.late.has(at),
    };
  }

  /** The same as positions in the reply's nodes and edges: step k's node, contribution j's edge
   *  and the input it flows to, and node n's input edges (edges `edgeStart[n]` … `edgeStart[n + 1] − 1`). */
  nodePositionAt(k) {
    return this.columns.node[k];
  }

  contributionEdgePosition(k, j) {
    return this.edgeStart[this.columns.node[k]] + j;
  }

  contributionToPosition(k, j) {
    return this.inputNode[this.edgeStart[this.columns.node[k]] + j];
  }

  /** The ids of contribution j's edge and of the input it flows to (a backward or tangent step's). */
  contributionEdge(k, j) {
    return `e${this.edgeStart[this.columns.node[k]] + j}`;
  }

  contributionTo(k, j) {
    return `n${this.inputNode[this.edgeStart[this.columns.node[k]] + j]}`;
  }

  /** Where the backward pass's numbers are, as compute/merge-numbers.js `mergedNumbersOf` says a
   *  merge's: {reply: the arrays step_grad, contribution, grad_before, grad_after, visitOf, firstOf}. */
  numbers() {
    return { reply: this.columns, visitOf: this.visitOf, firstOf: this.firstOf };
  }

  *[Symbol.iterator]() {
    for (let k = 0; k < this.length; k++) yield stepObject(this, k);
  }

  *keys() {
    for (let k = 0; k < this.length; k++) yield k;
  }

  forEach(fn) {
    for (let k = 0; k < this.length; k++) fn(stepObject(this, k), k, this);
  }

  map(fn) {
    return Array.from({ length: this.length }, (_, k) => fn(stepObject(this, k), k, this));
  }

  filter(fn) {
    const kept = [];
    this.forEach((step, k) => fn(step, k, this) && kept.push(step));
    return kept;
  }

  flatMap(fn) {
    return this.map(fn).flat();
  }

  findIndex(fn) {
    for (let k = 0; k < this.length; k++) if (fn(stepObject(this, k), k, this)) return k;
    return -1;
  }

  findLastIndex(fn) {
    for (let k = this.length - 1; k >= 0; k--) if (fn(stepObject(this, k), k, this)) return k;
    return -1;
  }

  find(fn) {
    const k = this.findIndex(fn);
    return k < 0 ? undefined : stepObject(this, k);
  }

  some(fn) {
    return this.findIndex(fn) >= 0;
  }

  every(fn) {
    return this.findIndex((step, k) => !fn(step, k, this)) < 0;
  }

  /** Steps start … end − 1 as an Array of objects (Array's `slice`). */
  slice(start = 0, end = this.length) {
    const clamp = (i) => Math.min(this.length, Math.max(0, i < 0 ? i + this.length : i));
    const [from, to] = [clamp(start), clamp(end)];
    return Array.from({ length: Math.max(0, to - from) }, (_, j) => stepObject(this, from + j));
  }

  /** JSON sees the steps as the array of objects they read as. */
  toJSON() {
    return this.map((step) => step);
  }
}

/** The steps of an /api/graph reply (its `steps` as columns), one object a step, as an Array. */
export function stepObjects(reply) {
  return [...new StepList(reply)];
}

/** `reply` (an /api/graph reply) with its steps read: a StepList. Throws on malformed columns. */
export function withStepObjects(reply) {
  return { ...reply, steps: new StepList(reply) };
}

/** A StepList's accessors over an Array of step objects (a trace written by hand, an empty one). */
class ArraySteps {
  constructor(steps) {
    this.steps = steps;
    this.length = steps.length;
  }

  at(k) {
    return this.steps.at(k);
  }

  phaseAt(k) {
    return this.steps[k].phase;
  }

  nodeAt(k) {
    return this.steps[k].node;
  }

  contributionCount(k) {
    const step = this.steps[k];
    return step.phase === "backward" || step.phase === "tangent" ? (step.contributions ?? []).length : 0;
  }

  contributionAt(k, j) {
    return this.steps[k].contributions[j];
  }

  contributionEdge(k, j) {
    return this.steps[k].contributions[j].edge;
  }

  contributionTo(k, j) {
    return this.steps[k].contributions[j].to;
  }

  numbers() {
    return null;
  }
}

/** `steps` (a trace's drawing's) with the accessors that read a step without making its object:
 *  the StepList itself, or an Array's steps read through the same accessors. */
export const stepColumns = (steps) => (steps instanceof StepList ? steps : new ArraySteps(steps));
