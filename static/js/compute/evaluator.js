// The page's own execution of the math: the numbers reply of POST /api/values (docs/api.md, "The
// numbers reply"), computed here from a trace the page already has and new leaf values, so a
// slider paints without a round trip and a file opened from file:// recomputes.
//
// The op table (engine/ops.py) is the one specification: compute/op-functions.js is generated from it
// (javascript_module) and this file holds no op's math. What it holds is the engine's order of
// work, so that the same IEEE operations run in the same order and the numbers are the
// engine's to the bit, but where V8's Math.exp/log/tanh/pow/sin/cos round differently from the
// C library CPython calls (`tolerances` says how far that can carry, MATCH_ULPS below):
// - forward: each node in the forward steps' (topological) order, its op's `forward`, then each
//   input's `local` with `out`, and its warning as engine/ops.py `apply` decides it;
// - backward: the root's grad seeded with 1, every other grad 0, then the visits of the backward
//   steps in their order, each contribution `local × upstream` added (`=` in overwrite mode) to
//   its input's grad in input order (engine/backward.py recorded_backward); in a variant (mode
//   or order) the correct pass first, in reverse topological order (`correct_grad`);
// - the gradient check, as engine/gradcheck.py: central differences per leaf.
//
//   const structure = compileStructure(trace);            // once per structure
//   const reply = evaluate(structure, { a: 3, b: -1 });   // the numbers reply, same shape
//   const numbers = evaluateNumbers(structure, { a: 3 });  // the same, its arrays Float64Arrays
//
// `compileStructure` reads only documented fields of /api/graph's reply: nodes (id, op, exponent,
// kind, data of constants, inputs), leaves, root, steps (phase, node), mode, order, structure.

import {
  FLAG_EXPLODING, FLAG_SATURATED, FLAG_VANISHING, GRADCHECK_EPS_RULE, GRADCHECK_MAX_LEAVES, GRADCHECK_MAX_NODES,
  GRADCHECK_ROUNDING, OPS, forwardInto, opKey,
} from "./op-functions.js";
import { copied, lazily } from "./merge-numbers.js";
import { fromJson, toJson } from "./json-numbers.js";
import { stepColumns } from "../core/step-columns.js";

/**
 * The slack, in units in the last place, added to the measured spread of a number that V8's Math
 * functions took part in (`tolerances`): those functions (exp, log, tanh, pow, sin, cos) are not
 * correctly rounded, in V8 or in the C library CPython calls, and the two differ by one ulp on
 * some arguments; arithmetic (+, −, ×, ÷) is IEEE in both, so numbers made by it alone must agree
 * to the bit. A fixed number of ulps on the result would not do: a last-place difference in
 * tanh(x) becomes many ulps of tanh(x) − 0.76 (tests/engine/test_page_evaluator.py measures it).
 */
export const MATCH_ULPS = 4;

// A reply's numbers as JSON writes them (compute/json-numbers.js), for this module's callers.
export { fromJson, toJson };

const OP_KEYS = Object.keys(OPS);
const ROWS = OP_KEYS.map((key) => OPS[key]); // op code → its row
const LEAF = -1;

// The arrays of a numbers reply, in its order.
const NUMBER_ARRAYS = ["data", "grad", "correct_grad", "local_grad", "step_grad", "contribution", "grad_before", "grad_after"];

const indexOf = (id) => Number(id.slice(1)); // "n17" → 17: ids are positions (docs/api.md)

/**
 * The trace's structure as flat typed arrays: per node its op code (LEAF for a leaf or a
 * constant), inputs, constant exponent and first edge; the topological order; the visits of the
 * backward steps; the leaves by name. Throws on a trace this page cannot evaluate (an unknown op).
 */
