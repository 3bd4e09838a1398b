// The gradient table: every leaf and intermediate node with its final gradient, what that number
// means in words, and the server's numeric check (central differences) for the leaves. New values
// of the same graph rewrite the changed cells in place. A graph of more nodes than a table shows
// (TABLE_ROWS_MAX) lists them a page at a time, the leaves first, with a button for the next page.

import { passComplete } from "./explain.js";
import { flagNotes, flagsOf, flagsPresent, flagWords } from "../gradients/flag-words.js";
import { neuronHealth, neuronHealthTable } from "../gradients/neuron-health.js";
import { formulaName } from "../core/names.js";
import { compactText, countText, isFiniteValue } from "../core/format.js";
import { h, setClass, setHidden, setText } from "../core/dom.js";
import { t } from "../core/i18n.js";
import { traceIndex } from "../core/frames.js";
import { TABLE_ROWS_MAX } from "./trace-tables.js";
import { NUMBERS_REST_MS, drawingOf } from "../compute/merge-numbers.js";
import { TraceMemo } from "../core/trace-memo.js";

const STATUS_TEXT = { pass: "ui.check.pass", kink: "ui.check.kink", fail: "ui.check.fail", nonfinite: "ui.check.nonfinite", imprecise: "ui.check.imprecise" };

/** "if a increases by a small ε, f decreases by about 3ε". */
export function meaningOf(name, rootName, grad) {
  if (!isFiniteValue(grad)) return t("ui.meaning.not_finite", { name, root: rootName });
  if (grad === 0) return t("ui.meaning.zero", { root: rootName });
  const size = Math.abs(grad) === 1 ? "" : compactText(Math.abs(grad));
  return t(grad > 0 ? "ui.meaning.up" : "ui.meaning.down", { name, root: rootName, size });
}

const rowIds = new TraceMemo("gradient rows"); // a drawing → the ids of its table's rows

/** The ids of the table's rows, the same for every trace of a drawing (a slider's new numbers):
 *  the leaves, then the other op nodes but the root. Read from the drawing, whose nodes exist: a
 *  merged trace makes a node when it is read (merge-numbers.js), and the rows not shown are not. */
function rowIdsOf(trace) {
  const drawing = drawingOf(trace);
  let ids = rowIds.get(drawing);
  if (!ids) {
    const leafIds = new Set(drawing.leaves.map((l) => l.id));
    const others = drawing.nodes.filter((n) => n.kind === "op" && !leafIds.has(n.id) && n.id !== drawing.root);
    ids = [...leafIds, ...others.map((n) => n.id)];
    rowIds.set(drawing, ids);
  }
  return ids;
}

/** The table's first `limit` rows: `{id, className, cells: [[text, className]]}` per leaf and
 *  intermediate node (the leaves first), and how many rows there are in all: {rows, total}. */
function rowsOf(trace, limit) {
  const { nodeById } = traceIndex(trace);
  const rootName = formulaName(nodeById.get(trace.root));
  const checks = new Map(trace.gradcheck.results.map((r) => [r.id, r]));
  const ids = rowIdsOf(trace);
  const rows = ids.slice(0, limit).map((id) => {
    const node = nodeById.get(id);
    const check = checks.get(node.id);
    const name = formulaName(node);
    const flags = flagsOf(trace, node.id);
    return {
      id: node.id,
      flags: flags.join(" "),
      className: node.kind === "leaf" ? "leaf" : "intermediate",
      cells: [
        [name, "mono"],
        [compactText(node.grad), "mono grad"],
        [meaningOf(name, rootName, node.grad), "what"],
        [check ? compactText(check.numeric) : "\u2014", "mono"],
        [check ? (STATUS_TEXT[check.status] ? t(STATUS_TEXT[check.status]) : check.status) : node.kind === "leaf" ? t("ui.check.not_checked") : "\u2014", check ? `status status-${check.status}` : ""],
        [flagWords(flags), "flag"],
      ],
    };
  });
  return { rows, total: ids.length };
}

function footText(gradcheck) {
  const { checked, total, capped, eps_rule: eps } = gradcheck;
  const which = capped ? t("ui.gradients.checked_some", { checked, total }) : t("ui.gradients.checked_all", { total });
  return t("ui.gradients.foot", { eps, checked: which });
}

/** The note shown before the pass is over, with its "Go to the end" button (`toEnd`). */
function pendingNote(toEnd) {
  const note = h("p", { class: "table-note", text: t("ui.gradients.pending", { toggle: t("ui.toggles.final_grads") }) });
  note.append(" ", h("button", { type: "button", text: t("ui.gradients.go_end"), onclick: toEnd }));
  return note;
}

/** The table with its header row: {table, tbody}. */
function gradTableElements() {
  const headRow = h("tr", {}, ...["ui.table.node", "grad", "ui.gradients.meaning", "ui.gradients.numeric", "ui.gradients.check", "ui.gradients.flag"]
    .map((key) => h("th", { scope: "col", text: key.startsWith("ui.") ? t(key) : key }))); // grad: the notation
  const tbody = h("tbody");
  return { table: h("table", { class: "trace-table grad-table" }, h("thead", {}, headRow), tbody), tbody };
}

function writeRow(tr, row) {
  setClass(tr, row.className);
  if (tr.dataset.flags !== row.flags) tr.dataset.flags = row.flags;
  row.cells.forEach(([text, className], i) => {
    setText(tr.cells[i], text);
    setClass(tr.cells[i], className);
  });
}

