// A tensor program's numbers, computed in the page: a dragged cell repaints every tensor with no
// request, and the one-file HTML recomputes offline. No DOM.
//
// It runs over the scalar graph the engine built (POST /api/tensor-graph, docs/api.md "The scalar
// graph of a tensor program"), not over tensors: there is no tensor-level formula here, forward
// or backward. Each node's forward and local derivatives are the op table's generated functions
// (compute/op-functions.js, from engine/ops.py), and the order of work is the engine's, so the
// numbers are the server's (to the bit where only + − × ÷ enter; within the scalar evaluator's
// MATCH_ULPS where V8's exp/log/tanh/pow do):
// - forward: every node in build order (engine/tensors.py builds each node after its inputs);
//   softmax's shift (a constant, the largest of its row) and a `max`'s choice (the first
//   largest) computed again from the new numbers, as engine/tensors.py chose them;
// - backward: every grad 0, the root's 1, then the nodes the root depends on from the root down
//   (engine/tensor_program.py run_backward), `grad[input] += local × grad[node]` in input order
//   (engine/backward.py backward);
// - what each op passed each input (a backward step's `grads`): engine/tensor_reply.py
//   `_contributions`, the same additions in the same order.
//
//   const graph = compileGraph(scalarGraph, reply);   // once per program
//   const next = recompute(graph, reply, { "W[1,2]": 0.25 });  // the /api/graph reply for them

import { OPS, TENSOR_GRAPH_CONSTANT as CONSTANT, TENSOR_GRAPH_LEAF as LEAF, forwardInto } from "../compute/op-functions.js";
import { fromJson, tolerances, toJson, warningOf } from "../compute/evaluator.js";

const OP_PLACES = Object.keys(OPS); // a row's place: its code for forwardInto

/** The row-major index of element `flat` of `shape`. */
function indexOf(flat, shape) {
  const index = new Array(shape.length);
  for (let d = shape.length - 1; d >= 0; d -= 1) {
    index[d] = flat % shape[d];
    flat = Math.floor(flat / shape[d]);
  }
  return index;
}

/** Per node, where its group starts in `flat` ([node, count, *members, …]), else -1. */
function groupsOf(flat, count) {
  const start = new Int32Array(count).fill(-1);
  for (let k = 0; k < flat.length; k += 2 + flat[k + 1]) start[flat[k]] = k;
  return start;
}

/** Which nodes the root depends on (engine/tensor_program.py run_backward), with `first`/`second`
 *  the inputs as the numbers chose them. */
function reachedFrom(s) {
  const reached = new Uint8Array(s.count);
  reached[s.root] = 1;
  for (let i = s.root; i >= 0; i -= 1) {
    if (!reached[i] || s.op[i] < 0) continue;
    reached[s.first[i]] = 1;
    if (s.arity[i] > 1) reached[s.second[i]] = 1;
  }
  return reached;
}

/**
 * The scalar graph `graph` (POST /api/tensor-graph's reply, for the program of `reply`, its
 * /api/graph reply) as typed arrays, with the places of what the backward steps report. Throws
 * on a graph this page cannot run (an op it does not know, another program's graph).
 */
