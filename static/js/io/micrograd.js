// "Copy as micrograd Python": the trace as a runnable script for PyPI micrograd 0.1.0, whose
// Value(data, _children=(), _op='') has + * ** (number exponent) relu - / neg. The other ops
// (tanh, exp, log, sigmoid, sin, a ** b with a Value exponent) are emitted as helpers with their
// own _backward: the table's `script` and `prelude` lines, generated from the engine's formulas.

import { opRow, opRowOf, fillOp, opRows, CALL } from "../compute/ops.js";
import { traceIndex } from "../core/frames.js";

const PY_KEYWORDS = new Set(("False None True and as assert async await break class continue def del elif else except "
  + "finally for from global if import in is lambda nonlocal not or pass raise return try while with yield").split(" "));
// Names the scripts use themselves (micrograd's and PyTorch's): a program's name never takes them.
// Read from the table when asked, not at load: an embedded player is given its table after its
// modules load (compute/ops.js useOpTable).
const reserved = () => new Set(["Value", "math", "print", "torch",
  ...opRows().flatMap((row) => (row.helper ? [row.helper, ...Object.keys(row.prelude)] : []))]);

/** Text safe inside a Python `#` comment: no character that could end the line (a lone \r
 * does, for Python) or that Python refuses in source. */
export function commentText(text) {
  return String(text).replace(/[\u0000-\u001f\u007f\u0085\u2028\u2029]/g, " ");
}

/**
 * A Python literal for an API number ("Infinity"/"NaN" strings included). Code, not display: ASCII
 * minus and JS exponents (`1e+21` is valid Python), not core/format.js's rules; −0 stays -0.0.
 */
