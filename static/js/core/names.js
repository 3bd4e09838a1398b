// The one place a node's name is decided: what a learner reads on its card, in the narration-like
// sentences the page writes, the tables and the labs. A node's display label (`x.label = 'x1*w1'`
// in pasted micrograd) may differ from its variable name (`node.name`, the program's handle): the
// learner reads the label, as draw_dot shows it.

/** The name a learner reads for a node: its label, else its source text, else its id. */
export function nodeName(node) {
  return node.label || node.text || node.id;
}

/** The name a learner reads for a leaf of `trace.leaves` (a slider's caption): its display label,
 * else its variable name. */
export function leafName(leaf) {
  return leaf.label || leaf.name;
}

/** The name in a formula: a plain name as it is, anything else (`a*b`) in parentheses. */
export function formulaName(node) {
  const name = nodeName(node);
  return /^[\w.]+$/.test(name) || /^\(.*\)$/.test(name) ? name : `(${name})`;
}

// A name that says where a value lives, as micrograd's objects hold it: a variable, then attributes
// and indices, a subscript at most (`model.layers[1].neurons[3].w[0]`, a sample's `…neurons[0]₃`).
const PLACE = /^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*|\[\d+\])*\.[A-Za-z_]\w*(?:\[\d+\])*[\u2080-\u2089]*$/u;
const LAST_STEP = /[A-Za-z_]\w*(?:\[\d+\])*[\u2080-\u2089]*$/u;

const stepsOf = new WeakMap(); // a trace's nodes → Map program name → its place's last step

/** {program name → the last step of the place it is labelled with} (`model_layers1_neurons3_w0` →
 *  `w[0]`): the names a graph read from Values is written with (chainrule.notebook, the sandbox). */
function lastSteps(nodes) {
  let steps = stepsOf.get(nodes);
  if (steps) return steps;
  steps = new Map();
  for (const node of nodes) {
    if (node.name && node.label && node.label !== node.name && PLACE.test(node.label)) {
      steps.set(node.name, LAST_STEP.exec(node.label)[0]);
    }
  }
  stepsOf.set(nodes, steps);
  return steps;
}

/** `text` without parentheses around the whole of it. */
function unwrapped(text) {
  if (!text.startsWith("(") || !text.endsWith(")")) return text;
  let depth = 0;
  for (let i = 0; i < text.length - 1; i += 1) {
    if (text[i] === "(") depth += 1;
    else if (text[i] === ")") depth -= 1;
    if (depth === 0) return text; // the first "(" closes before the end: `(a) + (b)`
  }
  return text.slice(1, -1);
}

/** Where the last term of a sum of three or more starts in `text` (after its last " + " outside
 *  parentheses), or -1. */
function lastTermAt(text) {
  let depth = 0;
  const plus = [];
  for (let i = 0; i < text.length; i += 1) {
    if (text[i] === "(") depth += 1;
    else if (text[i] === ")") depth -= 1;
    else if (depth === 0 && text.startsWith(" + ", i)) plus.push(i);
  }
  return plus.length >= 2 ? plus[plus.length - 1] + 3 : -1;
}

/**
 * A card's name for an unnamed op of `trace` whose formula is too long for its card, or null (the
 * formula is cut at the card's edge, as any long name is). Cut there, a graph read from Values
 * reads alike on every node of a neuron (`model_layer…`: every name of its formulas is a place's,
 * `model_layers1_neurons3_w0 * model_layers0_neurons0_3`), and so do the lecture's two sums of
 * `w11*x1 + w12*x2 + b1`. So each name of a place is said by its place's last step, products
 * with `·` (`w[0]·neurons[0]₃`), and a running sum of three terms or more, of any names, by the
 * term it adds (`… + w[2]·neurons[2]₃`, `… + b1`). The formula is the node's source (its span),
 * whole where the reply's text was cut.
 */
export function shortFormula(node, trace) {
  if (node.kind !== "op" || node.label) return null;
  let formula = node.text ?? "";
  const span = node.span;
  if (formula.endsWith("\u2026") && typeof trace.source === "string" && span) {
    const whole = trace.source.slice(span[0], span[1]);
    if (whole.startsWith(formula.slice(0, -1))) formula = whole;
  }
  const steps = lastSteps(trace.nodes);
  let placed = false;
  const said = formula.replace(/[A-Za-z_]\w*/g, (name) => {
    const step = steps.get(name);
    placed ||= step !== undefined;
    return step ?? name;
  });
  const short = unwrapped(placed ? said.replace(/\s*(?<!\*)\*(?!\*)\s*/g, "\u00b7") : formula);
  const last = node.op === "+" ? lastTermAt(short) : -1;
  if (last >= 0) return `\u2026 + ${short.slice(last)}`;
  return placed ? short : null;
}
