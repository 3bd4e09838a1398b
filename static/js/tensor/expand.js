// "Expand" of a tensor op, as data (no DOM): which cards offer it, the op's scalar graph (POST
// /api/expand with `graph`: cards and edges in /api/graph's shape, laid out by the server) as a
// trace graph/draw.js draws as it draws a scalar program, the view of its numbers, the numbers
// after a cell's drag, and a card's numbers in words.

import { fillOp, opRow } from "../compute/ops.js";
import { traceIndex } from "../core/frames.js";
import { compactText, preciseText } from "../core/format.js";
import { t } from "../core/i18n.js";

/** Whether tensor `node` of a tensor reply offers Expand: an op's float tensor that built nodes. */
export function expandable(node) {
  return node.kind === "op" && node.dtype === "float" && node.elements[1] > node.elements[0];
}

/**
 * The trace graph/draw.js draws for `reply` (POST /api/expand's, with `graph`): its cards and
 * edges, no timeline (the numbers shown are the final ones), no root (the op's outputs are
 * many), and the source of the program it came from.
 */
export function expandedTrace(reply, source) {
  const { nodes, edges, layout } = reply.graph;
  return { kind: "expansion", tensor: reply.tensor, limit: reply.limit, count: reply.nodes.length, nodes, edges, layout, steps: [], root: null, source };
}

/**
 * The view graph/draw.js reads (core/frames.js viewAt's shape) of `trace` at the end of the
 * backward pass: every card's data and grad (a constant's grad hidden, as everywhere), every op
 * computed, no step current, no edge lit.
 */
export function expandedView(trace) {
  const { nodeById } = traceIndex(trace);
  const gradOf = (id) => {
    const node = nodeById.get(id);
    return node && node.kind !== "const" ? node.grad : undefined;
  };
  return {
    data: { get: (id) => nodeById.get(id)?.data },
    grad: { get: gradOf, has: (id) => gradOf(id) !== undefined },
    computed: { has: (id) => nodeById.get(id)?.kind === "op" },
    visited: { has: () => false },
    edges: { get: () => undefined },
    active: [],
    current: null, step: null, stepIndex: -1, shown: 0, frame: -1, gradRow: "grad",
  };
}

/**
 * `trace` with other numbers, from the page's pass over the program's scalar graph
 * (tensor/page-numbers.js `nodeNumbers`): `numbers.data(node)`, `numbers.grad(node)` by node id
 * in the element graph (`n38` is 38), `numbers.local(node, index)` an edge's local derivative,
 * `numbers.warning(node)` a warning's type (the page has no sentence for it: its message is
 * null, as the scalar view's page-computed warnings). The cards and edges keep their places.
 */
export function withNumbers(trace, numbers) {
  const id = (card) => Number(card.id.slice(1));
  const nodes = trace.nodes.map((card) => {
    const type = numbers.warning(id(card));
    const warnings = !type ? [] : card.warnings[0]?.type === type ? card.warnings : [{ type, message: null }];
    return { ...card, data: numbers.data(id(card)), grad: numbers.grad(id(card)), warnings };
  });
  const edges = trace.edges.map((edge) => ({ ...edge, local_grad: numbers.local(Number(edge.target.slice(1)), edge.index) }));
  return { ...trace, nodes, edges };
}

/** `trace` with the numbers of `reply` (POST /api/expand's again, for new values: the same cards). */
export function withReplyNumbers(trace, reply) {
  const nodes = new Map(reply.graph.nodes.map((card) => [card.id, card]));
  const edges = new Map(reply.graph.edges.map((edge) => [edge.id, edge]));
  return {
    ...trace,
    nodes: trace.nodes.map((card) => ({ ...card, data: nodes.get(card.id).data, grad: nodes.get(card.id).grad, warnings: nodes.get(card.id).warnings })),
    edges: trace.edges.map((edge) => ({ ...edge, local_grad: edges.get(edge.id).local_grad })),
  };
}

/** Whether `text` has a blank outside its brackets: `a·b + c` does, `exp(a + b)` does not. */
function spaced(text) {
  let depth = 0;
  for (const ch of text) {
    depth += ("([".includes(ch) ? 1 : 0) - (")]".includes(ch) ? 1 : 0);
    if (ch === " " && depth === 0) return true;
  }
  return false;
}

/** An operand as an expansion's formula writes it: an element's name (`X[0,1]`, `(X @ W)[2,1]`)
 *  as it is, a negative number or another node's formula with blanks in brackets (a call's own
 *  suffice), as engine/tensor_reply.py writes the cards' texts. */
function operandOf(node, call) {
  const text = node.label || node.text;
  const compound = node.label ? node.label.startsWith("\u2212") : spaced(text);
  return compound && !call ? `(${text})` : text;
}

/** `(X @ W)[2,1] = (X[2,0]·W[0,1]) + (X[2,1]·W[1,1])`, `X[2,0]·W[0,1]`: the table's formula in
 *  the inputs' names (controls/explain.js definitionOf, with an element's name one operand). */
function definitionOf(node, nodeById) {
  const row = opRow(node);
  const inputs = node.inputs.map((id) => operandOf(nodeById.get(id), row.call));
  const k = node.exponent === null || node.exponent === undefined ? "" : compactText(node.exponent);
  const expression = fillOp(row.formula, { inputs, k });
  return node.label ? `${node.label} = ${expression}` : expression;
}

/** Card `id`'s numbers in words: `X[0,0]·W[0,1]: data = 0.1, grad = −0.0427`. */
export function cardNumbers(trace, id) {
  const { nodeById } = traceIndex(trace);
  const node = nodeById.get(id);
  const definition = node.kind === "op" ? definitionOf(node, nodeById) : node.label || node.text;
  const grad = node.kind === "const" ? "--" : preciseText(node.grad);
  return t("ui.tensor.expand_node", { definition, data: preciseText(node.data), grad });
}
