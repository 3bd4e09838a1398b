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
