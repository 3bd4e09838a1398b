// The page's one number formatter: every number the page writes goes through formatNumber, in one
// of the styles below (the narration's sentences are the server's, and the page fills their
// templates in the server's style, so that both read alike). One set of rules:
//
// - Minus is U+2212 "−" wherever a number is displayed, in the mantissa and in the exponent alike;
//   an exponent is written `e4` / `e−4` (never `e+4`). −0 is shown as 0. Non-finite values are
//   ∞, −∞ and NaN (the API sends them as the strings "Infinity", "-Infinity", "NaN").
// - "card" (shortText, node cards): 4 significant digits, trailing zeros kept so that a card's
//   width changes little as its value changes: 2.000, −10.00, 1235. At |x| ≥ 1e4 or |x| < 1e−3
//   (after rounding to 4 digits) it switches to scientific: 1.235e4, −9.900e−4.
// - "compact" (compactText: edge labels, lab marks, tables, comparisons, formulas, sentences):
//   the card's without trailing zeros: 2, −10, 0.5, 1.5e−7, 1e21. A comparison uses it on both
//   sides (`3 ≠ 4`, never `3.000 ≠ 4`); a factor of a product is parenthesized when negative
//   (factorText: `1 × (−1)`), and the chain rule on an edge is productText/chainText.
// - "precise" (preciseText: tooltips, echoing what the learner typed): the full round-tripping
//   value, as displayed text: −0.00099, 1e21, 6.881373587019543.
// - "count" (countText: "1,500 nodes"): an integer grouped by thousands as the page's language
//   writes it, `1,500` in English, `1 500` (a no-break space) in Russian and Estonian, as the
//   server writes a count (engine/i18n.py Count).
// - "narration" (core/narration.js, the numbers in step sentences): exactly engine/narration.py's
//   `fmt`, which the server's sentences use: integers plainly below 1e15, else Python's `%.6g`
//   (ties to even, `e−05`), `nan`, `inf`, `−inf`; its minus is the page's (`(−3)` in a sentence
//   and on the edge label alike).
// - fullText (data-* attributes only, never shown): the JS/JSON number text, full precision,
//   ASCII: -0.00099, 1e+21, "Infinity". Tests and scripts read these.
// Numbers the page emits as code (io/micrograd.js's Python) follow Python's syntax, not these rules.

import { lang } from "./i18n.js";
import { fillOp, opRow } from "../compute/ops.js";

// The thousands separator of each language (engine/i18n.py _THOUSANDS); English's for others.
const THOUSANDS = { en: ",", ru: "\u00a0", et: "\u00a0" };

export const MINUS = "\u2212";
const INFINITY = "\u221e";

const NON_FINITE = { NaN: NaN, Infinity: Infinity, "-Infinity": -Infinity };

/** A value as a number: the API spells non-finite numbers as strings (any other string is NaN). */
function numberOf(value) {
  return typeof value === "string" ? NON_FINITE[value] ?? NaN : value;
}

export function isFiniteValue(value) {
  return typeof value === "number" && Number.isFinite(value);
}

/** The full-precision text of an API value for a data-* attribute: the shortest round-tripping repr, or the string. */
export function fullText(value) {
  if (value === null || value === undefined) return "";
  return String(value);
}

/** Non-finite and missing values as the page displays them; null for a finite number. */
function displaySpecial(x) {
  if (x === null || x === undefined) return "--";
  if (x === Infinity) return INFINITY;
  if (x === -Infinity) return `${MINUS}${INFINITY}`;
  if (typeof x !== "number" || Number.isNaN(x)) return "NaN";
  return null;
}

/** Non-finite values as the server's narration writes them (Python's `%g`); null for a finite one. */
function pythonSpecial(x) {
  if (typeof x !== "number" || Number.isNaN(x)) return "nan";
  if (!Number.isFinite(x)) return x > 0 ? "inf" : `${MINUS}inf`;
  return null;
}

/**
 * |x| rounded to `digits` significant digits: {digits (a string of that many), exponent (of the
 * first digit, after rounding)}. JS rounds a tie away from zero; with `ties: "even"` (Python's
 * `%g`) a tie rounds to the even digit, recognised from the exact digits (a double off a tie
 * differs from it within 17 digits).
 */
function roundDigits(x, digits, ties) {
  const magnitude = Math.abs(x);
  let [mantissa, exponent] = magnitude.toExponential(digits - 1).split("e");
  const longer = magnitude.toExponential(digits);
  if (ties === "even" && longer[digits + 1] === "5" && Number(longer) === magnitude) {
    const [exact, exactExponent] = magnitude.toExponential(30).split("e");
    const last = Number(exact[digits]); // the last digit kept ("d.dddd|d": the point counts)
    if (/^50*$/.test(exact.slice(digits + 1)) && last % 2 === 0) {
      mantissa = exact.slice(0, digits + 1); // the tie rounds down to the even digit: no carry
      exponent = exactExponent;
    }
  }
  return { digits: mantissa.replace(".", ""), exponent: Number(exponent) };
}

