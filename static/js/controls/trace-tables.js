// The trace tables under the transport: the topological sort (step, pop, what happens, stack
// after, sorted so far) and the propagation (step, node, grad, what happens). A new trace with the
// same rows (new values of the same graph) rewrites only the cell texts that changed, in place:
// an open table keeps its scroll position while a slider moves. Other traces rebuild the rows;
// a step change moves the "current" mark between two rows.
// Clicking a row (or Enter on its step button) jumps the timeline to that step.
// In predict mode (state.lab "predict") the propagation table shows no number the timeline has
// not revealed yet: those cells read "?" until the learner has predicted and reached them.

import { chainText, compactText, countText } from "../core/format.js";
import { t } from "../core/i18n.js";
import { frameOfStep, framesOf, topoStateAt, topoStep, traceIndex } from "../core/frames.js";
import { narrationOf } from "../core/narration.js";
import { nodeName } from "../core/names.js";
import { setClass, setText } from "../core/dom.js";
import { drawingOf } from "../compute/merge-numbers.js";

// Rows a table shows at once: a longer sort is capped, a longer backward pass shown a window of
// this many steps (the one the current step is in), a graph of more nodes a page of this many
// gradients (controls/grad-table.js), each saying so. micrograd's demo made 522,000 elements of
// its propagation table, 12 s of layout on opening the tab.
export const TABLE_ROWS_MAX = 600;
const reducedMotion = window.matchMedia?.("(prefers-reduced-motion: reduce)");

function cell(tag, text, className = "") {
  const el = document.createElement(tag);
  if (className) el.className = className;
  el.textContent = text;
  return el;
}

function nameOf(nodeById, id) {
  const node = nodeById.get(id);
  return node ? nodeName(node) : id;
}

// A row is `{step, label, cells}`; a cell `{text, className}` or `{lines: [{text, className}],
// className}` (one div per line). A text the timeline reveals at a frame also has `frame` and
// `hiddenText` (shown until then, in predict mode): those are written by `showUpTo`.

/** Write `spec` into `el` (a td or a line's div); a concealable text goes to `concealed` instead. */
function writeText(el, spec, concealed) {
  setClass(el, spec.className);
  if (spec.frame === undefined) setText(el, spec.text);
  else concealed.push({ el, frame: spec.frame, text: spec.text, hiddenText: spec.hiddenText });
}

function writeCell(td, spec, concealed) {
  if (!spec.lines) {
    writeText(td, spec, concealed);
    return;
  }
  setClass(td, spec.className);
  if (td.children.length !== spec.lines.length) td.replaceChildren(...spec.lines.map(() => document.createElement("div")));
  spec.lines.forEach((line, i) => writeText(td.children[i], line, concealed));
}

const rowLabels = new WeakMap(); // row → the label it was built with

/** Whether `rowList` has the rows (steps, labels, cells) `rows` shows: then only texts can differ. */
function sameRows(rows, rowList) {
  if (rows.size !== rowList.length) return false;
  return rowList.every(({ step, label, cells }) => {
    const tr = rows.get(step);
    return tr !== undefined && rowLabels.get(tr) === label && tr.cells.length === cells.length + 1;
  });
}

/** The table's elements in `body`: {note, table, tbody}. */
function tableElements(body, { caption, headers }) {
  const note = cell("p", "", "table-note");
  const table = document.createElement("table");
  table.className = "trace-table";
  const head = document.createElement("thead");
  const headRow = document.createElement("tr");
  for (const h of headers) {
    const th = cell("th", h);
    th.scope = "col";
    headRow.append(th);
  }
  head.append(headRow);
  const tbody = document.createElement("tbody");
  table.append(cell("caption", caption, "visually-hidden"), head, tbody);
  body.append(note, table);
  return { note, table, tbody };
}

/** A row: a button that jumps to its step, then its cells (concealable texts go to `concealed`). */
function rowElement({ step, label, cells }, concealed) {
  const tr = document.createElement("tr");
  tr.dataset.step = String(step);
  rowLabels.set(tr, label);
  const button = cell("button", label, "row-jump");
  button.type = "button";
  button.setAttribute("aria-label", t("ui.table.go_to", { label }));
  const first = document.createElement("td");
  first.append(button);
  tr.append(first, ...cells.map((spec) => {
    const td = document.createElement("td");
    writeCell(td, spec, concealed);
    return td;
  }));
  return tr;
}