export function compileGraph(graph, reply) {
  if (graph.kind !== "tensor-graph" || graph.source !== reply.source) throw new Error("the scalar graph of another program");
  if (graph.element_start.length !== reply.nodes.length + 1) throw new Error("the scalar graph of other tensors");
  const rows = graph.ops.map((key, code) => {
    const row = OPS[key];
    if (!row || row.arity !== graph.arity[code]) throw new Error(`unknown op ${key}`);
    return row;
  });
  const count = graph.op.length;
  const op = Int8Array.from(graph.op);
  const arity = new Uint8Array(count);
  const first = new Int32Array(count);
  const second = new Int32Array(count);
  const exponent = new Float64Array(count);
  const edgeStart = new Int32Array(count + 1);
  const constant = new Float64Array(count);
  let edges = 0;
  let exponents = 0;
  let numbers = 0;
  for (let i = 0; i < count; i += 1) {
    edgeStart[i] = edges;
    if (op[i] < 0) {
      constant[i] = fromJson(graph.numbers[numbers++]);
      continue;
    }
    const n = graph.arity[op[i]];
    arity[i] = n;
    first[i] = graph.inputs[edges];
    second[i] = n > 1 ? graph.inputs[edges + 1] : -1;
    if (graph.ops[op[i]] === "**k") exponent[i] = fromJson(graph.exponents[exponents++]);
    edges += n;
  }
  edgeStart[count] = edges;
  const elements = Int32Array.from(graph.elements);
  const tensorElements = reply.nodes.map((_, t) => elements.subarray(graph.element_start[t], graph.element_start[t + 1]));
  // A named leaf's elements by their `values` key (`W[1,2]`, docs/tensors.md).
  const leafNode = new Map();
  for (const leaf of reply.leaves) {
    const t = reply.nodes.findIndex((node) => node.id === leaf.id);
    tensorElements[t].forEach((node, flat) => leafNode.set(`${leaf.name}[${indexOf(flat, leaf.shape).join(",")}]`, node));
  }
  const s = {
    count, edges, rows, places: Int8Array.from(graph.ops, (key) => OP_PLACES.indexOf(key)),
    op, arity, first, second, exponent, edgeStart, constant, root: graph.root,
    maxima: Int32Array.from(graph.maxima), maxStart: groupsOf(graph.maxima, count),
    choices: Int32Array.from(graph.choices), choiceStart: groupsOf(graph.choices, count),
    tensorElements, leafNode, recomputable: graph.recomputable, graphOps: graph.ops,
  };
  s.reached = reachedFrom(s);
  s.steps = stepSlots(s, reply);
  s.last = null;
  forward(s, null); // the program's own numbers: a drag then computes what it changed
  return s;
}

/**
 * Per backward step of `reply`, per input it reports, where that input's sums start in one
 * Float64Array; per edge, the sum it adds to (-1: none): engine/tensor_reply.py
 * `_contributions` (an edge from an input's element into a node its op built).
 */
function stepSlots(s, reply) {
  const position = new Map(reply.nodes.map((node, t) => [node.id, t]));
  const edgeSlot = new Int32Array(s.edges).fill(-1);
  const ranges = [];
  const reported = [];
  let slots = 0;
  reply.steps.forEach((step, k) => {
    if (step.phase !== "backward") return;
    const node = reply.nodes[position.get(step.node)];
    const [start, end] = node.elements;
    const where = new Map();
    for (const passed of step.grads ?? []) {
      const elements = s.tensorElements[position.get(passed.input)];
      elements.forEach((element, flat) => where.set(element, slots + flat));
      reported.push({ step: k, input: passed.input, start: slots, shape: reply.nodes[position.get(passed.input)].shape });
      slots += elements.length;
    }
    let choosing = false;
    for (let i = start; i < end; i += 1) {
      choosing ||= s.choiceStart[i] >= 0;
      for (let j = 0; j < s.arity[i]; j += 1) {
        const child = j === 0 ? s.first[i] : s.second[i];
        if (child < start && where.has(child)) edgeSlot[s.edgeStart[i] + j] = where.get(child);
      }
    }
    // A `max` passes its gradient to the element the numbers choose: its slot is looked up.
    ranges.push([start, end, choosing ? where : null]);
  });
  return { edgeSlot, ranges, reported, slots };
}

/** The first largest of a group's members' data (Python's max: a later one only if greater). */
function largestAt(data, flat, at) {
  let best = flat[at + 2];
  for (let k = at + 3; k < at + 2 + flat[at + 1]; k += 1) if (data[flat[k]] > data[best]) best = flat[k];
  return best;
}

/** Whether any of a group's members changed. */
function anyDirty(dirty, flat, at) {
  for (let k = at + 2; k < at + 2 + flat[at + 1]; k += 1) if (dirty[flat[k]]) return true;
  return false;
}

/**
 * The forward pass: every node's data and local derivatives, and its warning where not finite,
 * into `s.last` (its arrays are reused, move after move). Only the nodes whose inputs changed
 * since the last pass are computed again (a dragged cell changes a part of the graph; the same
 * functions on the same numbers give the same numbers); the first pass computes all.
 */
