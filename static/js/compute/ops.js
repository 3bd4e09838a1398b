// The table of operations (engine/ops.py `OPS`, embedded in the page as JSON by app/http/pages.py):
// how each op is tagged on a card, written in a formula, differentiated and spelled for micrograd.
// The page reads these columns here and writes none of them again. An embedded player, which
// has no #op-table block, is given the same table (engine/ops.py page_table()) at mount time.

import { opKey } from "./op-functions.js";

const element = typeof document === "undefined" ? null : document.getElementById("op-table");
let OPS = element ? JSON.parse(element.textContent) : {};

/**
 * Use `table` (engine/ops.py page_table(), as JSON) from now on. One engine has one table, so
 * every player in a document shares it: embed.js's mountPlayer sets it from its `ops`.
 */
export function useOpTable(table) {
  OPS = table;
}

// The rows of the functions a program defines (`softplus(x) = log(1 + exp(x))`): a reply's
// `functions`, made rows of the table's shape (each spelled as a call of its name; its local
// derivatives are the engine's, through its body). By node, for every trace indexed (core/frames.js
// traceIndex), and by name, those of the trace indexed last.
const FUNCTION_ROWS = new WeakMap();
let functionsByName = new Map();

/** The row of one of a reply's `functions`. */
export function functionRow(fn) {
  return {
    arity: fn.params.length, public: fn.name, glyph: fn.name, formula: fn.formula, locals: fn.locals,
    micrograd: fn.formula, torch: fn.formula, helper: null, call: true, precedence: CALL, right: false,
    dead_at_or_below: null, script: null, prelude: {}, function: fn,
  };
}

/** Know the rows of the functions `trace` defines, for its nodes that call them. */
export function useFunctions(trace) {
  if (!trace.functions?.length) return;
  const rows = new Map(trace.functions.map((fn) => [fn.name, functionRow(fn)]));
  for (const node of trace.nodes) if (rows.has(node.op)) FUNCTION_ROWS.set(node, rows.get(node.op));
  functionsByName = rows;
}

// The precedence of a call `f(x)` or a method call `x.f()` in the table (engine/ops.py CALL): the
// `precedence` of every function's row.
export const CALL = 50;

/** Every row of the table, in its order. */
export function opRows() {
  return Object.values(OPS);
}

/**
 * Whether `node` passes no gradient at its current data: its op's row says at or below which
 * result that happens (`dead_at_or_below`: relu at 0, a dead unit). Data not yet a number
 * ("NaN", unknown) is not dead.
 */
export function isDead(node) {
  return canDie(node) && typeof node.data === "number" && node.data <= opRow(node).dead_at_or_below;
}

/** Whether a node's op can pass no gradient at some data (its row has `dead_at_or_below`). */
export function canDie(node) {
  const limit = opRowOrNull(node)?.dead_at_or_below;
  return limit !== null && limit !== undefined;
}

/** The table's row of `key` (`**k`, `tanh`, …). */
export const opRowOf = (key) => (Object.hasOwn(OPS, key) ? OPS[key] : undefined);

const opRowOrNull = (node) => (node.op ? opRow(node) : null);

/** The table's row of a node's op (`**` with a constant exponent is the row `**k`; a call of
 * the program's own function, that function's row). */
export function opRow(node) {
  const key = opKey(node);
  // Own keys only: a program's function may be called `toString`.
  const row = (Object.hasOwn(OPS, key) ? OPS[key] : null) ?? FUNCTION_ROWS.get(node) ?? functionsByName.get(key);
  if (!row) throw new Error(`the table of operations has no row for ${JSON.stringify(node.op)}`);
  return row;
}

/**
 * A column's template filled in: `{0}`, `{1}` the inputs' texts, `{k}` the constant exponent's,
 * `{out}` the node's own.
 */
export function fillOp(template, { inputs = [], k = "", out = "" } = {}) {
  return template.replace(/\{(\d|k|out)\}/g, (_, slot) => {
    if (slot === "k") return k;
    if (slot === "out") return out;
    return inputs[Number(slot)];
  });
}