/**
 * A table whose rows are keyed by API step index, with a `mark(stepIndex)` that lights one;
 * clicking a row calls `setStep(frame)`.
 */
class StepTable {
  constructor(body, { caption, headers, emptyText }, setStep) {
    Object.assign(this, { body, emptyText, rows: new Map(), current: null, trace: null });
    Object.assign(this, tableElements(body, { caption, headers }));
    this.tbody.addEventListener("click", (event) => {
      const row = event.target.closest("tr[data-step]");
      if (row && this.trace) setStep(frameOfStep(this.trace, Number(row.dataset.step)));
    });
  }

  build(rowList, concealed) {
    this.rows = new Map();
    this.current = null;
    const fragment = document.createDocumentFragment();
    for (const row of rowList) {
      const tr = rowElement(row, concealed);
      this.rows.set(row.step, tr);
      fragment.append(tr);
    }
    this.tbody.replaceChildren(fragment);
  }

  /** Show `rowList` of `trace`; returns the concealable texts (see showUpTo). */
  fill(trace, rowList, noteText) {
    this.trace = trace;
    const concealed = [];
    if (sameRows(this.rows, rowList)) {
      for (const { step, cells } of rowList) {
        const tds = this.rows.get(step).cells;
        cells.forEach((spec, i) => writeCell(tds[i + 1], spec, concealed));
      }
    } else {
      this.build(rowList, concealed);
    }
    setText(this.note, rowList.length === 0 ? this.emptyText : noteText ?? "");
    this.note.hidden = !this.note.textContent;
    this.table.hidden = rowList.length === 0;
    return concealed;
  }

  mark(stepIndex) {
    const row = this.rows.get(stepIndex) ?? null;
    if (row === this.current) return;
    this.current?.classList.remove("current");
    this.current?.removeAttribute("aria-current");
    this.current = row;
    if (!row) return;
    row.classList.add("current");
    row.setAttribute("aria-current", "step");
    if (!this.body.hidden) revealRow(row);
  }
}

/** The nearest ancestor of `el` that scrolls its content vertically, or null. */
function scroller(el) {
  for (let parent = el.parentElement; parent; parent = parent.parentElement) {
    const { overflowY } = getComputedStyle(parent);
    if ((overflowY === "auto" || overflowY === "scroll") && parent.scrollHeight > parent.clientHeight) return parent;
  }
  return null;
}

/**
 * Scroll the table's own scrolling box (the panel area) just enough to show `row`. Unlike
 * scrollIntoView, never the document: stepping with the keys while reading the graph must not
 * pull the page (or the notebook around an embedded player) down to the table.
 */
function revealRow(row) {
  const box = scroller(row);
  if (!box) return;
  const view = box.getBoundingClientRect();
  const at = row.getBoundingClientRect();
  const head = row.closest("table")?.tHead?.offsetHeight ?? 0; // the sticky header covers the top
  const above = at.top - (view.top + head);
  const below = at.bottom - view.bottom;
  const delta = above < 0 ? above : below > 0 ? Math.min(below, above) : 0;
  if (delta !== 0) box.scrollBy({ top: delta, behavior: reducedMotion?.matches ? "instant" : "smooth" });
}

function pairText(nodeById, [id, index]) {
  return `(${nameOf(nodeById, id)},${index})`;
}

function listText(items, limit = 14) {
  const shown = items.length > limit ? ["\u2026", ...items.slice(-limit)] : items;
  return `[${shown.join(", ")}]`;
}

function sortRows(trace) {
  const { nodeById } = traceIndex(trace);
  const rows = [];
  const topo = traceIndex(trace).phases.topo ?? { first: 0, last: -1 };
  const state = topoStateAt(trace, topo.first - 1);
  for (let k = topo.first; k <= Math.min(topo.last, topo.first + TABLE_ROWS_MAX - 1); k++) {
    const step = trace.steps.at(k);
    topoStep(state, step); // the sort's state after step k, built on the row before's
    const { stack, sorted } = state;
    rows.push({
      step: k,
      label: step.action === "start" ? t("ui.sort.start_label") : String(k),
      cells: [
        { text: step.pop ? pairText(nodeById, step.pop) : t("ui.sort.start_pop"), className: "mono" },
        { text: narrationOf(trace, k), className: "what" },
        { text: listText(stack.map((e) => pairText(nodeById, e))), className: "mono stack" },
        { text: listText(sorted.map((id) => nameOf(nodeById, id))), className: "mono sorted" },
      ],
    });
  }
  return rows;
}

