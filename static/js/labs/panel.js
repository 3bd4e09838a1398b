// The Labs panel: a card per lab, each made by its module (lab-*.js, labs/challenges.js): break the
// backward pass on purpose (the = bug, a wrong visit order), predict gradients before they are
// revealed, train by gradient descent, and experiment with per-preset challenges. The player
// says which labs it has: the page all of them (most need its server: a variant's trace, the
// presets), an embedded player the predict lab and the Train lab, which need nothing but the
// trace (the player descends on its own, train/descend.js).
//
// One lab owns the player at a time: `state.lab` (see core/store.js). Turning a lab on switches the
// request options that belong to it (`mode`, `order`) and turns the others off.

import { h } from "../core/dom.js";
import { t } from "../core/i18n.js";

/** Make `lab` (null | "overwrite" | "order" | "predict" | "train") the active lab of `store`. */
export function setLab(store, lab) {
  const { state, update } = store;
  update({
    lab,
    mode: lab === "overwrite" ? "overwrite" : "correct",
    order: lab === "order" ? state.order : null,
    orderDraft: lab === "order" ? state.orderDraft : [],
  });
}

/**
 * Mount the labs on `scope`: a panel with a card per lab. `labs`: the cards' makers, each
 * `(scope, setLab, {setValues}) → element` (overwriteSection, orderSection, predictSection,
 * trainSection, challengeSection); `setValues(values)` gives the sliders new values and asks for
 * their numbers (the Train lab's steps).
 */
export function mountLabs(scope, { labs, setValues = () => {} }) {
  const { subscribe, update } = scope.store;
  // A new program (or a differently built graph) has other node ids: a placed order no longer applies.
  subscribe((s, changed) => {
    const rebuilt = ["source", "expandDerived", "foldConstants"].some((k) => changed.has(k));
    if (rebuilt && (s.order || s.orderDraft.length)) update({ order: null, orderDraft: [] });
    // An opened or closed lab resizes the panel area, and so the graph: fit it again, so that no
    // card hides under the panel.
    if (changed.has("lab")) requestAnimationFrame(() => scope.graph?.fit());
  });
  scope.panels.register({
    id: "labs",
    title: t("ui.tab.labs"),
    hideKey: "labs",
    tensor: true, // its tensor cards (labs/tensor-labs.js) read a tensor program
    mount(body) {
      body.classList.add("labs");
      const choose = (lab) => setLab(scope.store, lab);
      body.append(h("div", { class: "lab-grid" }, ...labs.map((card) => card(scope, choose, { setValues }))));
    },
  });
}