export function pyNumber(value) {
  if (value === "Infinity" || value === Infinity) return "math.inf";
  if (value === "-Infinity" || value === -Infinity) return "-math.inf";
  if (typeof value !== "number" || Number.isNaN(value)) return "math.nan";
  const text = Object.is(value, -0) ? "-0" : String(value);
  return /^-?\d+$/.test(text) ? `${text}.0` : text;
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
const VERSION = /[\u2080-\u2089]+$/; // a name's later version: c\u2082, c\u2083 (assigned again)

/** A node's handle in the program (its `name`; a trace from before names had its label). */
export const handleOf = (node) => node.name ?? node.label;

/**
 * A Python string literal for a label, as the program's reader reads it back: in single quotes,
 * or double ones when it holds a `'` (a label never holds a backslash or both quotes; were it
 * to, JSON's escapes are still Python).
 */
export function pyString(text) {
  const value = String(text);
  if (/[\\\u0000-\u001f\u007f\u2028\u2029]/.test(value) || (value.includes("'") && value.includes('"'))) return JSON.stringify(value);
  return value.includes("'") ? `"${value}"` : `'${value}'`;
}

/** Whether a node's display label is other than its handle says (`x1*w1` for `x1w1`). */
export const relabelled = (node) => node.label !== handleOf(node);

/**
 * The Python variable of each node the script names: a leaf's name, an intermediate's name (its
 * later versions assign that name again, as the program did), `result` for an unnamed result;
 * `_n<k>` where a name is no Python identifier of its own. Constants and unnamed intermediates
 * are written inline, so pasting the script back gives the same graph.
 */
export function variableNames(trace) {
  const names = new Map();
  const RESERVED = reserved();
  const used = new Map(); // Python name → the base label it stands for
  for (const fn of trace.functions ?? []) used.set(fn.name, null); // a `def`'s name: never a variable's
  const take = (node, wanted) => {
    let name = IDENTIFIER.test(wanted) && !PY_KEYWORDS.has(wanted) && !RESERVED.has(wanted)
      && (!used.has(wanted) || used.get(wanted) === wanted) ? wanted : "";
    for (let k = Number(node.id.slice(1)); !name; k++) if (!used.has(`_n${k}`)) name = `_n${k}`;
    used.set(name, wanted);
    names.set(node.id, name);
  };
  for (const node of trace.nodes) {
    if (node.kind === "leaf" || (node.kind === "op" && handleOf(node))) take(node, handleOf(node).replace(VERSION, ""));
  }
  const root = trace.nodes.find((node) => node.id === trace.root);
  if (root && !names.has(root.id)) take(root, "result");
  return names;
}

/**
 * The nodes with inputs before consumers: the trace's node order is one (the engine numbers a
 * node after its inputs, and its topological sort is the one sort); checked, not assumed.
 */
export function topoOrder(trace) {
  const { nodeById } = traceIndex(trace);
  const position = new Map(trace.nodes.map((node, i) => [node.id, i]));
  for (const [i, node] of trace.nodes.entries()) {
    for (const id of node.inputs) {
      if (!(position.get(id) < i)) throw new Error(`node ${node.id} comes before its input ${nodeById.get(id)?.id ?? id}`);
    }
  }
  return trace.nodes;
}

// How tightly a node's spelling in the table's `column` (`micrograd`, `torch`) binds (Python's
// precedence, the table's): an operator its row's precedence, a call or a method call
// (`vpow(a, b)`, `a.relu()`, `torch.tanh(a)`) CALL; variables and literals are atoms.
const ATOM = CALL + 10;
const isCalled = (row, column) => row[column].endsWith(")");
const bindingOf = (node, column) => (isCalled(opRow(node), column) ? CALL : opRow(node).precedence);
const negation = () => opRows().find((row) => row.public === "neg").precedence;

/** Whether input `i` of `node` (binding `inner`) needs parentheses in `node`'s spelling. */
function needsParens(node, i, inner, column) {
  const row = opRow(node);
  if (row[column].startsWith("{0}.")) return inner < CALL; // a method call: `(a*b).relu()`
  if (isCalled(row, column)) return false; // a function call's argument: `tanh(a*b)`
  const outer = row.precedence;
  // `-(-a)`, `(a**2)**3`, `(-a)**2`, and PyTorch's `a ** (b ** c)` of two tensors
  if (row.arity === 1 || row.right) return inner <= outer;
  return i === 0 ? inner < outer : inner <= outer; // left-associative: `a - (b - c)`
}

/** A constant as the program wrote it (its literal), else its value. */
export const constantText = (node) => (/^-?(\d+\.?\d*|\.\d+)(e-?\d+)?$/i.test(node.label) ? node.label : pyNumber(node.data));

/**
 * Each named node's expression in the script ({id → text}), built in node order (inputs first,
 * so a long chain needs no recursion). A node is used by its variable's name if it has one,
 * else written inline: a constant as `constant` writes its literal (`Value(3)` in micrograd),
 * an operation in the op table's `column` spelling (`micrograd`, `torch`), in parentheses where
 * Python needs them.
 */
export function expressions(trace, order, names, { column = "micrograd", constant = (text) => `Value(${text})` } = {}) {
  const text = new Map(); // how a consumer writes the node
  const binding = new Map();
  const defined = new Map(); // a named operation's own expression
  for (const node of order) {
    if (node.kind === "const") {
      const literal = constant(constantText(node));
      text.set(node.id, literal);
      binding.set(node.id, literal.startsWith("-") ? negation() : ATOM);
      continue;
    }
    if (node.kind === "leaf") {
      text.set(node.id, names.get(node.id));
      binding.set(node.id, ATOM);
      continue;
    }
    const inputs = node.inputs.map((id, i) => (needsParens(node, i, binding.get(id), column) ? `(${text.get(id)})` : text.get(id)));
    const k = node.exponent === null || node.exponent === undefined ? "" : pyNumber(node.exponent);
    const expression = fillOp(opRow(node)[column], { inputs, k });
    if (names.has(node.id)) {
      defined.set(node.id, expression);
      text.set(node.id, names.get(node.id));
      binding.set(node.id, ATOM);
    } else {
      text.set(node.id, expression);
      binding.set(node.id, bindingOf(node, column));
    }
  }
  return defined;
}

/** A Python string literal for a leaf name (names are identifiers: no escaping needed). */
const pyName = (name) => JSON.stringify(String(name));

/** The first line of the program, as a `# program:` comment says it. */
export function programComment(source) {
  const firstLine = commentText(source.split(/\r\n|\r|\n/)[0]);
  return `# program: ${firstLine.length > 60 ? `${firstLine.slice(0, 60)}\u2026` : firstLine}${/[\r\n]/.test(source) ? " \u2026" : ""}`;
}

/**
 * The whole script: helpers, one assignment per node, backward, and each leaf's gradient.
 * With `train` ({params, lr, momentum, steps, start}: the Train lab's settings) it ends with the
 * lab's training loop: the same assignments as a function of the leaf values, and `steps` steps
 * of gradient descent on `params` from `start`, printing the root after each.
 */
export function microgradScript(trace, { train = null } = {}) {
  const names = variableNames(trace);
  const order = topoOrder(trace);
  const text = expressions(trace, order, names);
  const leafName = new Map(trace.leaves.map((leaf) => [leaf.id, leaf.name]));
  const needed = new Set();
  const body = [];
  const model = ["leaves = {}"]; // the same assignments, leaves read from `values`
  // A leaf whose name the program assigns again (`c = 2; c += 1`) is found after backward by
  // the label it is given (the variable then holds the name's last version).
  const variables = [...names.values()];
  const reassigned = new Set(trace.leaves.filter((leaf) => variables.filter((v) => v === names.get(leaf.id)).length > 1).map((leaf) => leaf.id));
  for (const node of order) {
    if (node.kind === "op" && opRow(node).helper) needed.add(opRow(node));
    if (!names.has(node.id)) continue; // written inline where it is used
    const name = names.get(node.id);
    if (node.kind === "leaf") {
      const leaf = pyName(leafName.get(node.id) ?? handleOf(node));
      body.push(`${name} = Value(${pyNumber(node.data)})`);
      // The display label, which also finds a leaf whose variable is assigned again.
      if (reassigned.has(node.id)) body.push(`${name}.label = ${pyString(node.label)}  # ${name} is assigned again below`);
      else if (relabelled(node)) body.push(`${name}.label = ${pyString(node.label)}`);
      model.push(`${name} = Value(values[${leaf}])`, `leaves[${leaf}] = ${name}`);
      continue;
    }
    body.push(`${name} = ${text.get(node.id)}`);
    model.push(body.at(-1));
    if (relabelled(node)) body.push(`${name}.label = ${pyString(node.label)}`);
  }
  for (const fn of trace.functions ?? []) for (const key of fn.uses) if (opRowOf(key).helper) needed.add(opRowOf(key));
  const helpers = scriptHelpers([...needed]);
  const root = names.get(trace.root);
  const label = new Map(trace.nodes.map((node) => [node.id, node.label]));
  const lines = [
    "# chainrule: this program as a micrograd script (pip install micrograd==0.1.0)",
    programComment(trace.source),
    "import math",
    "",
    "from micrograd.engine import Value",
    "",
    ...helpers,
    ...functionDefs(trace, "micrograd"),
    ...body,
    "",
    `${root}.backward()`,
    ...(reassigned.size ? LEAF_BY_LABEL : []),
    `print("${root}", ${root}.data)`,
    ...trace.leaves.map((leaf) => `print("grad[${leaf.name}] =", ${reassigned.has(leaf.id) ? `_leaf(${root}, ${pyString(label.get(leaf.id))})` : names.get(leaf.id)}.grad)`),
    "",
  ];
  if (train) lines.push(...trainingLoop(trace, train, model, root));
  return lines.join("\n");
}

/** The lines defining the helpers of `rows` (table rows): the IEEE helpers they call, each once, then theirs. */
/**
 * The functions the program defines, each a Python `def` returning its body in the table's
 * `column` spelling (`micrograd`, `torch`: the reply's), in the order they are defined (a body
 * calls only those above it). Pasted back, chainrule reads each as the function it was.
 */
export function functionDefs(trace, column) {
  return (trace.functions ?? []).flatMap((fn) => [`def ${fn.name}(${fn.params.join(", ")}):`, `    return ${fn[column]}`, ""]);
}

function scriptHelpers(rows) {
  const prelude = new Map();
  for (const row of rows) for (const [name, lines] of Object.entries(row.prelude)) prelude.set(name, lines);
  const ordered = opRows().filter((row) => rows.includes(row));
  return [...[...prelude.keys()].sort().flatMap((name) => prelude.get(name)), ...ordered.flatMap((row) => row.script)];
}

// Finds a leaf by its label (a leaf whose variable was assigned again), after backward.
const LEAF_BY_LABEL = [
  "",
  "def _leaf(root, label):",
  "    seen, stack = set(), [root]",
  "    while stack:",
  "        v = stack.pop()",
  "        if id(v) not in seen:",
  "            seen.add(id(v))",
  "            if not v._prev and getattr(v, 'label', None) == label:",
  "                return v",
  "            stack.extend(v._prev)",
  "",
];

const TRAIN_STEPS_WHEN_NONE_TAKEN = 100;

/** The Train lab's loop: `forward(values)` builds the graph, each step moves the parameters. */
function trainingLoop(trace, train, model, root) {
  const leaves = trace.leaves.filter((leaf) => leafNameOk(leaf.name));
  const params = (train.params ?? leaves.map((l) => l.name).filter((n) => !/^[xy]/i.test(n))).filter((n) => leaves.some((l) => l.name === n));
  const start = Object.fromEntries(leaves.map((leaf) => [leaf.name, train.start?.[leaf.name] ?? leaf.value]));
  const steps = train.steps > 0 ? train.steps : TRAIN_STEPS_WHEN_NONE_TAKEN;
  return [
    `# The Train lab: ${steps} steps of gradient descent on ${params.join(", ") || "no parameter"}`
      + ` (lr ${pyNumber(train.lr)}, momentum ${pyNumber(train.momentum ?? 0)}), from the values at its step 0.`,
    "def forward(values):",
    ...model.map((line) => `    ${line}`),
    `    return ${root}, leaves`,
    "",
    "",
    `values = {${leaves.map((leaf) => `${pyName(leaf.name)}: ${pyNumber(start[leaf.name])}`).join(", ")}}`,
    `params = [${params.map(pyName).join(", ")}]`,
    `lr, momentum = ${pyNumber(train.lr)}, ${pyNumber(train.momentum ?? 0)}`,
    "velocity = {name: 0.0 for name in params}",
    `for step in range(${steps}):`,
    "    root, leaves = forward(values)",
    "    print(\"root after step\", step, \"=\", root.data)",
    "    root.backward()",
    "    for name in params:",
    "        velocity[name] = momentum * velocity[name] + leaves[name].grad",
    "        values[name] -= lr * velocity[name]",
    "root, leaves = forward(values)",
    `print("root after step", ${steps}, "=", root.data)`,
    "for name in params:",
    "    print(name, \"=\", values[name])",
    "",
  ];
}

const leafNameOk = (name) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(name);
