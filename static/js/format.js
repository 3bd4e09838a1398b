// Numbers for people: 4 significant digits on the card, the full value in the attribute/tooltip.
// The API sends non-finite numbers as the strings "Infinity", "-Infinity", "NaN".

const MINUS = "\u2212";

export function isFiniteValue(value) {
  return typeof value === "number" && Number.isFinite(value);
}

/** The full-precision text of an API value: the shortest round-tripping repr, or the string. */
export function fullText(value) {
  if (value === null || value === undefined) return "";
  return String(value);
}

/** A short, fixed-width-ish rendering: 4 significant digits, ∞ / −∞ / NaN for non-finite. */
export function shortText(value) {
  if (value === null || value === undefined) return "--";
  if (value === "Infinity" || value === Infinity) return "\u221e";
  if (value === "-Infinity" || value === -Infinity) return `${MINUS}\u221e`;
  if (typeof value !== "number" || Number.isNaN(value)) return "NaN";
  if (value === 0) return "0";
  const magnitude = Math.abs(value);
  let text;
  if (magnitude >= 1e5 || magnitude < 1e-3) {
    const [mantissa, exponent] = value.toExponential(3).split("e");
    text = `${mantissa}e${Number(exponent)}`;
  } else {
    text = value.toPrecision(4);
  }
  return text.replace("-", MINUS);
}

/** Like shortText, without trailing zeros (0.5000 → 0.5): for labels read in passing. */
export function compactText(value) {
  const text = shortText(value);
  return text.includes(".") ? text.replace(/(\.\d*?)0+(?=$|e)/, "$1").replace(/\.(?=$|e)/, "") : text;
}

/** `upstream × local = contribution`, the chain rule on one edge. */
export function chainText(contribution) {
  const { upstream, local, contribution: value } = contribution;
  return `${compactText(upstream)} \u00d7 ${compactText(local)} = ${compactText(value)}`;
}

const OP_GLYPHS = {
  "+": "+",
  "*": "\u00d7",
  "**": "**",
  "-": MINUS,
  "/": "\u00f7",
  neg: "neg",
  relu: "relu",
  tanh: "tanh",
  exp: "exp",
  log: "log",
  sigmoid: "\u03c3",
};

export function opGlyph(node) {
  if (!node.op) return "";
  if (node.op === "**" && node.exponent !== null && node.exponent !== undefined) {
    return `**${shortText(node.exponent)}`;
  }
  return OP_GLYPHS[node.op] ?? node.op;
}
