// The classroom layer on top of the page: explanations, trace and gradient tables, the display
// toggles' sync with the state, sharing/export, and presentation mode. main.js calls
// mountClassroom once with the elements it needs and the current request body.

import { mountExplanations } from "./explain-view.js";
import { registerGradTable } from "./grad-table.js";
import { mountPresentation } from "./present.js";
import { mountShare } from "./share.js";
import { subscribe, update } from "./state.js";
import { registerTraceTables } from "./trace-tables.js";

const $ = (id) => document.getElementById(id);

/** The checkboxes follow the state (a shared link may switch them on). */
function mountToggles() {
  const boxes = { finalGrads: $("toggle-final-grads"), expandDerived: $("toggle-expand"), foldConstants: $("toggle-fold") };
  boxes.foldConstants?.addEventListener("change", (event) => update({ foldConstants: event.target.checked }));
  subscribe((s, changed) => {
    for (const [key, box] of Object.entries(boxes)) {
      if (box && changed.has(key) && box.checked !== Boolean(s[key])) box.checked = Boolean(s[key]);
    }
    if (changed.has("foldConstants")) $("graph").classList.toggle("fold-constants", s.foldConstants);
  });
}

export function mountClassroom({ requestBody }) {
  mountExplanations({ svg: $("graph"), wrap: $("graph-wrap") }); // first: its Escape wins
  registerTraceTables();
  registerGradTable();
  mountToggles();
  const actions = $("header-actions");
  mountShare(actions, { requestBody });
  mountPresentation(actions, { jumpForward: $("jump-forward"), jumpBackward: $("jump-backward") });
}
