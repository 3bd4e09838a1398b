// "Copy as PyTorch": the trace as a runnable PyTorch script, scalar tensors in double precision
// (the engine's floats), each op in the op table's `torch` spelling. Pasted back, the script gives
// the same graph (chainrule reads `torch.tensor(...)` leaves and `torch.tanh(x)` as it reads
// micrograd); display labels that differ from the names are written as comments, since a tensor
// has no label.

import { commentText, expressions, functionDefs, programComment, pyNumber, relabelled, topoOrder, variableNames } from "./micrograd.js";

/** A leaf as a tensor that PyTorch computes gradients for. */
const leafTensor = (data) => `torch.tensor(${pyNumber(data)}, dtype=torch.float64, requires_grad=True)`;

/**
 * The whole script: one assignment per named node, backward, the root's value and each leaf's
 * gradient. A leaf whose variable the program assigns again (`c = 2; c += 1`) is gone from its
 * variable by then: its gradient is not printed (a comment says so).
 */
export function pytorchScript(trace) {
  const names = variableNames(trace);
  const order = topoOrder(trace);
  const text = expressions(trace, order, names, { column: "torch", constant: (literal) => literal });
  const body = [];
  for (const node of order) {
    if (!names.has(node.id)) continue; // written inline where it is used
    const name = names.get(node.id);
    const said = relabelled(node) ? `  # ${commentText(node.label)}` : "";
    body.push(`${name} = ${node.kind === "leaf" ? leafTensor(node.data) : text.get(node.id)}${said}`);
  }
  const variables = [...names.values()];
  const root = names.get(trace.root);
  const grads = trace.leaves.map((leaf) => {
    const name = names.get(leaf.id);
    if (variables.filter((v) => v === name).length > 1) return `# grad[${commentText(leaf.name)}]: ${name} is assigned again above`;
    return `print("grad[${leaf.name}] =", ${name}.grad.item())`;
  });
  const lines = [
    "# chainrule: this program as a PyTorch script (pip install torch)",
    programComment(trace.source),
    "import torch",
    "",
    ...functionDefs(trace, "torch"),
    ...body,
    "",
    `${root}.backward()`,
    `print("${root}", ${root}.item())`,
    ...grads,
    "",
  ];
  const script = lines.join("\n");
  return script.includes("math.") ? script.replace("import torch\n", "import math\n\nimport torch\n") : script;
}
