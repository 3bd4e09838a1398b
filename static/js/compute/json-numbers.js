// A number as a reply's JSON writes it: non-finite numbers as the strings "NaN", "Infinity" and
// "-Infinity" (docs/api.md). The one place both ways are written; compute/evaluator.js and
// compute/merge-numbers.js read them from here (neither imports the other for them).

/** A number of a reply: "NaN", "Infinity", "-Infinity" or the number. */
export function fromJson(x) {
  if (typeof x === "number") return x;
  if (x === "NaN") return NaN;
  if (x === "Infinity") return Infinity;
  if (x === "-Infinity") return -Infinity;
  throw new Error(`not a number of a reply: ${JSON.stringify(x)}`);
}

/** A number as a reply writes it (non-finite as its string). */
export function toJson(x) {
  if (Number.isFinite(x)) return x;
  if (x !== x) return "NaN";
  return x > 0 ? "Infinity" : "-Infinity";
}