export function compileStructure(trace) {
  const count = trace.nodes.length;
  const op = new Int8Array(count);
  const arity = new Uint8Array(count);
  const first = new Int32Array(count);
  const second = new Int32Array(count);
  const exponent = new Float64Array(count);
  const edgeStart = new Int32Array(count + 1);
  const constant = new Float64Array(count);
  const isConst = new Uint8Array(count);
  let edges = 0;
  trace.nodes.forEach((node, i) => {
    if (indexOf(node.id) !== i) throw new Error(`node ${node.id} is not at position ${i}`);
    edgeStart[i] = edges;
    const inputs = node.inputs ?? [];
    edges += inputs.length;
    if (node.kind !== "op") {
      op[i] = LEAF;
      isConst[i] = node.kind === "const" ? 1 : 0;
      constant[i] = fromJson(node.data);
      return;
    }
    const key = opKey(node);
    const code = OP_KEYS.indexOf(key);
    if (code < 0 || OPS[key].arity !== inputs.length) throw new Error(`unknown op ${node.op} at ${node.id}`);
    op[i] = code;
    arity[i] = inputs.length;
    first[i] = indexOf(inputs[0]);
    second[i] = inputs.length > 1 ? indexOf(inputs[1]) : -1;
    exponent[i] = key === "**k" ? fromJson(node.exponent) : 0;
  });
  edgeStart[count] = edges;
  const steps = stepColumns(trace.steps); // read without making the steps' objects
  const phase = (name) => {
    const nodes = [];
    for (let k = 0; k < steps.length; k++) if (steps.phaseAt(k) === name) nodes.push(indexOf(steps.nodeAt(k)));
    return Int32Array.from(nodes);
  };
  const topo = phase("forward");
  const visits = phase("backward");
  const variant = trace.mode === "overwrite" || (trace.order !== null && trace.order !== undefined);
  const root = indexOf(trace.root);
  return {
    structure: trace.structure, count, edges, op, arity, first, second, exponent, edgeStart, constant, isConst,
    topo, visits, reverse: topo.slice().reverse(), root,
    contributionCount: visits.reduce((sum, i) => sum + arity[i], 0),
    cone: topo.filter((i) => !isConst[i] && i !== root), // the nodes gradFlags judges
    overwrite: trace.mode === "overwrite", variant,
    leaves: trace.leaves.map((leaf) => ({ name: leaf.name, index: indexOf(leaf.id), value: fromJson(leaf.value) })),
  };
}

/** The data of node `i` from its inputs' in `data` (the op's forward). */
function forwardOf(s, data, i) {
  const row = ROWS[s.op[i]];
  return row.forward(data[s.first[i]], s.arity[i] > 1 ? data[s.second[i]] : 0, s.exponent[i]);
}

/** The leaf values: `values[name]` where given, else the value the trace was made with. */
function leafData(s, values, data) {
  for (const leaf of s.leaves) {
    const given = values?.[leaf.name];
    data[leaf.index] = given === undefined || given === null ? leaf.value : fromJson(given);
  }
}

/**
 * The forward pass: data, every edge's local derivative (op-functions.js `forwardInto`, the
 * rows' formulas in one switch: no array made a node) and the nodes' warnings, `warned` ([node
 * index, type, …], a pair a non-finite result: most passes have none).
 */
export function forwardPass(s, values, local = new Float64Array(s.edges)) {
  const data = s.constant.slice();
  const warned = [];
  leafData(s, values, data);
  const { topo, op, arity, first, second, exponent, edgeStart } = s;
  for (let n = 0; n < topo.length; n += 1) {
    const i = topo[n];
    const code = op[i];
    if (code === LEAF) continue;
    forwardInto(code, data, i, first[i], arity[i] > 1 ? second[i] : -1, exponent, local, edgeStart[i]);
    const out = data[i];
    if (out - out !== 0) {
      const b = arity[i] > 1 ? data[second[i]] : 0;
      const type = warningOf(ROWS[code], data[first[i]], b, exponent[i], out, arity[i]);
      if (type !== null) warned.push(i, type);
    }
  }
  return { data, local, warned };
}

/** Every edge's local derivative from the nodes' `data`, as forwardPass wrote them (the same
 *  function of the same numbers: the data it writes again is the node's, to the bit). */
function localsOf(s, data) {
  const local = new Float64Array(s.edges);
  const { topo, op, arity, first, second, exponent, edgeStart } = s;
  for (let n = 0; n < topo.length; n += 1) {
    const i = topo[n];
    if (op[i] === LEAF) continue;
    forwardInto(op[i], data, i, first[i], arity[i] > 1 ? second[i] : -1, exponent, local, edgeStart[i]);
  }
  return local;
}

/** engine/ops.py `apply`'s warning of a non-finite result: the failing primitive's, else domain
 *  (nan) or overflow (±inf) when the inputs were finite. */
export function warningOf(row, a, b, k, out, arity) {
  const blamed = row.warning(a, b, k);
  if (blamed !== null) return blamed;
  const finite = Number.isFinite(a) && (arity < 2 || Number.isFinite(b));
  if (!finite) return null;
  return out !== out ? "domain" : "overflow";
}