function forward(s, values) {
  const fresh = !s.last;
  if (fresh) s.last = { data: s.constant.slice(), local: new Float64Array(s.edges), warnings: new Map(), dirty: new Uint8Array(s.count) };
  const { data, local, warnings, dirty } = s.last;
  dirty.fill(0);
  for (const [key, node] of s.leafNode) {
    const given = values?.[key];
    // As the request's JSON carries a value (−0 is 0 there): + 0 makes −0 0, nothing else.
    const value = given === undefined || given === null ? s.constant[node] : fromJson(given) + 0;
    if (fresh || !Object.is(value, data[node])) {
      data[node] = value;
      dirty[node] = 1;
    }
  }
  let rechosen = false;
  const { op, rows, places, first, second, arity, exponent, edgeStart, maxStart, choiceStart, maxima, choices } = s;
  for (let i = 0; i < s.count; i += 1) {
    const code = op[i];
    if (code < 0) {
      if (code === CONSTANT && maxStart[i] >= 0 && (fresh || anyDirty(dirty, maxima, maxStart[i]))) {
        const top = data[largestAt(data, maxima, maxStart[i])];
        if (fresh || !Object.is(top, data[i])) dirty[i] = 1;
        data[i] = top;
      }
      continue;
    }
    const choosing = choiceStart[i] >= 0 && (fresh || anyDirty(dirty, choices, choiceStart[i]));
    if (choosing) {
      const chosen = largestAt(data, choices, choiceStart[i]);
      if (chosen !== first[i]) {
        first[i] = chosen;
        rechosen = true;
      }
    }
    if (!fresh && !choosing && !dirty[first[i]] && !(arity[i] > 1 && dirty[second[i]])) continue;
    const before = data[i];
    forwardInto(places[code], data, i, first[i], arity[i] > 1 ? second[i] : -1, exponent, local, edgeStart[i]);
    const out = data[i];
    if (fresh || !Object.is(out, before)) dirty[i] = 1;
    const b = arity[i] > 1 ? data[second[i]] : 0;
    const type = out - out !== 0 ? warningOf(rows[code], data[first[i]], b, exponent[i], out, arity[i]) : null;
    if (type !== null) warnings.set(i, type);
    else if (warnings.size) warnings.delete(i);
  }
  if (rechosen) s.reached = reachedFrom(s);
  return s.last;
}

/** The backward pass from the root over the nodes it depends on, from the root down. */
function backward(s, local) {
  const grad = (s.grad ??= new Float64Array(s.count));
  grad.fill(0);
  const { reached, op, first, second, arity, edgeStart } = s;
  grad[s.root] = 1;
  for (let i = s.root; i >= 0; i -= 1) {
    if (!reached[i] || op[i] < 0) continue;
    const upstream = grad[i];
    const e = edgeStart[i];
    grad[first[i]] += local[e] * upstream;
    if (arity[i] > 1) grad[second[i]] += local[e + 1] * upstream;
  }
  return grad;
}

/** What each backward step's op passed each input: `local × upstream` over its edges, in order. */
function passedBack(s, local, grad) {
  const { edgeSlot, ranges, slots } = s.steps;
  const sums = new Float64Array(slots);
  const { arity, edgeStart, choiceStart, first } = s;
  for (const [start, end, where] of ranges) {
    for (let i = start; i < end; i += 1) {
      const e = edgeStart[i];
      for (let j = 0; j < arity[i]; j += 1) {
        const slot = where && choiceStart[i] >= 0 ? where.get(first[i]) ?? -1 : edgeSlot[e + j];
        if (slot >= 0) sums[slot] += local[e + j] * grad[i];
      }
    }
  }
  return sums;
}

/** `compute()` once, when first asked for. */
function onFirstRead(compute) {
  let value;
  return () => (value ??= compute());
}

/** Nested lists of `shape` (a number for shape []) of `at(flat)`, as a reply writes them. */
function nested(shape, at, offset = 0, dim = 0) {
  if (dim === shape.length) return toJson(at(offset));
  const size = shape[dim];
  let stride = 1;
  for (let d = dim + 1; d < shape.length; d += 1) stride *= shape[d];
  const out = new Array(size);
  for (let k = 0; k < size; k += 1) out[k] = nested(shape, at, offset + k * stride, dim + 1);
  return out;
}

/** Per tensor, its elements' warnings counted by type (the reply's `warnings`), sorted by type. */
function warningCounts(elements, warnings) {
  if (!warnings.size) return [];
  const counted = new Map();
  for (const node of elements) {
    const type = warnings.get(node);
    if (type !== undefined) counted.set(type, (counted.get(type) ?? 0) + 1);
  }
  return [...counted].sort(([a], [b]) => (a < b ? -1 : 1)).map(([type, count]) => ({ type, count }));
}

/** A `max`'s `argmax` (docs/api.md, TensorNode `args`): per output element, the position of the
 *  element it chose among its candidates. */