/** `rows` in `tbody`: written in place when they are the same nodes as `shownIds`, else made anew. Returns their ids. */
function writeRows(tbody, rows, shownIds) {
  if (rows.length === shownIds.length && rows.every((row, i) => row.id === shownIds[i])) {
    rows.forEach((row, i) => writeRow(tbody.rows[i], row));
    return shownIds;
  }
  tbody.replaceChildren(...rows.map((row) => {
    const tr = h("tr", { "data-node-id": row.id }, ...row.cells.map(() => h("td")));
    writeRow(tr, row);
    return tr;
  }));
  return rows.map((row) => row.id);
}

/** The flag sentences under the table for `trace` (`last`: those shown, kept when the same). */
function flagNotesOf(trace, last) {
  const present = flagsPresent(trace);
  if (present.join() === last.shown) return last;
  return { shown: present.join(), list: present.length ? flagNotes(present, "grad-flag-notes") : null };
}

/**
 * The table's elements, made once; `draw(s)` shows the state's trace. New values of the same
 * nodes rewrite only the cell texts that changed, in place (an open table keeps its scroll
 * position while a slider moves); other node lists rebuild the rows. `store`: its "Go to the
 * end" moves that store's timeline.
 */
function createGradTable(body, store) {
  const note = pendingNote(store.toEnd);
  const { table, tbody } = gradTableElements();
  const foot = h("p", { class: "table-note" });
  let limit = { drawing: null, rows: TABLE_ROWS_MAX }; // rows listed of the graph drawn (a slider keeps them)
  const moreText = h("span");
  const moreButton = h("button", {
    type: "button",
    onclick: () => {
      limit.rows += TABLE_ROWS_MAX;
      draw(store.state);
    },
  });
  const more = h("p", { class: "table-note", "data-testid": "grad-table-more" }, moreText, " ", moreButton);
  let shownIds = [];
  let notes = { shown: "", list: null }; // the sentences of the flags shown, under the table
  let neurons = { trace: null, section: null }; // a model's neurons across samples, over the table
  const show = (...parts) => {
    if (parts.length !== body.children.length || parts.some((part, i) => body.children[i] !== part)) body.replaceChildren(...parts);
  };
  function draw(s) {
    const { trace } = s;
    if (!trace) show();
    else if (!s.finalGrads && !passComplete(trace, s.step)) show(note);
    else {
      if (limit.drawing !== drawingOf(trace)) limit = { drawing: drawingOf(trace), rows: TABLE_ROWS_MAX };
      const { rows, total } = rowsOf(trace, limit.rows);
      shownIds = writeRows(tbody, rows, shownIds);
      setHidden(more, rows.length === total);
      setText(moreText, t("ui.gradients.shown", { shown: countText(rows.length), count: countText(total) }));
      setText(moreButton, t("ui.gradients.more", { count: countText(Math.min(TABLE_ROWS_MAX, total - rows.length)) }));
      setText(foot, footText(trace.gradcheck));
      notes = flagNotesOf(trace, notes);
      if (neurons.trace !== trace) {
        const rows = neuronHealth(trace);
        neurons = { trace, section: rows.length ? neuronHealthTable(rows) : null };
      }
      show(...[neurons.section, table, more.hidden ? null : more, foot, notes.list].filter(Boolean));
    }
  }
  return draw;
}

/** The gradient table, as a panel of `scope`: drawn when shown, and when the pass ends. */
export function registerGradTable(scope) {
  scope.panels.register({
    id: "gradients",
    title: t("ui.tab.gradients"),
    hideKey: "tables",
    mount(body) {
      const draw = createGradTable(body, scope.store);
      let drawn = { trace: null, finalGrads: null, complete: null };
      let resting = { trace: null, timer: 0 }; // a slider's numbers whose redraw waits for a pause
      const rest = () => {
        clearTimeout(resting.timer);
        resting = { trace: null, timer: 0 };
      };
      const redraw = (s) => {
        drawn = { trace: s.trace, finalGrads: s.finalGrads, complete: s.finalGrads || passComplete(s.trace, s.step) };
        draw(s);
      };
      // A hidden tab is drawn when it is shown (big graphs: no work for an unseen table); step
      // changes only matter when they cross "the pass is over". A slider's new numbers of a graph
      // longer than the table (its flags and neurons counted over all of it: 60 ms a move on
      // micrograd's demo) are written once the drag pauses.
      scope.store.subscribe((s, changed) => {
        if (!s.trace || s.panel !== "gradients") return rest();
        const complete = s.finalGrads || passComplete(s.trace, s.step);
        if (drawn.trace === s.trace && drawn.finalGrads === s.finalGrads && drawn.complete === complete) return rest();
        const moved = !changed.has("panel") && drawn.trace !== null && drawingOf(drawn.trace) === drawingOf(s.trace)
          && drawn.complete === complete && drawn.finalGrads === s.finalGrads;
        if (!moved || rowIdsOf(s.trace).length <= TABLE_ROWS_MAX) {
          rest();
          redraw(s);
        } else if (resting.trace !== s.trace) {
          rest();
          resting = { trace: s.trace, timer: setTimeout(() => (rest(), redraw(scope.store.state)), NUMBERS_REST_MS) };
        }
      });
    },
  });
}