/** The correct pass, unrecorded (engine/backward.py `backward`, as Value.backward runs it): the
 *  grads of the root, from `local` (forwardPass's). */
export function correctGrads(s, local) {
  const grad = new Float64Array(s.count);
  grad[s.root] = 1;
  for (let n = 0; n < s.reverse.length; n += 1) {
    const i = s.reverse[n];
    const upstream = grad[i];
    for (let j = 0; j < s.arity[i]; j += 1) {
      const to = j === 0 ? s.first[i] : s.second[i];
      grad[to] += local[s.edgeStart[i] + j] * upstream;
    }
  }
  return grad;
}

/** The pass the trace shows, recorded (engine/backward.py `recorded_backward`); without
 *  `contributions`, each visit's grad and the final grads alone (the same numbers); without
 *  `steps`, the final grads alone. */
function recordedPass(s, local, { contributions: recorded = true, steps = true } = {}) {
  const { visits, arity, first, second, edgeStart, overwrite } = s;
  const grad = new Float64Array(s.count);
  grad[s.root] = 1;
  const stepGrad = steps ? new Float64Array(visits.length) : null;
  const contributions = recorded ? new Float64Array(s.contributionCount) : null;
  const befores = recorded ? new Float64Array(s.contributionCount) : null;
  const afters = recorded ? new Float64Array(s.contributionCount) : null;
  let k = 0;
  for (let visit = 0; visit < visits.length; visit += 1) {
    const i = visits[visit];
    const upstream = grad[i];
    if (steps) stepGrad[visit] = upstream;
    for (let j = 0; j < arity[i]; j += 1) {
      const to = j === 0 ? first[i] : second[i];
      const contribution = local[edgeStart[i] + j] * upstream;
      const before = grad[to];
      const after = overwrite ? contribution : before + contribution;
      grad[to] = after;
      if (recorded) {
        contributions[k] = contribution;
        befores[k] = before;
        afters[k] = after;
      }
      k += 1;
    }
  }
  return { grad, stepGrad, contributions, befores, afters };
}

/** `xs` as JSON numbers (a loop: Array.from would step an iterator, an object per element). */
function jsonArray(xs) {
  const out = new Array(xs.length);
  for (let i = 0; i < xs.length; i += 1) out[i] = toJson(xs[i]);
  return out;
}

/** Whether two arrays of numbers are the same JSON (engine/reply.py `_same`: −0 is not 0). */
function sameNumbers(left, right) {
  if (left.length !== right.length) return false;
  for (let i = 0; i < left.length; i += 1) if (!Object.is(left[i], right[i])) return false;
  return true;
}

/** Every number of the passes as typed arrays (the numbers reply's arrays, unwritten). */
function passes(s, values) {
  const { data, local, warned } = forwardPass(s, values);
  const shown = recordedPass(s, local);
  const correct = s.variant ? correctGrads(s, local) : shown.grad;
  return {
    data, warned, correct,
    arrays: {
      data, grad: shown.grad, correct_grad: correct, local_grad: local, step_grad: shown.stepGrad,
      contribution: shown.contributions, grad_before: shown.befores, grad_after: shown.afters,
    },
  };
}

/**
 * The numbers reply of POST /api/values for `values` ({leaf name: number}) on the compiled
 * structure `s`, its arrays as computed: Float64Arrays, non-finite numbers as numbers (not the
 * JSON's strings). What a slider move paints from: compute/merge-numbers.js reads either kind,
 * a number at a time, so none of the graph's arrays is written out whole. The contributions'
 * arrays (contribution, grad_before, grad_after) are recorded when one is first read, and
 * local_grad worked out again from the data: a move shows them only at a backward step's frame
 * or on an edge, and on micrograd's demo writing them into new memory was half of its
 * evaluation (and the new memory brought on the collections of the whole heap). `evaluate` is
 * its JSON.
 */