/** The backward steps' window (of TABLE_ROWS_MAX) that step `k` is in: 0 up to its first. */
function propagationWindow(trace, k) {
  const backward = traceIndex(trace).phases.backward;
  if (!backward || k < backward.first) return 0;
  return Math.floor((Math.min(k, backward.last) - backward.first) / TABLE_ROWS_MAX);
}

/** "Backward steps 601–1,200 of 65,818: …", when they do not fit one window; else nothing. */
function propagationNote(trace, window) {
  const backward = traceIndex(trace).phases.backward;
  const count = backward ? backward.last - backward.first + 1 : 0;
  if (count <= TABLE_ROWS_MAX) return "";
  const from = window * TABLE_ROWS_MAX + 1;
  const to = Math.min(count, from + TABLE_ROWS_MAX - 1);
  return t("ui.propagation.window", { from: countText(from), to: countText(to), count: countText(count) });
}

/** The seed's row (in the first window) and window `window`'s backward steps (the backward
 *  pass's steps are one run of the steps, one a visit). */
function propagationRows(trace, window = 0) {
  const { nodeById, phases } = traceIndex(trace);
  const rows = [];
  let number = window * TABLE_ROWS_MAX;
  const backward = phases.backward ?? { first: Infinity, last: -1 };
  const from = window === 0 ? Math.min(phases.seed?.first ?? Infinity, backward.first) : backward.first + number;
  const to = Math.max(phases.seed?.last ?? -1, Math.min(backward.last, backward.first + number + TABLE_ROWS_MAX - 1));
  for (let k = from; k <= Math.min(to, trace.steps.length - 1); k++) {
    const step = trace.steps.at(k);
    if (step.phase !== "seed" && step.phase !== "backward") continue;
    const first = frameOfStep(trace, k); // the frame step k is first shown at
    const name = nameOf(nodeById, step.node);
    const node = nodeById.get(step.node);
    let lines;
    if (step.phase === "seed") {
      lines = [{ text: t("ui.propagation.seed", { name }) }];
    } else if ((step.contributions ?? []).length === 0) {
      lines = [{ text: node.kind === "const" ? t("ui.propagation.constant") : t("ui.propagation.leaf", { name }) }];
    } else {
      lines = step.contributions.map((c, j) => {
        const to = nameOf(nodeById, c.to);
        const sum = c.grad_after !== c.contribution ? `  ${t("ui.propagation.now", { value: compactText(c.grad_after) })}` : "";
        const text = `grad[${to}] += ${chainText(c)}${sum}`;
        return { text, className: "mono", frame: first + j, hiddenText: `grad[${to}] += ?` };
      });
    }
    rows.push({
      step: k,
      label: step.phase === "seed" ? t("ui.propagation.seed_label") : String(++number),
      cells: [
        { text: name, className: "mono" },
        // The visited node's gradient is complete (and on its card) on the frame before its visit.
        { text: compactText(step.grad), className: "mono grad", frame: first - 1, hiddenText: "?" },
        { lines, className: "what" },
      ],
    });
  }
  return rows;
}

