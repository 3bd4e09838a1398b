// The one place a node's name is decided: what a learner reads on its card, in the narration-like
// sentences the page writes, the tables and the labs. (Issue 22 may make a node's display label
// differ from its variable name: that choice is made here.)

/** The name a learner reads for a node: its label, else its source text, else its id. */
export function nodeName(node) {
  return node.label || node.text || node.id;
}

/** The name in a formula: a plain name as it is, anything else (`a*b`) in parentheses. */
export function formulaName(node) {
  const name = nodeName(node);
  return /^[\w.]+$/.test(name) || /^\(.*\)$/.test(name) ? name : `(${name})`;
}