export function evaluateNumbers(s, values) {
  let moving = movesLocals.get(s);
  if (!moving) movesLocals.set(s, (moving = new Float64Array(s.edges)));
  moving.fill(0);
  const { data, warned } = forwardPass(s, values, moving);
  // In the correct pass a node is visited once all its consumers have passed on to it: the grad
  // it passes on is its final grad, so the steps' grads are read from `grad` (`stepGradAt`) and
  // the array of them made only when read whole (a move of the demo: 526 KB less).
  const shown = recordedPass(s, moving, { contributions: false, steps: s.variant });
  const correct = s.variant ? correctGrads(s, moving) : shown.grad;
  const reply = { structure: s.structure, data, grad: shown.grad, correct_grad: correct };
  let local = null;
  const locals = () => (local ??= localsOf(s, data));
  lazily(reply, "local_grad", locals);
  if (shown.stepGrad) reply.step_grad = shown.stepGrad;
  else {
    const { grad } = shown;
    const { visits } = s;
    lazily(reply, "step_grad", () => Float64Array.from(visits, (i) => grad[i]));
    const one = Object.assign((visit) => grad[visits[visit]], { count: visits.length });
    Object.defineProperty(reply, "stepGradAt", { value: one }); // not enumerable: no array of numbers
  }
  let recorded = null;
  const record = () => (recorded ??= recordedPass(s, locals()));
  lazily(reply, "contribution", () => record().contributions);
  lazily(reply, "grad_before", () => record().befores);
  lazily(reply, "grad_after", () => record().afters);
  if (!s.variant || sameNumbers(correct, shown.grad)) reply.correct_grad = null;
  // Checked and flagged when first read (compute/merge-numbers.js `lazily`): most moves show neither (at 1,000
  // exploding gradients, the flags alone took a tenth of a move).
  lazily(reply, "gradcheck", () => gradcheck(s, data, correct));
  const nodeWarnings = {};
  for (let w = 0; w < warned.length; w += 2) nodeWarnings[`n${warned[w]}`] = [{ type: warned[w + 1], message: null }];
  reply.node_warnings = nodeWarnings;
  lazily(reply, "grad_flags", () => gradFlags(s, flagCodes(s, data, locals(), correct)));
  return reply;
}

// Each structure's local derivatives of the move being evaluated (evaluateNumbers), written over at
// every move and never given out: the reply's local_grad is worked out again from its data when
// first read, so a move writes no new memory for the graph's edges.
const movesLocals = new WeakMap();

/**
 * The numbers reply of POST /api/values for `values` ({leaf name: number}) on the compiled
 * structure `s`: data, grad, correct_grad, local_grad, step_grad, contribution, grad_before,
 * grad_after, gradcheck, node_warnings (each warning's `type`; its sentence is the server's to
 * write: `message` is null) and grad_flags, as the server's JSON has them. No `warnings`: the
 * program's warnings depend on the structure only.
 */
export function evaluate(s, values) {
  const numbers = evaluateNumbers(s, values);
  const reply = copied(numbers); // the check and the flags stay lazy; the arrays are written out
  for (const name of NUMBER_ARRAYS) {
    const value = numbers[name] === null ? null : jsonArray(numbers[name]);
    Object.defineProperty(reply, name, { value, writable: true, enumerable: true, configurable: true });
  }
  return reply;
}

// ---- Gradients that vanish, explode or die (engine/flags.py, its thresholds) ----

// A node's flags, coded: whether it is saturated (a bit) and its kind (the rest), as flagCodes
// writes them; each code's list of flags made once (one array a code, not one a node and move).
const SATURATED = 1;
const KINDS = [null, "exploding", "dead", "vanishing"];
const FLAG_LISTS = KINDS.flatMap((kind) => [kind ? [kind] : null, kind ? ["saturated", kind] : ["saturated"]])
  .map((list) => (list ? Object.freeze(list) : null));

/** Whether node `i` is a tanh or sigmoid on the flat part of its curve (flags.py `saturated`). */
function saturated(s, data, i) {
  if (s.op[i] === LEAF) return false;
  const where = ROWS[s.op[i]].saturation;
  return where !== null && Math.abs(where(data[s.first[i]], 0, 0, data[i])) > FLAG_SATURATED;
}

/**
 * flags.py `_dead`: per node (a Uint8Array) whether its grad is 0 because each of its consumers
 * is a closed gate (its local derivative for it is 0) or dead itself. In reverse topological
 * order a node's consumers come before it: each passes its verdict to its inputs of grad 0.
 */
