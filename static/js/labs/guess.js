// What a learner types as a number (a prediction, a lesson's answer) and whether it is right.

/** |guess − truth| ≤ 1e-3·max(1, |truth|); non-finite truths must be named exactly. */
export function isClose(guess, truth) {
  if (typeof truth !== "number") return String(guess) === String(truth);
  return Number.isFinite(guess) && Math.abs(guess - truth) <= 1e-3 * Math.max(1, Math.abs(truth));
}

/** What the learner typed as a number ("−2", "1e-3", "inf", "nan"); NaN when unreadable. */
export function parseGuess(text) {
  const t = text.trim().replace(/\u2212/g, "-").toLowerCase();
  if (/^[+-]?(inf|infinity|\u221e)$/.test(t)) return t.startsWith("-") ? "-Infinity" : "Infinity";
  if (t === "nan") return "NaN";
  return t === "" ? Number.NaN : Number(t);
}
