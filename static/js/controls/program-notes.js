// The program's notes: the trace's warnings that are not about one node (lines of pasted
// micrograd that are skipped, copy leftovers read as blanks, names the result does not use, aliases, values for names that are
// no leaf; from the Value reader: reused operands micrograd's set merged, an op no row of the
// table explains, leaves that moved after the forward pass), listed under the program while the trace
// shown is the program's (the page's editor, an embedded player). Writes only the list it is given.

import { t } from "../core/i18n.js";

const WORDS = {
  skipped: "ui.notes.skipped",
  unused: "ui.notes.unused",
  alias: "ui.notes.alias",
  unknown_value: "ui.notes.unknown_value",
  pasted: "ui.notes.pasted",
  unknown_op: "ui.notes.unknown_op",
  stale_graph: "ui.notes.stale_graph",
};

function item(warning) {
  const li = document.createElement("li");
  li.className = "program-note";
  li.dataset.type = warning.type;
  if (warning.line != null) li.dataset.line = String(warning.line);
  const tag = document.createElement("span");
  tag.className = "program-note-tag";
  tag.textContent = warning.type === "merged_operand" ? "micrograd"
    : WORDS[warning.type] ? t(WORDS[warning.type]) : warning.type.replaceAll("_", " ");
  li.append(tag, ` ${warning.message}`);
  return li;
}

/** Notes of the trace the page shows (the visit-order lab's late/never_visited are its own). */
export function programNotes(trace) {
  return (trace?.warnings ?? []).filter((w) => w.type !== "late" && w.type !== "never_visited");
}

/** Keep `list` (a <ul>) showing the notes of the scope's trace; hidden when there are none. */
export function mountNotes(list, scope) {
  const { subscribe } = scope.store;
  let shown = null;
  let read = null; // the warnings last read: a slider move's trace keeps its program's (the same list)
  subscribe((s, changed) => {
    if (!changed.has("trace") && !changed.has("error")) return;
    const warnings = s.error ? null : s.trace?.warnings;
    if (warnings && warnings === read) return;
    read = warnings;
    const notes = s.error ? [] : programNotes(s.trace);
    const key = JSON.stringify(notes);
    if (key === shown) return;
    shown = key;
    list.replaceChildren(...notes.map(item));
    list.hidden = notes.length === 0;
  });
}