function deadNodes(s, local, grad) {
  const { reverse, op, arity, first, second, edgeStart } = s;
  const read = new Uint8Array(s.count); // a consumer reads it
  const passed = new Uint8Array(s.count); // a consumer that is neither a closed gate nor dead reads it
  const dead = new Uint8Array(s.count);
  for (let n = 0; n < reverse.length; n += 1) {
    const i = reverse[n];
    if (read[i] && !passed[i]) dead[i] = 1;
    if (arity[i] === 0) continue;
    const gate = ROWS[op[i]].gate;
    for (let j = 0; j < arity[i]; j += 1) {
      const child = j === 0 ? first[i] : second[i];
      if (grad[child] !== 0) continue;
      read[child] = 1;
      if (!((gate && local[edgeStart[i] + j] === 0) || dead[i])) passed[child] = 1;
    }
  }
  return dead;
}

/**
 * The gradient flags of the root's cone (flags.py `grad_flags`) from the correct grads `grad`,
 * coded per node (a Uint8Array: SATURATED, plus the index of its kind in KINDS times 2; 0 for
 * none): the nodes of the forward steps are the cone, in its order.
 */
function flagCodes(s, data, local, grad) {
  const shown = s.cone;
  let largest = 1;
  for (let n = 0; n < shown.length; n += 1) {
    const size = Math.abs(grad[shown[n]]);
    if (Number.isFinite(size) && size > largest) largest = size;
  }
  const smallest = FLAG_VANISHING * largest;
  const dead = deadNodes(s, local, grad);
  const codes = new Uint8Array(s.count);
  for (let n = 0; n < shown.length; n += 1) {
    const i = shown[n];
    const size = Math.abs(grad[i]);
    const gated = s.op[i] !== LEAF && ROWS[s.op[i]].saturation !== null;
    if (smallest <= size && size <= FLAG_EXPLODING && !gated) continue;
    const kind = size > FLAG_EXPLODING ? 1 : dead[i] ? 2 : size < smallest ? 3 : 0;
    codes[i] = 2 * kind + (saturated(s, data, i) ? SATURATED : 0);
  }
  if (saturated(s, data, s.root)) codes[s.root] = SATURATED;
  return codes;
}

/** The reply's `grad_flags` ({node id: [flag, …]}, in the cone's order, the root last) of `codes`. */
function gradFlags(s, codes) {
  const flags = {};
  for (let n = 0; n < s.cone.length; n += 1) {
    const i = s.cone[n];
    if (codes[i]) flags[`n${i}`] = FLAG_LISTS[codes[i]];
  }
  if (codes[s.root]) flags[`n${s.root}`] = FLAG_LISTS[codes[s.root]];
  return flags;
}

/** The gradient flags the page's rule makes of a numbers reply's numbers (the server's, or the
 *  page's own) on the compiled structure `s`. */
export function flagsOf(s, reply) {
  const numbers = (array) => Float64Array.from(array, fromJson);
  const grad = numbers(reply.correct_grad ?? reply.grad);
  return gradFlags(s, flagCodes(s, numbers(reply.data), numbers(reply.local_grad), grad));
}

// ---- How far the server's numbers may be from the page's ----

// The last-place difference allowed to each result of a row that calls V8's Math (`exact: false`
// in compute/op-functions.js) against the C library's: tests/engine/test_generated_ops.py finds at most
// one on its edge values; two leaves room for a formula of two such calls (sigmoid's exp, then ÷).
const MATH_ULPS = 2;

/** The spacing of doubles at x (0 for a non-finite x: no spacing to speak of). */
function ulpOf(x) {
  return Number.isFinite(x) ? ulp(Math.abs(x)) : 0;
}

/** The values within `error` of x that bound a monotone function's reach: x alone when exact. */
const around = (x, error) => (error > 0 ? [x - error, x + error] : [x]);

/**
 * The largest distance from `base` of `compute()` over the corners, plus the rounding the other
 * side may do differently; Infinity when a corner's finiteness differs from `base`'s (the edge
 * of overflow) or a non-finite base moves. 0 when nothing moved and the row is exact.
 */
function reach(base, values, slack) {
  let most = 0;
  for (const x of values) {
    if (Number.isFinite(x) !== Number.isFinite(base)) return Infinity;
    if (!Number.isFinite(base)) {
      if (!Object.is(x, base) && !(x !== x && base !== base)) return Infinity;
      continue;
    }
    most = Math.max(most, Math.abs(x - base));
  }
  return most + slack;
}

