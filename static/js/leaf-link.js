// Slider ↔ card: the pointer over a leaf's slider row, or the focus inside it, lights the leaf's
// card in the graph; the pointer over a leaf's card lights its slider row (scrolled into view in
// a long panel). Both go through state.hoverNode, so the editor lights the leaf's line as well.
//
// Owner of the `data-linked` attribute, on the cards (`[data-node-id]` in the graph) and on the
// slider rows (sliders.js gives each row its leaf's node id in data-leaf-id).

import { state, subscribe, update } from "./state.js";
import { attr } from "./svg.js";

/** `container`: the sliders' panel; `svg`: the graph. */
export function mountLeafLink({ container, svg }) {
  let linked = { card: null, row: null };
  let fromRow = false; // the hover began on a row: do not scroll the panel under the pointer

  const rowOf = (target) => target.closest?.(".slider[data-leaf-id]");
  const enter = (event) => {
    const row = rowOf(event.target);
    if (!row) return;
    fromRow = true;
    update({ hoverNode: row.dataset.leafId });
  };
  const leave = (event) => {
    const row = rowOf(event.target);
    if (!row || row.contains(event.relatedTarget)) return;
    if (state.hoverNode === row.dataset.leafId) update({ hoverNode: null });
  };
  container.addEventListener("pointerover", enter);
  container.addEventListener("pointerout", leave);
  container.addEventListener("focusin", enter);
  container.addEventListener("focusout", leave);

  subscribe((s, changed) => {
    if (!changed.has("hoverNode") && !changed.has("trace")) return;
    const id = s.hoverNode;
    const isLeaf = Boolean(id) && Boolean(s.trace?.leaves?.some((leaf) => leaf.id === id));
    const card = isLeaf ? svg.querySelector(`.layer-nodes [data-node-id="${CSS.escape(id)}"]`) : null;
    const row = isLeaf ? container.querySelector(`.slider[data-leaf-id="${CSS.escape(id)}"]`) : null;
    if (linked.card && linked.card !== card) attr(linked.card, "data-linked", null);
    if (linked.row && linked.row !== row) linked.row.removeAttribute("data-linked");
    if (card) attr(card, "data-linked", "true");
    if (row) {
      row.setAttribute("data-linked", "true");
      if (!fromRow && changed.has("hoverNode")) row.scrollIntoView({ block: "nearest" });
    }
    if (!id) fromRow = false;
    linked = { card, row };
  });
}
