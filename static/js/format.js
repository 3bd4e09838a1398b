// Every number the page itself writes goes through this module (the narration and messages that
// come from the server are the server's). One set of rules:
//
// - Minus is U+2212 "−" wherever a number is displayed, in the mantissa and in the exponent alike;
//   an exponent is written `e4` / `e−4` (never `e+4`). −0 is shown as 0. Non-finite values are
//   ∞, −∞ and NaN (the API sends them as the strings "Infinity", "-Infinity", "NaN").
// - shortText (node cards): 4 significant digits, trailing zeros kept so that a card's width
//   changes little as its value changes: 2.000, −10.00, 1235. At |x| ≥ 1e4 or |x| < 1e−3 (after
//   rounding to 4 digits) it switches to scientific: 1.235e4, −9.900e−4.
// - compactText (edge labels, lab marks, tables, comparisons, formulas, sentences): shortText
//   without trailing zeros: 2, −10, 0.5, 1.5e−7, 1e21. A comparison uses it on both sides
//   (`3 ≠ 4`, never `3.000 ≠ 4`).
// - preciseText (tooltips, echoing what the learner typed): the full round-tripping value, as
//   displayed text: −0.00099, 1e21, 6.881373587019543.
// - fullText (data-* attributes only, never shown): the JS/JSON number text, full precision,
//   ASCII: -0.00099, 1e+21, "Infinity". Tests and scripts read these.
// - countText (counts in sentences: "1,500 nodes"): an integer grouped by thousands as the page's
//   language writes it, `1,500` in English, `1 500` (a no-break space) in Russian and Estonian,
//   as the server writes a count (engine/i18n.py Count).
// Numbers the page emits as code (micrograd.js's Python) follow Python's syntax, not these rules.

import { lang } from "./i18n.js";
import { fillOp, opRow } from "./ops.js";

// The thousands separator of each language (engine/i18n.py _THOUSANDS); English's for others.
const THOUSANDS = { en: ",", ru: "\u00a0", et: "\u00a0" };

export const MINUS = "\u2212";
const INFINITY = "\u221e";
const SHORT_DIGITS = 4;
const SCIENTIFIC_ABOVE = 1e4; // toPrecision(4) switches to an exponent here on its own
const SCIENTIFIC_BELOW = 1e-3;

export function isFiniteValue(value) {
  return typeof value === "number" && Number.isFinite(value);
}

/** The full-precision text of an API value for a data-* attribute: the shortest round-tripping repr, or the string. */
export function fullText(value) {
  if (value === null || value === undefined) return "";
  return String(value);
}

/** Non-finite and missing values as displayed; null when `value` is a finite number. */
function specialText(value) {
  if (value === null || value === undefined) return "--";
  if (value === "Infinity" || value === Infinity) return INFINITY;
  if (value === "-Infinity" || value === -Infinity) return `${MINUS}${INFINITY}`;
  if (typeof value !== "number" || Number.isNaN(value)) return "NaN";
  return null;
}

/** JS number text (`-9.9e-4`, `1e+21`) as displayed: U+2212 minus signs, no `+` in the exponent. */
function displayed(text) {
  return text.replace("e+", "e").replace(/-/g, MINUS);
}

/** A card's number: 4 significant digits, ∞ / −∞ / NaN for non-finite, -- when unknown. */
export function shortText(value) {
  const special = specialText(value);
  if (special !== null) return special;
  if (value === 0) return "0"; // −0 too
  const magnitude = Math.abs(Number(value.toPrecision(SHORT_DIGITS)));
  const scientific = magnitude >= SCIENTIFIC_ABOVE || magnitude < SCIENTIFIC_BELOW;
  return displayed(scientific ? value.toExponential(SHORT_DIGITS - 1) : value.toPrecision(SHORT_DIGITS));
}

/** Like shortText, without trailing zeros (0.5000 → 0.5, 1.000e−4 → 1e−4): for labels read in passing. */
export function compactText(value) {
  const text = shortText(value);
  if (!text.includes(".")) return text;
  return text.replace(/(\.\d*?)0+(?=$|e)/, "$1").replace(/\.(?=$|e)/, "");
}

/** Every digit of the value (the shortest text that reads back as the same number), as displayed. */
export function preciseText(value) {
  const special = specialText(value);
  if (special !== null) return special;
  return value === 0 ? "0" : displayed(String(value));
}

/** A count grouped by thousands in the page's language: 1,500 (English), 1 500 (ru, et). */
export function countText(count) {
  const digits = String(Math.trunc(Math.abs(count)));
  const grouped = digits.replace(/\B(?=(\d{3})+(?!\d))/g, THOUSANDS[lang()] ?? ",");
  return count < 0 ? `${MINUS}${grouped}` : grouped;
}

/** A number as a factor in a product: compact, negatives in parentheses (`1 × (−1)`). */
export function factorText(value) {
  const text = compactText(value);
  return text.startsWith(MINUS) ? `(${text})` : text;
}

/** `upstream × local = contribution`, the chain rule on one edge: `1 × (−1) = −1`. */
export function chainText(contribution) {
  const { upstream, local, contribution: value } = contribution;
  return `${factorText(upstream)} \u00d7 ${factorText(local)} = ${compactText(value)}`;
}

/** The op's tag on a card (the table's `glyph`): `+`, `×`, `**2`, `σ`; empty for leaves. */
export function opGlyph(node) {
  if (!node.op) return "";
  return fillOp(opRow(node).glyph, { k: node.exponent === null || node.exponent === undefined ? "" : compactText(node.exponent) });
}
