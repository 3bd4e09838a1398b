// One gradient element's fan-in (POST /api/fan-in) in words and cells (no DOM): the sum of
// its terms in the scalar view's sentence form (`grad[a] = 1·1 + 3·1 = 4`), here
// `dW[1,2] = Σᵢ X[i,1]·d(X @ W)[i,2] = 0.5·(−0.04273) + … = −0.02223`, and the cells each term
// is made of: the upstream gradient's elements and, for `@`, the other operand's.

import { compactText, factorText } from "../core/format.js";
import { t } from "../core/i18n.js";
import { gradName, tensorIndex, tensorName } from "./timeline.js";

/** Terms written out in full; more are summarised (`+ … (32 terms)`). */
const TERMS_SHOWN = 4;

const elementOf = (values, index) => index.reduce((v, i) => v?.[i], values);
const at = (index) => (index.length ? `[${index.join(",")}]` : ""); // one number: no index

/** For `A @ B` (both 2-d) and `index` of input `input`: the other operand's element each term
 *  multiplies by, as {tensor, index} for the term whose output element is `output`. */
function matmulLocal(op, input, index, output) {
  const [a, b] = op.inputs;
  if (op.shape.length !== 2 || index.length !== 2) return null;
  if (input === b && a !== b) return { tensor: a, index: [output[0], index[0]] }; // dB[k,j] = Σᵢ A[i,k]·dY[i,j]
  if (input === a && a !== b) return { tensor: b, index: [index[1], output[1]] }; // dA[i,k] = Σⱼ dY[i,j]·B[k,j]
  return null;
}

/** The symbolic sum when one op reads the element (`Σᵢ X[i,1]·d(X @ W)[i,2]`, `Σᵢ d(Y)[i,1]`), else null. */
function headOf(nodeById, node, index, ops) {
  if (ops.size !== 1) return null;
  const op = nodeById.get([...ops][0]);
  const [a, b] = op.inputs.map((id) => nodeById.get(id));
  if (op.op === "@" && op.shape.length === 2 && index.length === 2 && a !== b) {
    if (node === b) return `\u03a3\u1d62 ${tensorName(a)}[i,${index[0]}]\u00b7${gradName(op)}[i,${index[1]}]`;
    if (node === a) return `\u03a3\u2c7c ${gradName(op)}[${index[0]},j]\u00b7${tensorName(b)}[${index[1]},j]`;
  }
  if ((op.op === "+" || op.op === "-") && node.shape.length < op.shape.length) {
    const lead = op.shape.length - node.shape.length; // broadcast over the leading dims: summed back
    const slots = [...Array(lead).fill("i"), ...index.map(String)];
    return `\u03a3\u1d62 ${gradName(op)}[${slots.join(",")}]`;
  }
  return null;
}

/**
 * The fan-in of `fanIn` (a POST /api/fan-in reply) in `reply`: {cell: "dW[1,2]", sentence,
 * lit: [{tensor, index, grid: "grad" | "data", role: "target" | "upstream" | "local"}]}.
 */
export function fanInOf(reply, fanIn) {
  const { nodeById } = tensorIndex(reply);
  const node = nodeById.get(fanIn.tensor);
  const cell = `${gradName(node)}${at(fanIn.index)}`;
  const lit = [{ tensor: node.id, index: fanIn.index, grid: "grad", role: "target" }];
  const symbols = [];
  const numbers = [];
  const ops = new Set();
  for (const c of fanIn.contributions) {
    const op = nodeById.get(c.tensor);
    ops.add(op.id);
    lit.push({ tensor: op.id, index: c.output, grid: "grad", role: "upstream" });
    const upstream = `${gradName(op)}${at(c.output)}`;
    const local = op.op === "@" ? matmulLocal(op, node.id, fanIn.index, c.output) : null;
    if (local) {
      lit.push({ tensor: local.tensor, index: local.index, grid: "data", role: "local" });
      const factor = `${tensorName(nodeById.get(local.tensor))}${at(local.index)}`;
      // The product in the rule's order: dW = X.T @ dY is X·dY, dX = dY @ W.T is dY·W.
      const localFirst = local.tensor === op.inputs[0];
      symbols.push(localFirst ? `${factor}\u00b7${upstream}` : `${upstream}\u00b7${factor}`);
      numbers.push(localFirst ? `${factorText(c.local)}\u00b7${factorText(c.upstream)}` : `${factorText(c.upstream)}\u00b7${factorText(c.local)}`);
    } else {
      symbols.push(`${upstream}\u00b7${factorText(c.local)}`);
      numbers.push(`${factorText(c.upstream)}\u00b7${factorText(c.local)}`);
    }
  }
  const count = fanIn.contributions.length;
  const shown = (parts) => (count > TERMS_SHOWN
    ? `${parts.slice(0, TERMS_SHOWN).join(" + ")} + \u2026 ${t("ui.tensor.terms", { count })}`
    : parts.join(" + "));
  // A term whose upstream is not its op's output gradient (inside a composite op: cross
  // entropy's exps and log, mean's division) is written as the scalar view writes a path:
  // `upstream·local (via loss)`.
  const direct = fanIn.contributions.every((c) => Number(elementOf(nodeById.get(c.tensor).grad, c.output)) === c.upstream);
  if (!direct) {
    const via = fanIn.contributions.map((c) => t("ui.explain.via", {
      product: `${factorText(c.upstream)}\u00b7${factorText(c.local)}`, via: `${tensorName(nodeById.get(c.tensor))}${at(c.output)}`,
    }));
    return { cell, sentence: `${cell} = ${shown(via)} = ${compactText(fanIn.sum)}`, lit, count };
  }
  const head = headOf(nodeById, node, fanIn.index, ops) ?? (count ? shown(symbols) : "");
  const alone = node.id === reply.root ? t("ui.tensor.seed_sum", { cell, name: tensorName(node) }) : t("ui.tensor.no_terms", { cell });
  const sentence = count ? `${cell} = ${head} = ${shown(numbers)} = ${compactText(fanIn.sum)}` : alone;
  return { cell, sentence, lit, count };
}
