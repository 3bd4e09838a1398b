// Any node as the target (state.target, the request's `target`): the key T on the card under the
// pointer (or focused), or a right-click on it and "Gradients of this node", asks for ∂node/∂x
// instead of ∂root/∂x. The cards the target does not depend on (the trace's `off_target`) are
// greyed out; a bar over the graph says whose gradients are shown and leads back to the root.
//
// The greying is a mark (graph/marks.js) that every player has (features.js): it reads the trace alone,
// and owns the cards' data-off-target and data-target and the legend's target bar. Picking a
// target asks the server for a new trace: only the page mounts the picker (mountTargetPicker),
// which owns the card menu.

import { h, setHidden, setText } from "../core/dom.js";
import { traceIndex } from "../core/frames.js";
import { t } from "../core/i18n.js";
import { nodeName } from "../core/names.js";

/** The bar in the pane's legend (so Fit keeps the cards clear of it), with its way back to the root. */
function createBar(legend, scope) {
  const words = h("span", { class: "target-words" });
  const back = h("button", {
    type: "button", class: "ghost", "data-testid": "target-root", text: t("ui.target.back"),
    onclick: () => scope.store.update({ target: null }),
  });
  back.hidden = !scope.server; // a player without the server shows the trace it was given
  const bar = h("li", { class: "legend-target", "data-testid": "target-bar", role: "status" }, words, back);
  bar.hidden = true;
  legend.prepend(bar);
  return { bar, words };
}

/** The target bar for `trace`: hidden when its gradients are the root's. */
function writeBar({ bar, words }, trace, offCount) {
  const target = trace.target ?? trace.root;
  setHidden(bar, target === trace.root);
  if (bar.dataset.target !== target) bar.dataset.target = target;
  if (bar.hidden) return;
  const name = nodeName(traceIndex(trace).nodeById.get(target));
  const text = t("ui.target.shown", { name, count: offCount });
  setText(words, text);
}

/** The target's mark, its bar added to `legend` (the pane's legend list). */
export function targetMark({ legend }, scope) {
  const bar = createBar(legend, scope);
  const off = { "data-off-target": "true" };
  return {
    name: "target",
    owns: { card: ["data-off-target", "data-target"] },
    render({ trace }) {
      const offTarget = trace.off_target ?? [];
      writeBar(bar, trace, offTarget.length);
      const cards = new Map(offTarget.map((id) => [id, off]));
      if (trace.target && trace.target !== trace.root) cards.set(trace.target, { "data-target": "true" });
      return { cards };
    },
  };
}

/** The menu a right-click on a card opens: "Gradients of this node". `pick(id)` takes the choice. */
function createMenu(wrap, pick) {
  let nodeId = null;
  const close = () => {
    menu.hidden = true;
    nodeId = null;
  };
  const choose = h("button", {
    type: "button", role: "menuitem", "data-testid": "target-choose", text: t("ui.target.choose"),
    onclick: () => {
      if (nodeId) pick(nodeId);
      close();
    },
  });
  const menu = h("div", { class: "target-menu", role: "menu", "data-testid": "target-menu" }, choose);
  menu.hidden = true;
  menu.addEventListener("keydown", (event) => {
    if (event.key === "Escape") close(); // an open menu holds the scope's keys (core/keys.js openLayer)
  });
  wrap.ownerDocument.addEventListener("pointerdown", (event) => {
    if (!menu.contains(event.target)) close();
  });
  wrap.append(menu);
  return {
    open(id, x, y) {
      nodeId = id;
      const box = wrap.getBoundingClientRect();
      Object.assign(menu.style, { left: `${x - box.left}px`, top: `${y - box.top}px` });
      menu.hidden = false;
      choose.focus();
    },
  };
}

/** The node a card element stands for: its own, or a collapsed statement's root (whose numbers it shows). */
const cardNode = (element) => element?.closest?.("[data-node-id], [data-root]");
const cardId = (card) => card.getAttribute("data-node-id") ?? card.getAttribute("data-root");

/**
 * The page's target picker on `graph` (graph/view.js): a right-click on a card opens its menu, T
 * picks the card under the pointer (or focused), T on the target goes back to the root.
 */
export function mountTargetPicker(graph, scope) {
  const { state, update } = scope.store;
  const nodeOf = (id) => (state.trace && id ? traceIndex(state.trace).nodeById.get(id) : null);
  // A constant cannot be a target (nothing flows into it); the root is the usual pass.
  const pick = (id) => {
    const node = nodeOf(id);
    if (node && node.kind !== "const") update({ target: id === state.trace.root ? null : id });
  };
  const menu = createMenu(graph.wrap, pick);
  graph.svg.addEventListener("contextmenu", (event) => {
    const card = cardNode(event.target);
    const node = card && nodeOf(cardId(card));
    if (!node || node.kind === "const") return;
    event.preventDefault();
    menu.open(node.id, event.clientX, event.clientY);
  });
  scope.keys.bindKeys({
    t: () => {
      const focused = cardNode(document.activeElement);
      const id = state.hoverNode ?? (focused ? cardId(focused) : null);
      if (!nodeOf(id)) return false;
      pick(id === state.target ? state.trace.root : id);
      return true;
    },
  });
}
