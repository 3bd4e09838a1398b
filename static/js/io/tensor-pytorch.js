// "Copy as PyTorch" of a tensor program (docs/tensors.md): the program itself, run by PyTorch.
// Its statements are already PyTorch's spelling (`X @ W + b`, `.sum(0)`, `F.cross_entropy`), so
// they are kept as written; what PyTorch would compute differently is written out: every tensor
// the program writes or draws (`tensor([…])`, `randn(3, 2, seed=1)`, `randint`, `arange`,
// `one_hot`: chainrule's seeded numbers are not torch's) becomes a literal of the numbers shown,
// float64 (a leaf with `requires_grad=True`), `x += y` is `x = x + (y)` (PyTorch's is in place),
// and the bare names PyTorch has under `torch.` or `torch.nn.functional.` are imported. Then `backward()`, the result and each named leaf's
// gradient, printed. Read back by chainrule (import and print lines are notes), it is the same
// program with the same numbers: tests/browser/test_paste.py and tests/engine/test_tensor_pytorch.py.

import { pyNumber } from "./micrograd.js";
import { opRows } from "../compute/ops.js";

/** The tensor language's own functions (engine/tensor_program.py FUNCTIONS_OF_PROGRAMS) that a
 *  program may call bare, by the module PyTorch has them in; the op table's functions
 *  (`tanh`, `relu`, …) are `torch`'s too. The makers (`tensor`, `randn`, …) are written out. */
export const TORCH_FUNCTIONS = {
  torch: ["softmax", "log_softmax", "matmul", "cat", "stack", "sum", "mean", "max", "var", "std", "transpose", "t", "reshape", "Generator", "manual_seed"],
  "torch.nn.functional": ["cross_entropy", "one_hot"],
};

/** A nested list of numbers as Python: floats (`2.0`, `math.inf`) or, for indices, integers. */
function literal(values, integers) {
  if (Array.isArray(values)) return `[${values.map((v) => literal(v, integers)).join(", ")}]`;
  return integers ? String(Math.trunc(Number(values))) : pyNumber(values);
}

/** The tensor `node` holds, as a PyTorch literal with the numbers shown. */
function tensorLiteral(node) {
  if (node.dtype === "int") return `torch.tensor(${literal(node.data, true)})`;
  const grad = node.kind === "leaf" ? ", requires_grad=True" : "";
  return `torch.tensor(${literal(node.data, false)}, dtype=torch.float64${grad})`;
}

const inside = ([a, b], [c, d]) => c <= a && b <= d;

/**
 * The spans of the program to write out: each tensor it writes or draws and each constant
 * (`one_hot`, an integer tensor; no op of the program inside it: not the indices `max` makes,
 * whose span is the op's), the outermost only, with a `.float()`/`.double()` right after it (a
 * literal is float64 already).
 */
function writtenOut(reply) {
  const ops = reply.nodes.filter((n) => n.kind === "op");
  const made = reply.nodes.filter((n) => (n.kind === "const" || (n.kind === "leaf" && n.inputs.length === 0))
    && !ops.some((op) => inside(op.span, n.span)));
  // The widest first (of one span, the later: `tensor([1, 2]).float()` is made from the integers).
  made.sort((a, b) => (b.span[1] - b.span[0]) - (a.span[1] - a.span[0]) || reply.nodes.indexOf(b) - reply.nodes.indexOf(a));
  const outer = [];
  for (const node of made) if (!outer.some((kept) => inside(node.span, kept.span))) outer.push(node);
  return outer.map((node) => {
    const cast = node.dtype === "float" ? /^\s*\.\s*(float|double)\s*\(\s*\)/.exec(reply.source.slice(node.span[1])) : null;
    return { node, start: node.span[0], end: node.span[1] + (cast ? cast[0].length : 0) };
  }).sort((a, b) => a.start - b.start);
}

/** The bare calls of `names` in `source` (not `x.name(`, not a name the program assigns). */
function bareCalls(source, names) {
  const assigned = new Set([...source.matchAll(/^[ \t]*([A-Za-z_]\w*)[ \t]*=(?!=)/gm)].map((m) => m[1]));
  return names.filter((name) => !assigned.has(name) && new RegExp(`(?<![\\w.])${name}\\s*\\(`).test(source));
}

/**
 * The program with its tensors written out (`written`: {node, start, end}) and its root named:
 * `out = …` when its last statement is the bare expression (name null when it is inside one).
 */