/** Error bounds of the forward pass: per node its data's, per edge its local derivative's. */
function forwardBounds(s, data, local) {
  const dataBound = new Float64Array(s.count);
  const localBound = new Float64Array(s.edges);
  for (const i of s.topo) {
    if (s.op[i] === LEAF) continue;
    const row = ROWS[s.op[i]];
    const binary = s.arity[i] > 1;
    const [a, b, k, out] = [data[s.first[i]], binary ? data[s.second[i]] : 0, s.exponent[i], data[i]];
    const [ea, eb] = [dataBound[s.first[i]], binary ? dataBound[s.second[i]] : 0];
    const moved = ea > 0 || eb > 0;
    const own = row.exact ? 0 : MATH_ULPS;
    const corners = [];
    for (const x of around(a, ea)) for (const y of around(b, eb)) corners.push([x, y]);
    const outs = corners.map(([x, y]) => row.forward(x, y, k));
    const eo = reach(out, outs, (own + (moved ? 1 : 0)) * ulpOf(out));
    dataBound[i] = eo;
    const edge = s.edgeStart[i];
    const localsAt = [];
    for (const [x, y] of corners) for (const o of around(out, eo)) localsAt.push(row.locals(x, y, k, o));
    for (let j = 0; j < s.arity[i]; j += 1) {
      const base = local[edge + j];
      const slack = (own + (moved || eo > 0 ? 1 : 0)) * ulpOf(base);
      localBound[edge + j] = reach(base, localsAt.map((l) => l[j]), slack);
    }
  }
  return { dataBound, localBound };
}

/** |x·y − (x ± ex)(y ± ey)| at most, and the product's own rounding when anything moved. */
function productBound(x, ex, y, ey, product) {
  if (ex === 0 && ey === 0) return 0;
  if (!Number.isFinite(ex) || !Number.isFinite(ey) || !Number.isFinite(product)) return Infinity;
  return Math.abs(x) * ey + Math.abs(y) * ex + ex * ey + ulpOf(product);
}

/** A sum's bound: its terms' and its own rounding when anything moved. */
function sumBound(e1, e2, sum) {
  if (e1 === 0 && e2 === 0) return 0;
  return Number.isFinite(sum) ? e1 + e2 + ulpOf(sum) : Infinity;
}

/** Error bounds of a backward pass in `visits` order (`overwrite`: `=` instead of `+=`),
 *  recorded per visit and contribution as the passes record their numbers. */
function backwardBounds(s, local, localBound, visits, overwrite) {
  const grad = new Float64Array(s.count);
  const bound = new Float64Array(s.count);
  grad[s.root] = 1;
  const steps = [];
  const contributions = [];
  const befores = [];
  const afters = [];
  for (const i of visits) {
    const [upstream, eu] = [grad[i], bound[i]];
    steps.push(eu);
    for (let j = 0; j < s.arity[i]; j += 1) {
      const to = j === 0 ? s.first[i] : s.second[i];
      const edge = s.edgeStart[i] + j;
      const contribution = local[edge] * upstream;
      const ec = productBound(local[edge], localBound[edge], upstream, eu, contribution);
      const after = overwrite ? contribution : grad[to] + contribution;
      const ea = overwrite ? ec : sumBound(bound[to], ec, after);
      befores.push(bound[to]);
      contributions.push(ec);
      afters.push(ea);
      grad[to] = after;
      bound[to] = ea;
    }
  }
  return { grad: bound, steps, contributions, befores, afters };
}

/**
 * Per array of the numbers reply (as `passes` names them), how far each of the server's numbers
 * may be from the page's. 0 where only IEEE arithmetic (the same operations on the same numbers,
 * in the same order) made the number: the server must agree to the bit. Where a row that calls
 * V8's Math took part, a bound carried forward and backward as interval arithmetic on each node's
 * corners: MATH_ULPS for each such result, the reach of its inputs' bounds through the row's own
 * forward and locals, one ulp of rounding per operation downstream (so a last-place difference
 * in tanh(x) becomes many ulps of tanh(x) − 0.76 after a subtraction, and the bound says so);
 * then doubled, plus MATCH_ULPS ulps of the number, for margin. Infinity at the edge of overflow.
 */
