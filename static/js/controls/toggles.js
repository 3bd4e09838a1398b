// The display toggles: "show final gradients" and "fold constants" set their state flag, and
// every box follows the state (a shared link may switch them on). While the predict lab runs,
// final gradients would give its answers away: the box is off and disabled, with a note saying
// why (this module is the boxes' only writer).

import { h } from "../core/dom.js";
import { t } from "../core/i18n.js";

/** The note beside the final-gradients box, made once: why it is off while predicting. */
function finalGradsNote(box) {
  const note = h("span", { id: "final-grads-note", class: "toggle-note", "data-testid": "final-grads-note", text: t("ui.predict.final_grads_note"), hidden: true });
  box.parentElement.append(note);
  box.setAttribute("aria-describedby", note.id);
  return note;
}

/**
 * `boxes`: {finalGrads, expandDerived, foldConstants} checkboxes (any may be missing; the
 * expand box is only kept in step: its change asks the server for another graph, main.js).
 */
export function mountToggles({ boxes }, scope) {
  const { subscribe, update } = scope.store;
  boxes.finalGrads?.addEventListener("change", (event) => update({ finalGrads: event.target.checked }));
  boxes.foldConstants?.addEventListener("change", (event) => update({ foldConstants: event.target.checked }));
  const note = boxes.finalGrads ? finalGradsNote(boxes.finalGrads) : null;
  subscribe((s, changed) => {
    const predicting = s.lab === "predict";
    // However they were switched on (a link, the box), final gradients stay off while predicting.
    if (predicting && s.finalGrads) update({ finalGrads: false });
    for (const [key, box] of Object.entries(boxes)) {
      if (box && changed.has(key) && box.checked !== Boolean(s[key])) box.checked = Boolean(s[key]);
    }
    if (note && changed.has("lab")) {
      note.hidden = !predicting;
      boxes.finalGrads.disabled = predicting;
    }
  });
}
