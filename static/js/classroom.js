// The classroom layer on top of the page: explanations, trace and gradient tables, the display
// toggles' sync with the state, sharing/export, and presentation mode. main.js calls
// mountClassroom once with the elements it needs and the current request body.

import { mountExplanations } from "./explain-view.js";
import { registerGradTable } from "./grad-table.js";
import { mountPresentation } from "./present.js";
import { mountShare } from "./share.js";
import { mountToggles } from "./toggles.js";
import { registerTraceTables } from "./trace-tables.js";

const $ = (id) => document.getElementById(id);

export function mountClassroom({ requestBody }) {
  mountExplanations({ svg: $("graph"), wrap: $("graph-wrap") }); // first: its Escape wins
  registerTraceTables();
  registerGradTable();
  mountToggles({
    boxes: { finalGrads: $("toggle-final-grads"), expandDerived: $("toggle-expand"), foldConstants: $("toggle-fold") },
    graph: $("graph"),
  });
  const actions = $("header-actions");
  mountShare(actions, { requestBody });
  mountPresentation(actions, { jumpForward: $("jump-forward"), jumpBackward: $("jump-backward") });
}
