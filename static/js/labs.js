// The Labs panel: break the backward pass on purpose (the = bug, a wrong visit order), predict
// gradients before they are revealed, and experiment with per-preset challenges.
//
// One lab owns the page at a time: `state.lab` (see state.js). Turning a lab on switches the
// request options that belong to it (`mode`, `order`) and turns the others off.

import { challengeSection } from "./challenges.js";
import { h } from "./lab-dom.js";
import { t } from "./i18n.js";
import { mountMarks } from "./lab-marks.js";
import { orderSection } from "./lab-order.js";
import { overwriteSection } from "./lab-overwrite.js";
import { predictSection } from "./lab-predict.js";
import { trainSection } from "./lab-train.js";
import { registerPanel } from "./panels.js";
import { state, subscribe, update } from "./state.js";

/** Make `lab` (null | "overwrite" | "order" | "predict" | "train") the active lab. */
export function setLab(lab) {
  update({
    lab,
    mode: lab === "overwrite" ? "overwrite" : "correct",
    order: lab === "order" ? state.order : null,
    orderDraft: lab === "order" ? state.orderDraft : [],
  });
}

/**
 * Mount the labs: the panel and the marks on `svg`, the graph. `setValues(values)` gives the
 * sliders new values and asks for their numbers (the Train lab's steps).
 */
export function mountLabs({ svg, setValues }) {
  mountMarks(svg);
  // A new program (or a differently built graph) has other node ids: a placed order no longer applies.
  subscribe((s, changed) => {
    const rebuilt = ["source", "expandDerived", "foldConstants"].some((k) => changed.has(k));
    if (rebuilt && (s.order || s.orderDraft.length)) update({ order: null, orderDraft: [] });
    // An opened or closed lab resizes the panel area, and so the graph: fit it again, so that no
    // card hides under the panel.
    if (changed.has("lab")) requestAnimationFrame(() => document.getElementById("fit")?.click());
  });
  registerPanel({
    id: "labs",
    title: t("ui.tab.labs"),
    mount(body) {
      body.classList.add("labs");
      body.append(h("div", { class: "lab-grid" },
        overwriteSection({ setLab }), orderSection({ setLab, svg }), predictSection({ setLab }),
        trainSection({ setLab, setValues }), challengeSection()));
    },
  });
}
