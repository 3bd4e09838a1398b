// Narration in the page: a step's template (its sentence with a slot per number) filled with the
// numbers of a numbers reply, giving exactly the string the server writes (engine/narration.py:
// `fill`, `fmt`, `factor`). A slot is `{n:ARRAY:INDEX}` (the number as `fmt` writes it) or
// `{f:ARRAY:INDEX}` (as an operand, `factor`: a negative in parentheses); `{{` and `}}` are
// literal braces. Numbers arrive as in JSON replies: non-finite ones as "NaN", "Infinity",
// "-Infinity".

const NON_FINITE = { NaN: NaN, Infinity: Infinity, "-Infinity": -Infinity };

/** A numbers-array entry as a number (the replies spell non-finite numbers as strings). */
function numberOf(value) {
  return typeof value === "string" ? NON_FINITE[value] ?? Number(value) : value;
}

/**
 * `x` rounded to 6 significant digits as Python's `%.6g` does: `{negative, digits, exponent}`
 * with `digits` the 6 digits of the mantissa d.ddddd and `exponent` its power of ten (after
 * rounding). JS rounds a tie away from zero, Python to the even digit: a tie is recognised
 * from the exact digits (a double off a tie differs from it within 17 digits).
 */
function roundSix(x) {
  const magnitude = Math.abs(x);
  let [mantissa, exponent] = magnitude.toExponential(5).split("e");
  // A tie has exactly 7 significant digits, the last a 5: only such a number needs the exact digits.
  const seven = magnitude.toExponential(6);
  if (seven[7] === "5" && Number(seven) === magnitude) {
    const [exact, exactExponent] = magnitude.toExponential(30).split("e");
    const sixth = Number(exact[6]); // the 6th digit ("d.dddd|d": index 6 counts the point)
    if (/^50*$/.test(exact.slice(7)) && sixth % 2 === 0) {
      mantissa = exact.slice(0, 7); // the tie rounds down to the even digit: no carry
      exponent = exactExponent;
    }
  }
  return { negative: x < 0, digits: mantissa.replace(".", ""), exponent: Number(exponent) };
}

/** Python's `"%.6g" % x` for a finite x. */
function sixDigits(x) {
  const { negative, digits, exponent } = roundSix(x);
  const sign = negative ? "-" : "";
  const strip = (text) => text.replace(/0+$/, "");
  if (exponent < -4 || exponent >= 6) {
    const fraction = strip(digits.slice(1));
    const power = `${exponent < 0 ? "-" : "+"}${String(Math.abs(exponent)).padStart(2, "0")}`;
    return `${sign}${digits[0]}${fraction ? `.${fraction}` : ""}e${power}`;
  }
  const [whole, fraction] = exponent >= 0
    ? [digits.slice(0, exponent + 1), digits.slice(exponent + 1)]
    : ["0", "0".repeat(-exponent - 1) + digits];
  const kept = strip(fraction);
  return `${sign}${whole}${kept ? `.${kept}` : ""}`;
}

/** A number for narration (engine `fmt`): integers plainly, else up to 6 significant digits. */
export function fmt(value) {
  const x = numberOf(value);
  if (Number.isNaN(x)) return "nan";
  if (!Number.isFinite(x)) return x > 0 ? "inf" : "-inf";
  if (Number.isInteger(x) && Math.abs(x) < 1e15) return String(x); // String(-0) is "0", as Python's int
  return sixDigits(x);
}

/** A number as an operand in narration (engine `factor`): negatives in parentheses, `(-3)`. */
export function factor(value) {
  const text = fmt(value);
  return text.startsWith("-") ? `(${text})` : text;
}

const WRITERS = { n: fmt, f: factor };
const SLOT = /\{\{|\}\}|\{([nf]):([a-z_]+):(\d+)\}|[{}]/g;

/**
 * `fill` with `numbers` bound, for filling many templates of one trace: each number is written
 * at most once per format, however many slots read it.
 */
export function filler(numbers) {
  const written = { n: new Map(), f: new Map() };
  const write = (format, array, index) => {
    let texts = written[format].get(array);
    if (!texts) written[format].set(array, (texts = []));
    let text = texts[index];
    if (text === undefined) {
      const values = numbers[array];
      if (!Array.isArray(values) || index >= values.length) {
        throw new Error(`narration slot {${format}:${array}:${index}} is outside the numbers`);
      }
      text = texts[index] = WRITERS[format](values[index]);
    }
    return text;
  };
  return (template) => {
    if (!template.includes("{") && !template.includes("}")) return template; // most sort steps
    return template.replace(SLOT, (match, format, array, index) => {
      if (match === "{{") return "{";
      if (match === "}}") return "}";
      if (!format) throw new Error(`malformed narration template: a single '${match}' in ${JSON.stringify(template)}`);
      return write(format, array, Number(index));
    });
  };
}

/**
 * The narration of `template` with its slots filled from `numbers` ({array: [number | "NaN" |
 * "Infinity" | "-Infinity"]}, the numbers reply). Throws on a malformed template or a slot
 * outside its array, as the server's fill does.
 */
export function fill(template, numbers) {
  return filler(numbers)(template);
}
