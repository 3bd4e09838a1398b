// Narration in the page: a step's template (its sentence with a slot per number) filled with the
// numbers of a numbers reply, giving exactly the string the server writes (engine/narration.py:
// `fill`, `fmt`, `factor`). A slot is `{n:ARRAY:INDEX}` (the number as `fmt` writes it) or
// `{f:ARRAY:INDEX}` (as an operand, `factor`: a negative in parentheses); `{t:text:INDEX}` names
// a node (its `text`, as it is: a reply names each node once, not in every step); `{{` and `}}`
// are literal braces. Numbers arrive as in JSON replies: non-finite ones as "NaN", "Infinity",
// "-Infinity". The numbers are written by core/format.js in its "narration" style. A trace's steps
// carry templates only: `narrationOf` fills the one shown.

import { formatNumber, parenthesized } from "./format.js";
import { TraceMemo } from "./trace-memo.js";
import { copied, drawingOf, lazily, numberArrays, numberAt, stepGradAt } from "../compute/merge-numbers.js";

/** A number for narration (engine `fmt`): integers plainly, else up to 6 significant digits. */
export const fmt = (value) => formatNumber(value, "narration");

/** A number as an operand in narration (engine `factor`): negatives in parentheses, `(−3)`. */
export const factor = (value) => parenthesized(fmt(value));

const WRITERS = { n: fmt, f: factor, t: String };
const SLOT = /\{\{|\}\}|\{([nft]):([a-z_]+):(\d+)\}|[{}]/g;

/** Number `index` of `numbers[array]` as JSON has it. A step's grad is read alone where the
 *  numbers can say one (compute/merge-numbers.js stepGradAt): a slider move's page numbers make no
 *  array of them. */
function slotNumber(numbers, format, array, index) {
  if (array === "step_grad" && numbers.stepGradAt) {
    const one = stepGradAt(numbers, index);
    if (one !== undefined) return one;
  } else {
    const values = numbers[array];
    if ((Array.isArray(values) || values instanceof Float64Array) && index < values.length) return numberAt(values, index);
  }
  throw new Error(`narration slot {${format}:${array}:${index}} is outside the numbers`);
}

/**
 * `fill` with `numbers` bound, for filling many templates of one trace: each number is written
 * at most once per format, however many slots read it.
 */
export function filler(numbers) {
  const written = { n: new Map(), f: new Map(), t: new Map() };
  const write = (format, array, index) => {
    let texts = written[format].get(array);
    if (!texts) written[format].set(array, (texts = []));
    let text = texts[index];
    if (text === undefined) text = texts[index] = WRITERS[format](slotNumber(numbers, format, array, index));
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

const texts = new TraceMemo("node texts"); // a drawing → its nodes' `text` (new numbers name nodes alike)

function textsOf(drawing) {
  let found = texts.get(drawing);
  if (!found) texts.set(drawing, (found = drawing.nodes.map((node) => node.text)));
  return found;
}

/**
 * The arrays a trace's templates read, gathered from the trace (an /api/graph reply, or one
 * merged with a numbers reply): the nodes' `text` (and, in forward mode, their `tangent`) and
 * the numbers arrays of POST /api/values (compute/merge-numbers.js `numberArrays`).
 */
export function slotArraysOf(trace) {
  const arrays = copied(numberArrays(trace)); // an array made when a template first reads it
  lazily(arrays, "text", () => textsOf(drawingOf(trace))); // a drawing's: new numbers name nodes alike
  if (trace.pass === "forward") lazily(arrays, "tangent", () => trace.nodes.map((node) => node.tangent));
  return arrays;
}

const fillers = new TraceMemo("filler"); // trace → its filler (a trace is never changed: new numbers make a new one)

/** The narration of step `index` of `trace`: its template filled from the trace's own arrays. */
export function narrationOf(trace, index) {
  const step = trace.steps.at(index);
  if (!step) return "";
  let fillStep = fillers.get(trace);
  if (!fillStep) fillers.set(trace, (fillStep = filler(slotArraysOf(trace))));
  return fillStep(step.template);
}