export function tolerances(s, values) {
  const { data, local } = forwardPass(s, values);
  const { dataBound, localBound } = forwardBounds(s, data, local);
  const shown = backwardBounds(s, local, localBound, s.visits, s.overwrite);
  const correct = s.variant ? backwardBounds(s, local, localBound, s.reverse, false) : shown;
  const bounds = {
    data: dataBound, grad: shown.grad, correct_grad: correct.grad, local_grad: localBound,
    step_grad: shown.steps, contribution: shown.contributions, grad_before: shown.befores,
    grad_after: shown.afters,
  };
  const base = passes(s, values).arrays;
  const out = {};
  for (const [name, bound] of Object.entries(bounds)) {
    out[name] = Float64Array.from(bound, (e, i) => (e === 0 ? 0 : 2 * e + MATCH_ULPS * ulpOf(base[name][i])));
  }
  return out;
}

// ---- The numeric gradient check (engine/gradcheck.py, the same arithmetic in the same order) ----

const agrees = (analytic, numeric) => Math.abs(analytic - numeric) <= 1e-5 + 1e-3 * Math.abs(numeric);

/** The nodes (topological) whose data depends on `leaf`, and the largest finite magnitude among
 *  their inputs' data. */
function downstream(s, data, leaf) {
  const dirty = new Uint8Array(s.count);
  dirty[leaf] = 1;
  const found = [];
  let largest = 0;
  for (const i of s.topo) {
    if (s.op[i] === LEAF) continue;
    const inputs = s.arity[i] > 1 ? [s.first[i], s.second[i]] : [s.first[i]];
    if (!inputs.some((c) => dirty[c])) continue;
    dirty[i] = 1;
    found.push(i);
    for (const c of inputs) {
      const size = Math.abs(data[c]);
      if (size > largest && size !== Infinity) largest = size;
    }
  }
  return { found, largest };
}

/** Recompute `nodes` into `datas`: the root's data and the largest finite magnitude computed. */
function recompute(s, datas, nodes) {
  let largest = 0;
  for (const i of nodes) {
    const value = forwardOf(s, datas, i);
    datas[i] = value;
    if (value - value === 0 && Math.abs(value) > largest) largest = Math.abs(value);
  }
  return { root: datas[s.root], largest };
}

function status(grad, numeric, oneSided, rounding) {
  if (!(Number.isFinite(numeric) && Number.isFinite(grad))) return "nonfinite";
  if (agrees(grad, numeric)) return "pass";
  if (Math.abs(grad - numeric) <= rounding) return "imprecise";
  const [right, left] = oneSided;
  if (Math.abs(right - left) > 2 * rounding && !agrees(right, left)) return "kink";
  return "fail";
}

function checkLeaf(s, leaf, data, grad) {
  const x = data[leaf.index];
  const h = 1e-6 * Math.max(1, Math.abs(x));
  const { found, largest: largestInput } = downstream(s, data, leaf.index);
  const datas = Float64Array.from(data);
  datas[leaf.index] = x + h;
  const plus = recompute(s, datas, found);
  datas[leaf.index] = x - h;
  const minus = recompute(s, datas, found);
  const numeric = (plus.root - minus.root) / (2 * h);
  const largest = pythonMax(plus.largest, minus.largest, largestInput, Math.abs(x));
  const rounding = (GRADCHECK_ROUNDING * largest) / h;
  const root = data[s.root];
  const oneSided = [(plus.root - root) / h, (root - minus.root) / h];
  return {
    name: leaf.name, id: `n${leaf.index}`, analytic: toJson(grad), numeric: toJson(numeric),
    status: status(grad, numeric, oneSided, rounding),
  };
}

/** Python's max: the first of the largest, a nan kept only where it comes first (comparisons with
 *  nan are false), unlike Math.max's nan anywhere. */
function pythonMax(...xs) {
  return xs.reduce((best, x) => (x > best ? x : best));
}

/** engine/gradcheck.py `gradcheck` of the correct grads `grad`. */
function gradcheck(s, data, grad) {
  const total = s.leaves.length;
  const capped = s.count > GRADCHECK_MAX_NODES || total > GRADCHECK_MAX_LEAVES;
  const checked = s.count > GRADCHECK_MAX_NODES ? [] : s.leaves.slice(0, GRADCHECK_MAX_LEAVES);
  return {
    eps_rule: GRADCHECK_EPS_RULE, checked: checked.length, total, capped,
    results: checked.map((leaf) => checkLeaf(s, leaf, data, grad[leaf.index])),
  };
}

// ---- Agreement with the server's numbers ----

/** How many units in the last place `x` and `y` are apart (0 for the same non-finite value or for
 *  0 and −0, Infinity for different non-finite values). */