/** The index of the first of `cells` (sorted by frame) whose frame is above `limit`. */
function firstAbove(cells, limit) {
  let lo = 0;
  let hi = cells.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (cells[mid].frame <= limit) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Write each concealable text `{el, frame, text, hiddenText}` (sorted by frame): its text at
 * frames ≤ limit, else its hidden text. With the limit written last (`previous`), only the cells
 * between the two limits can change: a step costs the rows it reveals, not the table.
 */
function showUpTo(cells, limit, previous = null) {
  const from = previous === null ? 0 : firstAbove(cells, Math.min(limit, previous));
  const to = previous === null ? cells.length : firstAbove(cells, Math.max(limit, previous));
  for (let i = from; i < to; i += 1) {
    const cell = cells[i];
    const text = cell.frame <= limit ? cell.text : cell.hiddenText;
    setText(cell.el, text);
  }
}

/** Predicting: nothing past the current frame is shown; otherwise everything is. */
const revealLimit = (s) => (s.lab === "predict" ? s.step : Infinity);

/**
 * A table in panel `id`'s `body`: its rows are built when a trace is shown in the panel (a hidden
 * tab costs nothing: big graphs), the current row marked as the step moves, and in predict mode
 * the texts past the step concealed. `rowsOf(trace)`: what the rows depend on (the trace, or for
 * a table of no numbers its drawing: a slider move leaves the sort's 600 rows as they are).
 */
/** Whether `trace`'s sort is longer than its table shows: a big graph, whose tables are built when
 *  they come into view (micrograd's demo: the sort table's 600 rows, built and laid out below the
 *  first screen, cost about 0.2 s of CPU before its first paint). */
function builtInView(trace) {
  const topo = traceIndex(trace).phases.topo;
  return Boolean(topo) && topo.last - topo.first + 1 > TABLE_ROWS_MAX;
}

function mountTable(id, body, options, { buildRows, noteFor, rowsOf = (trace) => trace, windowOf = () => 0 }, store) {
  const { setStep, subscribe } = store;
  const table = new StepTable(body, options, setStep);
  let filled = null;
  let filledWindow = 0; // the rows' window (`windowOf(trace, step)`: a long backward pass's)
  const isFilled = (s) => filled === rowsOf(s.trace) && filledWindow === windowOf(s.trace, currentStep(s));
  let cells = [];
  let shownLimit = Infinity;
  const reveal = (s) => {
    const limit = revealLimit(s);
    if (limit === shownLimit) return;
    showUpTo(cells, limit, shownLimit);
    shownLimit = limit;
  };
  const refill = (s) => {
    filled = rowsOf(s.trace);
    filledWindow = windowOf(s.trace, currentStep(s));
    cells = table.fill(s.trace, buildRows(s.trace, filledWindow), noteFor(s.trace, filledWindow)).sort((x, y) => x.frame - y.frame);
    shownLimit = null; // every concealable text is to be written
    reveal(s);
  };
  let waiting = null; // the observer that fills the table when it comes near the view
  const fillInView = () => {
    if (waiting) return;
    waiting = new IntersectionObserver((entries) => {
      if (!entries.some((entry) => entry.isIntersecting)) return;
      waiting.disconnect();
      waiting = null;
      const s = store.state;
      if (!s.trace || s.panel !== id || isFilled(s)) return;
      refill(s);
      table.mark(currentStep(s));
    }, { rootMargin: "200px" });
    waiting.observe(body);
  };
  subscribe((s, changed) => {
    if (!s.trace) return;
    const refilled = s.panel === id && !isFilled(s);
    if (refilled && builtInView(s.trace)) {
      fillInView();
      return;
    }
    if (refilled) refill(s);
    if (!isFilled(s)) return; // built when shown
    if (refilled || changed.has("step")) table.mark(currentStep(s));
    if (changed.has("step") || changed.has("lab")) reveal(s);
  });
}

function currentStep(s) {
  return framesOf(s.trace)[s.step]?.step ?? -1;
}

/** The sort trace's and the propagation's tables, as two panels of `scope`. */
export function registerTraceTables(scope) {
  scope.panels.register({
    id: "sort",
    title: t("ui.tab.sort"),
    hideKey: "tables",
    mount(body) {
      mountTable("sort", body, {
        caption: t("ui.sort.caption"),
        headers: [t("ui.table.step"), t("ui.sort.pop"), t("ui.table.what"), t("ui.sort.stack"), t("ui.sort.sorted")],
        emptyText: t("ui.sort.empty"),
      }, {
        buildRows: sortRows,
        noteFor: (trace) => {
          const topo = traceIndex(trace).phases.topo;
          const count = topo ? topo.last - topo.first + 1 : 0;
          return count > TABLE_ROWS_MAX ? t("ui.sort.capped", { shown: TABLE_ROWS_MAX, count }) : "";
        },
        rowsOf: drawingOf, // the sort's steps carry no numbers
      }, scope.store);
    },
  });
  scope.panels.register({
    id: "propagation",
    title: t("ui.tab.propagation"),
    hideKey: "tables",
    mount(body) {
      mountTable("propagation", body, {
        caption: t("ui.propagation.caption"),
        headers: [t("ui.table.step"), t("ui.table.node"), "grad", t("ui.table.what")],
        emptyText: t("ui.propagation.empty"),
      }, { buildRows: propagationRows, noteFor: propagationNote, windowOf: propagationWindow }, scope.store);
    },
  });
}
