// Slider ↔ card: the pointer over a leaf's slider row, or the focus inside it, lights the leaf's
// card in the graph; the pointer over a leaf's card lights its slider row (scrolled into view in
// a long panel). Both go through state.hoverNode, so the editor lights the leaf's line as well.
//
// Owner of the `data-linked` attribute: on the cards as a mark (graph/marks.js), on the slider rows
// (controls/sliders.js gives each row its leaf's node id in data-leaf-id) by mountLeafRows.

/** The leaf node `s.hoverNode` names, or null (another node, or none). */
function hoveredLeaf(s) {
  const id = s.hoverNode;
  return id && s.trace?.leaves?.some((leaf) => leaf.id === id) ? id : null;
}

/** The mark that lights the card of the leaf whose slider row is hovered or focused. */
export function leafLinkMark() {
  return {
    name: "leaf-link",
    keys: ["hoverNode"],
    owns: { card: ["data-linked"] },
    render({ state }) {
      const id = hoveredLeaf(state);
      return id ? { cards: new Map([[id, { "data-linked": "true" }]]) } : null;
    },
  };
}

/** The slider rows in `container` light their leaf's card and are lit by it. */
export function mountLeafRows(container, scope) {
  const { state, subscribe, update } = scope.store;
  let linked = null;
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
    const id = hoveredLeaf(s);
    const row = id ? container.querySelector(`.slider[data-leaf-id="${CSS.escape(id)}"]`) : null;
    if (linked && linked !== row) linked.removeAttribute("data-linked");
    if (row) {
      row.setAttribute("data-linked", "true");
      if (!fromRow && changed.has("hoverNode")) row.scrollIntoView({ block: "nearest" });
    }
    if (!s.hoverNode) fromRow = false;
    linked = row;
  });
}