function rewritten(reply, written) {
  const { source } = reply;
  const root = reply.nodes.find((n) => n.id === reply.root);
  const edits = written.map(({ node, start, end }) => ({ start, end, text: tensorLiteral(node) }));
  let name = root.name || null;
  if (!name) {
    const lineStart = source.lastIndexOf("\n", root.span[0] - 1) + 1;
    if (/^[\s(]*$/.test(source.slice(lineStart, root.span[0]))) {
      name = "out";
      edits.push({ start: lineStart, end: lineStart, text: "out = " });
    }
  }
  // From the end, so that every span still points into the text; at one place the insertion last.
  edits.sort((a, b) => b.start - a.start || b.end - a.end);
  let text = source;
  for (const { start, end, text: put } of edits) text = `${text.slice(0, start)}${put}${text.slice(end)}`;
  return { source: withoutInPlace(text).replace(/\s+$/, ""), name };
}

const AUGMENTED = /^([ \t]*)([A-Za-z_]\w*)[ \t]*(\*\*|[-+*/@])=[ \t]*(.*)$/;

/** Whether `text`'s brackets close as they open. */
function balanced(text) {
  let depth = 0;
  for (const ch of text) {
    depth += "([{".includes(ch) ? 1 : ")]}".includes(ch) ? -1 : 0;
    if (depth < 0) return false;
  }
  return depth === 0;
}

/**
 * `x += y` (and `-= *= /= **= @=`) as `x = x + (y)`: a new tensor, as chainrule reads it; in
 * PyTorch `+=` changes the tensor in place, which a leaf refuses and the backward pass of an op
 * that kept it (`tanh`) fails on. A statement whose brackets span lines is left as written.
 */
function withoutInPlace(source) {
  return source.split("\n").map((line) => {
    const match = AUGMENTED.exec(line);
    if (!match) return line;
    const [, indent, name, op, rest] = match;
    const hash = rest.indexOf("#");
    const [expression, comment] = hash < 0 ? [rest, ""] : [rest.slice(0, hash).trimEnd(), `  ${rest.slice(hash)}`];
    return balanced(expression) ? `${indent}${name} = ${name} ${op} (${expression})${comment}` : line;
  }).join("\n");
}

/** The whole script of tensor program `reply` (a POST /api/graph reply of `kind: "tensor"`). */
export function tensorPytorchScript(reply) {
  const named = rewritten(reply, writtenOut(reply));
  const tableFunctions = opRows().filter((row) => row.call).map((row) => row.public);
  const imports = Object.entries({ ...TORCH_FUNCTIONS, torch: [...tableFunctions, ...TORCH_FUNCTIONS.torch] })
    .map(([module, names]) => [module, bareCalls(named.source, module === "torch" ? [...new Set(names)] : names)])
    .filter(([, names]) => names.length)
    .map(([module, names]) => `from ${module} import ${names.join(", ")}`);
  const ran = /\.backward\s*\(/.test(named.source);
  const leaves = reply.leaves.filter((leaf) => /^[A-Za-z_]\w*$/.test(leaf.name));
  // The leaves the backward pass reaches (a backward step passes them gradient); PyTorch leaves
  // the others' .grad None.
  const reached = new Set(reply.steps.flatMap((step) => (step.grads ?? []).map((g) => g.input)));
  const printed = (leaf) => (reached.has(leaf.id)
    ? `print("d${leaf.name} =", ${leaf.name}.grad.tolist())`
    : `# d${leaf.name}: ${named.name} does not depend on ${leaf.name} (its .grad stays None)`);
  const ending = named.name === null ? ["# the result is no statement of its own: call .backward() on it"] : [
    ...(ran ? [] : [`${named.name}.backward()`]),
    `print("${named.name} =", ${named.name}.item())`,
    ...leaves.map(printed),
  ];
  const lines = [
    "# chainrule: this tensor program as a PyTorch script (pip install torch). Its tensors are written",
    "# out with the numbers chainrule shows (its seeded randn and randint are not torch's), in float64.",
    "import torch",
    "import torch.nn.functional as F",
    ...imports,
    "",
    named.source,
    "",
    ...ending,
    "",
  ];
  const script = lines.join("\n");
  return /\bmath\.(inf|nan)\b/.test(script) ? `import math\n${script}` : script;
}
