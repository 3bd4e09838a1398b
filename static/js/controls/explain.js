// The chain rule in words and formulas: each edge's local derivative, each node's sum of
// contributions. Pure functions of the trace and a view (core/frames.js viewAt); no DOM.

import { chainText, compactText, productText } from "../core/format.js";
import { formulaName, nodeName } from "../core/names.js";
import { fillOp, isDead, opRow } from "../compute/ops.js";
import { t } from "../core/i18n.js";
import { framesOf, traceIndex } from "../core/frames.js";
import { drawingOf } from "../compute/merge-numbers.js";
import { stepColumns } from "../core/step-columns.js";

/** The exponent of a constant power as formulas write it (empty for other ops). */
const exponentText = (node) => (node.exponent === null || node.exponent === undefined ? "" : compactText(node.exponent));

/** `e + b`, `a·b`, `tanh(n)`, `a ** 2`: the table's `formula` in the inputs' names. */
export function expressionOf(node, nodeById) {
  if (!node.op) return formulaName(node);
  const row = opRow(node);
  // A call's own parentheses suffice: `tanh(a*b)`, not `tanh((a*b))`.
  const inputs = node.inputs.map((id) => (row.call ? nodeName : formulaName)(nodeById.get(id)));
  return fillOp(row.formula, { inputs, k: exponentText(node) });
}

/** `f = e·c` (for a node without a label: just the expression). */
export function definitionOf(node, nodeById) {
  const expression = expressionOf(node, nodeById);
  return node.label && node.kind === "op" ? `${node.label} = ${expression}` : expression;
}

/** The local derivative ∂target/∂input as a formula in the inputs' names (without its value):
 * the table's `locals`, the same expressions the engine computes. */
export function localFormula(target, index, nodeById) {
  const inputs = target.inputs.map((id) => formulaName(nodeById.get(id)));
  const template = opRow(target).locals[index];
  return fillOp(template, { inputs, k: exponentText(target), out: formulaName(target) });
}

/** Is the backward pass over at frame `step` (its last API step shown)? */
export function passComplete(trace, step) {
  const frames = framesOf(trace);
  return frames.length > 0 && step >= frames.length - 1;
}

/**
 * Everything the edge panel says about `edgeId` at `view`:
 * {title, operation, derivative: "∂f/∂e = c = 10", chain: "1 × 10 = 10" | null, chainWords}.
 */
export function explainEdge(trace, view, edgeId) {
  const { nodeById, edgeById } = traceIndex(trace);
  const edge = edgeById.get(edgeId);
  const source = nodeById.get(edge.source);
  const target = nodeById.get(edge.target);
  const [s, tn] = [formulaName(source), formulaName(target)];
  const formula = localFormula(target, edge.index, nodeById);
  const value = compactText(edge.local_grad);
  const partial = `\u2202${tn}/\u2202${s}`;
  const derivative = formula === value ? `${partial} = ${value}` : `${partial} = ${formula} = ${value}`;
  const shown = view.edges.get(edgeId);
  const c = shown?.contribution;
  return {
    title: t("ui.explain.edge_title", { source: s, target: tn }),
    operation: t("ui.explain.input_of", { definition: definitionOf(target, nodeById), index: edge.index + 1, count: target.inputs.length }),
    derivative,
    chain: c ? chainText(c) : null,
    chainWords: c
      ? t("ui.explain.chain_words", { target: tn, partial, source: s })
      : t("ui.explain.not_reached"),
  };
}

/** The aria-label of an edge: "edge e → f: ∂f/∂e". */
export function edgeAriaLabel(trace, edge) {
  const { nodeById } = traceIndex(trace);
  const [s, tn] = [formulaName(nodeById.get(edge.source)), formulaName(nodeById.get(edge.target))];
  return t("ui.explain.edge_aria", { source: s, target: tn, partial: `\u2202${tn}/\u2202${s}` });
}