const dropZeros = (text) => text.replace(/0+$/, "");

/** `digits` (d.ddd…) in fixed notation at `exponent`: 2.000, 0.001234, 1235. */
function fixedText(digits, exponent, trim) {
  const [whole, fraction] = exponent >= 0
    ? [digits.slice(0, exponent + 1), digits.slice(exponent + 1)]
    : ["0", "0".repeat(-exponent - 1) + digits];
  const kept = trim ? dropZeros(fraction) : fraction;
  return kept ? `${whole}.${kept}` : whole;
}

/** `digits` in scientific notation: 1.235e4 (the exponent as `style` writes it). */
function scientificText(digits, exponent, trim, style) {
  const fraction = trim ? dropZeros(digits.slice(1)) : digits.slice(1);
  return `${digits[0]}${fraction ? `.${fraction}` : ""}e${style.exponent(exponent)}`;
}

const DISPLAY = {
  special: displaySpecial,
  minus: MINUS,
  exponent: (e) => (e < 0 ? `${MINUS}${-e}` : String(e)),
  scientific: (e) => e >= 4 || e < -3, // |x| ≥ 1e4 or < 1e−3 after rounding
  digits: 4,
};

/** The formatter's styles (see the top of this module). */
const STYLES = {
  card: { ...DISPLAY, trim: false },
  compact: { ...DISPLAY, trim: true },
  narration: {
    special: pythonSpecial,
    minus: MINUS,
    exponent: (e) => `${e < 0 ? MINUS : "+"}${String(Math.abs(e)).padStart(2, "0")}`,
    scientific: (e) => e < -4 || e >= 6,
    digits: 6,
    ties: "even",
    trim: true,
    integersBelow: 1e15,
  },
};

/** A finite, non-zero `x` in `style`, without its sign. */
function magnitudeText(x, style) {
  if (Number.isInteger(x) && Math.abs(x) < (style.integersBelow ?? 0)) return String(Math.abs(x));
  const { digits, exponent } = roundDigits(x, style.digits, style.ties);
  return style.scientific(exponent) ? scientificText(digits, exponent, style.trim, style) : fixedText(digits, exponent, style.trim);
}

/** A count grouped by thousands in the page's language: 1,500 (English), 1 500 (ru, et). */
function countDigits(count) {
  const digits = String(Math.trunc(Math.abs(count)));
  const grouped = digits.replace(/\B(?=(\d{3})+(?!\d))/g, THOUSANDS[lang()] ?? ",");
  return count < 0 ? `${MINUS}${grouped}` : grouped;
}

/** Every digit of the value (the shortest text that reads back as the same number), as displayed. */
function preciseDigits(x) {
  return x === 0 ? "0" : String(x).replace("e+", "e").replace(/-/g, MINUS);
}

/**
 * `value` (a number, an API non-finite string, or undefined: not known yet) as text in `style`:
 * "card", "compact", "precise", "count" or "narration".
 */
export function formatNumber(value, style = "compact") {
  if (style === "count") return countDigits(value);
  const x = numberOf(value);
  const rules = STYLES[style] ?? DISPLAY;
  const special = rules.special(x);
  if (special !== null) return special;
  if (style === "precise") return preciseDigits(x);
  if (x === 0) return "0"; // −0 too
  return `${x < 0 ? rules.minus : ""}${magnitudeText(x, rules)}`;
}

/** A card's number: 4 significant digits, ∞ / −∞ / NaN for non-finite, -- when unknown. */
export const shortText = (value) => formatNumber(value, "card");

/** Like shortText, without trailing zeros (0.5000 → 0.5, 1.000e−4 → 1e−4): for labels read in passing. */
export const compactText = (value) => formatNumber(value, "compact");

/** Every digit of the value, as displayed (tooltips, what the learner typed). */
export const preciseText = (value) => formatNumber(value, "precise");

/** A count grouped by thousands in the page's language. */
export const countText = (count) => formatNumber(count, "count");

/** A number's text as a factor in a product: a negative one in parentheses (`(−1)`). */
export function parenthesized(text) {
  return text.startsWith(MINUS) ? `(${text})` : text;
}

/** A number as a factor in a product: compact, negatives in parentheses (`1 × (−1)`). */
export const factorText = (value) => parenthesized(compactText(value));

/** `upstream × local` of a contribution (`sign`: the product's sign, × unless given). */
export function productText({ upstream, local }, sign = " \u00d7 ") {
  return `${factorText(upstream)}${sign}${factorText(local)}`;
}

/** `upstream × local = contribution`, the chain rule on one edge: `1 × (−1) = −1`. */
export function chainText(contribution) {
  return `${productText(contribution)} = ${compactText(contribution.contribution)}`;
}

/** The op's tag on a card (the table's `glyph`): `+`, `×`, `**2`, `σ`; empty for leaves. */
export function opGlyph(node) {
  if (!node.op) return "";
  return fillOp(opRow(node).glyph, { k: node.exponent === null || node.exponent === undefined ? "" : compactText(node.exponent) });
}