function chosenOf(s, elements) {
  return Array.from(elements, (node) => {
    const at = s.choiceStart[node];
    for (let k = 0; k < s.choices[at + 1]; k += 1) if (s.choices[at + 2 + k] === s.first[node]) return k;
    return -1;
  });
}

/**
 * The /api/graph reply of `reply`'s program for `values` ({`W[1,2]`: number}, the program's
 * numbers for the elements not given), computed on the compiled graph `s`: every tensor's
 * `data`, `grad` and `warnings`, each backward step's `grads`; the rest of `reply` as it is.
 */
export function recompute(s, reply, values) {
  const { data, local, warnings } = forward(s, values);
  const grad = backward(s, local);
  // What the backward steps passed: read only where the timeline shows a gradient part-way
  // (tensor/timeline.js), so summed when first read, from this pass's numbers, which the next
  // recompute overwrites (the page shows the newest reply alone; an older one's read throws).
  const generation = (s.generation = (s.generation ?? 0) + 1);
  const passed = onFirstRead(() => {
    if (s.generation !== generation) throw new Error("these numbers were replaced by a newer recompute");
    return passedBack(s, local, grad);
  });
  const nodes = reply.nodes.map((node, t) => {
    if (node.dtype === "int") return node;
    const elements = s.tensorElements[t];
    const argmax = node.args?.argmax ? { args: { ...node.args, argmax: chosenOf(s, elements) } } : {};
    const flat = { data: new Float64Array(elements.length), grad: new Float64Array(elements.length) };
    for (let k = 0; k < elements.length; k += 1) {
      flat.data[k] = data[elements[k]];
      flat.grad[k] = grad[elements[k]];
    }
    const out = {
      ...node,
      ...argmax,
      data: nested(node.shape, (k) => flat.data[k]),
      grad: nested(node.shape, (k) => flat.grad[k]),
      warnings: warningCounts(elements, warnings),
    };
    // The same numbers, flat and row-major, for a drawing (tensor/draw.js); not in the JSON.
    return Object.defineProperty(out, "flat", { value: flat, enumerable: false });
  });
  const steps = reply.steps.slice();
  for (const { step, input, start, shape } of s.steps.reported) {
    const old = steps[step];
    if (old.grads === reply.steps[step].grads) steps[step] = { ...old, grads: old.grads.slice() };
    const grads = steps[step].grads;
    const at = grads.findIndex((g) => g.input === input);
    // Its fields in their order, `grad` summed when first read (an earlier recompute's `grad`
    // is a getter of numbers now replaced: not read).
    const entry = {};
    let grad;
    for (const key of Object.keys(grads[at])) {
      if (key !== "grad") entry[key] = grads[at][key];
      else Object.defineProperty(entry, "grad", { enumerable: true, get: () => (grad ??= nested(shape, (k) => passed()[start + k])) });
    }
    grads[at] = entry;
  }
  return { ...reply, nodes, steps, numbersFrom: "page" };
}

/**
 * How far the server's numbers may be from those of the last `recompute` on `s`: per node, its
 * data's and its grad's bound (`{data, grad}`, Float64Arrays by node id), from the scalar
 * evaluator's `tolerances` (compute/evaluator.js: 0 where + − × ÷ alone made a number, else the
 * reach of V8's Math functions' last-place differences carried forward and backward, plus
 * MATCH_ULPS). The graph is handed to it as its structure: every leaf at its number, softmax's
 * shift a copy of the element it is (its bound is that element's; no gradient through it).
 */