/** The contributions into node `id` shown at `view` (all of them when `complete`), in pass order. */
export function contributionsInto(trace, view, id, { complete = false } = {}) {
  const { nodeById, edgeById } = traceIndex(trace);
  const out = [];
  const last = complete ? trace.steps.length - 1 : view.stepIndex;
  // Only the visits of the nodes `id` feeds are read as step objects (a big graph has many steps).
  const consumers = new Set(trace.edges.filter((e) => e.source === id).map((e) => e.target));
  const steps = stepColumns(drawingOf(trace).steps);
  for (let k = 0; k <= last; k++) {
    if (steps.phaseAt(k) !== "backward" || !consumers.has(steps.nodeAt(k))) continue;
    const step = trace.steps.at(k);
    const list = step.contributions ?? [];
    const shown = !complete && k === last ? view.shown : list.length;
    for (const c of list.slice(0, shown)) {
      if (c.to !== id) continue;
      const consumer = nodeById.get(edgeById.get(c.edge).target);
      out.push({ ...c, via: definitionOf(consumer, nodeById) });
    }
  }
  return out;
}

const WARNING_WORDS = {
  domain: "ui.warning.domain",
  overflow: "ui.warning.overflow",
  division_by_zero: "ui.warning.division_by_zero",
};

export function warningWords(warning) {
  return WARNING_WORDS[warning.type] ? t(WARNING_WORDS[warning.type]) : warning.type.replace(/_/g, " ");
}

/** A relu that passes no gradient (compute/ops.js isDead), once its data is on the card (its forward step has run). */
export function deadShown(node, view) {
  return isDead(node) && view.data.get(node.id) !== undefined;
}

/**
 * The node panel: {title, definition, sum: "grad[a] = 1·1 (via …) + 3·1 (via …) = 4", notes}.
 */
export function explainNode(trace, view, id, { complete = false } = {}) {
  const { nodeById } = traceIndex(trace);
  const node = nodeById.get(id);
  const name = formulaName(node);
  const notes = [];
  if (deadShown(node, view)) notes.push(t("ui.explain.dead", { input: formulaName(nodeById.get(node.inputs[0])) }));
  // A warning the page computed has no sentence (message null) until the server writes one.
  for (const w of node.warnings ?? []) notes.push(w.message ? `\u26a0 ${warningWords(w)}: ${w.message}` : `\u26a0 ${warningWords(w)}`);
  if (node.expansion) notes.push(t("ui.explain.derived", { expansion: node.expansion }));
  const fn = node.op ? opRow(node).function : null; // a call of the program's own function
  if (fn) notes.push(t("ui.explain.function", { name: fn.name, definition: fn.definition, line: fn.line }));
  const definition = node.kind === "op" ? definitionOf(node, nodeById)
    : node.kind === "const" ? t("ui.explain.constant", { value: compactText(node.data) }) : t("ui.explain.leaf", { name });
  let sum;
  if (node.kind === "const") {
    sum = t("ui.explain.constant_sum");
  } else if (id === trace.root) {
    sum = t(view.grad.has(id) || complete ? "ui.explain.seed" : "ui.explain.seed_pending", { name });
  } else {
    const parts = contributionsInto(trace, view, id, { complete });
    if (parts.length === 0) {
      sum = t("ui.explain.no_contribution", { name });
    } else {
      const terms = parts.map((c) => t("ui.explain.via", { product: productText(c, "\u00b7"), via: c.via }));
      const total = complete ? node.grad : parts[parts.length - 1].grad_after;
      // upstream·local per path, then the contributions themselves: "… = 1 + 3 = 4".
      const values = parts.length > 1 ? ` = ${parts.map((c) => compactText(c.contribution)).join(" + ")}` : "";
      sum = `grad[${name}] = ${terms.join(" + ")}${values} = ${compactText(total)}`;
    }
  }
  return { title: t("ui.explain.node_title", { name }), definition, sum, notes };
}