export function ulpsApart(x, y) {
  if (!Number.isFinite(x) || !Number.isFinite(y)) return Object.is(x, y) || (x !== x && y !== y) ? 0 : Infinity;
  if (x === y) return 0;
  return Math.abs(x - y) / ulp(Math.max(Math.abs(x), Math.abs(y)));
}

/** The spacing of doubles at x ≥ 0 (Python's math.ulp for a finite x). */
function ulp(x) {
  if (x < 2 ** -1021) return 2 ** -1074;
  const exponent = Math.floor(Math.log2(x));
  // log2 can round up just below a power of two: take the power that does not exceed x.
  const power = 2 ** exponent > x ? 2 ** (exponent - 1) : 2 ** exponent;
  return power * 2 ** -52;
}


/** Whether `x` and `y` agree within `allowed` (the same value if not finite). */
function within(x, y, allowed) {
  if (allowed === Infinity) return true;
  if (!Number.isFinite(x) || !Number.isFinite(y)) return Object.is(x, y) || (x !== x && y !== y);
  return Math.abs(x - y) <= allowed;
}

/** A gradient check's status as compared: "imprecise" (the difference is within what rounding can
 *  make at this eps) is "pass" seen at the rounding floor, where the difference quotient is a
 *  last-place difference of the root times 1/(2h) and V8's exp against glibc's decides it (a
 *  gradient that cancels to 0 on the page, 2^-25 on the server: 0 = 0, pass; -0.00047 against
 *  2^-25, imprecise). */
const verdict = (status) => (status === "imprecise" ? "pass" : status);

/**
 * Where the page's numbers reply `page` and the server's `server` (same structure) disagree,
 * given `tolerance` (`tolerances()` of the same values): a list of {array, index, page, server},
 * empty when every number is within its tolerance, every node warning has the same type, the
 * gradient check the same statuses (`verdict`) and analytic gradients (the numeric ones are difference
 * quotients, which magnify a last-place difference by 1/eps: only their status is compared) and
 * the server's gradient flags are the page's rule applied to the server's numbers (`s`: the
 * compiled structure).
 */
export function differences(page, server, tolerance, s) {
  const found = [];
  for (const array of NUMBER_ARRAYS) { // compared number by number (correct_grad: null is grad)
    const mine = array === "correct_grad" ? page.correct_grad ?? page.grad : page[array];
    const theirs = array === "correct_grad" ? server.correct_grad ?? server.grad : server[array];
    if (mine.length !== theirs.length) {
      found.push({ array, index: -1, page: mine.length, server: theirs.length });
      continue;
    }
    const allowed = tolerance[array];
    for (let i = 0; i < mine.length; i += 1) {
      if (!within(fromJson(mine[i]), fromJson(theirs[i]), allowed[i])) found.push({ array, index: i, page: mine[i], server: theirs[i] });
    }
  }
  const types = (reply) => JSON.stringify(Object.entries(reply.node_warnings ?? {}).map(([id, ws]) => [id, ws.map((w) => w.type)]).sort());
  if (types(page) !== types(server)) found.push({ array: "node_warnings", index: -1, page: types(page), server: types(server) });
  // The gradient flags: the server's are what the page's rule makes of the server's own numbers,
  // exactly. The page's flags, made of its own numbers, are not compared with them: a number within
  // its tolerance of a threshold (a grad a millionth of the largest, a tanh at 0.999) is flagged or
  // not by its last places.
  const flags = (found) => JSON.stringify(Object.entries(found ?? {}).sort());
  const [ruled, flagged] = [flags(flagsOf(s, server)), flags(server.grad_flags)];
  if (ruled !== flagged) found.push({ array: "grad_flags", index: -1, page: ruled, server: flagged });
  const checks = (reply) => reply.gradcheck?.results ?? [];
  const [mine, theirs] = [checks(page), checks(server)];
  if (mine.length !== theirs.length) found.push({ array: "gradcheck", index: -1, page: mine.length, server: theirs.length });
  else {
    const grads = tolerance.correct_grad;
    mine.forEach((result, i) => {
      const other = theirs[i];
      const allowed = grads[Number(result.id.slice(1))];
      if (verdict(result.status) !== verdict(other.status) || !within(fromJson(result.analytic), fromJson(other.analytic), allowed)) {
        found.push({ array: "gradcheck", index: i, page: result, server: other });
      }
    });
  }
  return found;
}
