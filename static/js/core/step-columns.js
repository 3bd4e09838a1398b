// The one reader of a trace's timeline in the page (engine/step_reader.py is Python's): an
// /api/graph reply sends its `steps` as columns (docs/api.md, "Steps"): per step its phase, node
// and template (an index into `templates`, the patterns), the sort's action and input index, and
// the backward pass's numbers as flat arrays. `withStepObjects(reply)` is the reply with one
// object a step instead, the fields a step has always had (`index`, `phase`, `node`, `template`
// and those of its phase), the rest read from the reply's nodes and edges: what every other
// module of the page reads. The page (core/api.js) and the embedded player (embed.js: the notebook
// widget, the one-file HTML) read every reply through it.
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

/** The steps of an /api/graph reply (its `steps` as columns), one object a step. */
export function stepObjects(reply) {
  const columns = reply.steps;
  const { nodes, edges } = reply;
  checkColumns(columns, nodes.length);
  const inputs = nodes.map((node) => node.inputs.map((id) => Number(id.slice(1))));
  const offsets = [];
  inputs.reduce((total, list) => (offsets.push(total), total + list.length), 0);
  const lost = new Set(columns.lost);
  const late = new Set(columns.late);
  const { step_grad: stepGrad, grad_before: before, grad_after: after, tangent_contribution: added } = columns;
  let visit = 0;
  let first = 0; // the next backward step's visit and first contribution
  return columns.phase.map((phase, index) => {
    const node = columns.node[index];
    const ins = inputs[node];
    const edge = offsets[node];
    const written = nodes[node];
    const name = `n${node}`;
    const template = resolve(columns.templates[columns.template[index]], node, ins, edge, first, visit);
    const step = { phase, node: name, template };
    if (phase === "topo") Object.assign(step, topoFields(columns.action[index], name, columns.input_index[index], ins));
    if (phase === "forward" || phase === "tangent") Object.assign(step, { op: written.op, inputs: [...written.inputs], data: written.data });
    if (phase === "seed") step.grad = 1;
    if (phase === "tangent") {
      step.tangent = written.tangent;
      step.contributions = ins.map((child, j) => ({
        edge: `e${edge + j}`, from: `n${child}`, tangent_in: nodes[child].tangent,
        local: edges[edge + j].local_grad, contribution: added[edge + j],
      }));
    }
    if (phase === "backward") {
      const upstream = stepGrad[visit];
      step.grad = upstream;
      step.contributions = ins.map((child, j) => {
        const k = first + j;
        return {
          edge: `e${edge + j}`, to: `n${child}`, upstream, local: edges[edge + j].local_grad,
          contribution: columns.contribution[k], grad_before: before[k], grad_after: after[k],
          lost: lost.has(k), late: late.has(k),
        };
      });
      visit += 1;
      first += ins.length;
    }
    step.index = index;
    return step;
  });
}

/** `reply` (an /api/graph reply) with its steps read: one object a step. Throws on malformed columns. */
export function withStepObjects(reply) {
  return { ...reply, steps: stepObjects(reply) };
}