export function tolerancesOf(s) {
  const keys = Object.keys(OPS);
  const copy = keys.indexOf("copy");
  const { data } = s.last;
  const op = new Int8Array(s.count);
  const arity = new Uint8Array(s.count);
  const first = new Int32Array(s.count);
  const second = new Int32Array(s.count);
  const edgeStart = new Int32Array(s.count + 1);
  let edges = 0;
  const visits = [];
  for (let i = 0; i < s.count; i += 1) {
    edgeStart[i] = edges;
    if (s.op[i] < 0 && s.maxStart[i] >= 0) {
      [op[i], arity[i], first[i]] = [copy, 1, largestAt(data, s.maxima, s.maxStart[i])];
    } else if (s.op[i] < 0) {
      op[i] = LEAF; // the evaluator's leaf code is the graph's, -1
      continue;
    } else {
      [op[i], arity[i], first[i], second[i]] = [keys.indexOf(s.graphOps[s.op[i]]), s.arity[i], s.first[i], s.second[i]];
    }
    edges += arity[i];
  }
  edgeStart[s.count] = edges;
  for (let i = s.root; i >= 0; i -= 1) if (s.reached[i] && s.op[i] >= 0) visits.push(i);
  const topo = Int32Array.from({ length: s.count }, (_, i) => i);
  const structure = {
    count: s.count, edges, op, arity, first, second, exponent: s.exponent, edgeStart, constant: data,
    topo, visits: Int32Array.from(visits), reverse: topo.slice().reverse(), root: s.root,
    contributionCount: visits.reduce((sum, i) => sum + arity[i], 0), overwrite: false, variant: false, leaves: [],
  };
  const { data: dataBound, grad: gradBound } = tolerances(structure, {});
  return { data: dataBound, grad: gradBound };
}

/** Per node of op tensor `t` (its `elements` range), the output element (flat) it is part of:
 *  the first output element whose nodes, within the op, reach it (engine/tensor_reply.py
 *  `_output_of`, walked with an explicit stack in the same order). */
function outputsOf(s, reply, t) {
  const cache = (s.outputs ??= new Map());
  if (cache.has(t)) return cache.get(t);
  const [start, end] = reply.nodes[t].elements;
  const owner = new Map();
  s.tensorElements[t].forEach((output, flat) => {
    const stack = [output];
    while (stack.length) {
      const node = stack.pop();
      if (node < start || node >= end || owner.has(node)) continue;
      owner.set(node, flat);
      if (s.op[node] < 0) continue;
      stack.push(s.first[node]);
      if (s.arity[node] > 1) stack.push(s.second[node]);
    }
  });
  cache.set(t, owner);
  return owner;
}

/**
 * The last recompute's numbers of single scalar nodes, by node id (`n38` of POST /api/expand's
 * graph is 38), as a reply writes them: `data(i)`, `grad(i)`, `local(i, j)`, the local
 * derivative of node i's input j, and `warning(i)`, its warning's type or null. Null before the
 * first recompute.
 */
export function nodeNumbers(s) {
  if (!s.last) return null;
  const { data, local, warnings } = s.last;
  const grad = s.grad;
  return {
    data: (i) => toJson(data[i]),
    grad: (i) => toJson(grad[i]),
    local: (i, j) => toJson(local[s.edgeStart[i] + j]),
    warning: (i) => warnings.get(i) ?? null,
  };
}

/**
 * POST /api/fan-in's reply (docs/api.md) for element `index` of tensor `id` of `reply`, from the
 * last recompute's numbers: every edge from the element into a node the root depends on, the
 * last node first (engine/tensor_reply.py `fan_in`), and their sum in that order. Null for a
 * tensor without gradients.
 */
export function elementFanIn(s, reply, id, index) {
  const t = reply.nodes.findIndex((node) => node.id === id);
  const node = reply.nodes[t];
  if (!node || node.dtype === "int" || !s.last) return null;
  let flat = 0;
  index.forEach((i, d) => {
    flat = flat * node.shape[d] + i;
  });
  const element = s.tensorElements[t][flat];
  const { local } = s.last;
  const grad = s.grad;
  const owners = reply.nodes.map((n, k) => [k, n.elements]).filter(([k, [start, end]]) => end > start && s.tensorElements[k].length);
  const contributions = [];
  let sum = 0;
  for (let i = s.count - 1; i > element; i -= 1) {
    if (!s.reached[i] || s.op[i] < 0) continue;
    for (let j = 0; j < s.arity[i]; j += 1) {
      if ((j === 0 ? s.first[i] : s.second[i]) !== element) continue;
      const [owner] = owners.find(([, [start, end]]) => start <= i && i < end);
      const upstream = grad[i];
      const derivative = local[s.edgeStart[i] + j];
      const contribution = derivative * upstream;
      sum += contribution;
      contributions.push({
        tensor: reply.nodes[owner].id, output: indexOf(outputsOf(s, reply, owner).get(i), reply.nodes[owner].shape), node: i,
        upstream: toJson(upstream), local: toJson(derivative), contribution: toJson(contribution),
      });
    }
  }
  return { tensor: id, index: [...index], grad: toJson(grad[element]), sum: toJson(sum), contributions };
}
