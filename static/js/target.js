// Any node as the target (state.target, the request's `target`): the key T on the card under the
// pointer (or focused), or a right-click on it and "Gradients of this node", asks for ∂node/∂x
// instead of ∂root/∂x. The cards the target does not depend on (the reply's `off_target`) are
// greyed out; a bar over the graph says whose gradients are shown and leads back to the root.
//
// Owner of: the cards' data-off-target and data-target, the target bar and the card menu.

import { t } from "./i18n.js";
import { bindKeys } from "./keys.js";
import { state, subscribe, update } from "./state.js";
import { attr } from "./svg.js";
import { traceIndex } from "./timeline.js";

const nameOf = (node) => node?.label || node?.text || node?.id || "";

function element(tag, className, props = {}) {
  const el = document.createElement(tag);
  if (className) el.className = className;
  return Object.assign(el, props);
}

/**
 * The bar in the pane's legend (so Fit keeps the cards clear of it): "Gradients of c: every grad
 * is ∂c/∂x" and "Back to the root".
 */
function createBar(legend) {
  const bar = element("li", "legend-target");
  bar.dataset.testid = "target-bar";
  bar.hidden = true;
  bar.setAttribute("role", "status");
  const words = element("span", "target-words");
  const back = element("button", "ghost", { type: "button", textContent: t("ui.target.back") });
  back.dataset.testid = "target-root";
  back.addEventListener("click", () => update({ target: null }));
  bar.append(words, back);
  legend.prepend(bar);
  return { bar, words };
}

/** The menu a right-click on a card opens: "Gradients of this node" (and back to the root). */
function createMenu(wrap) {
  const menu = element("div", "target-menu");
  menu.dataset.testid = "target-menu";
  menu.setAttribute("role", "menu");
  menu.hidden = true;
  const choose = element("button", "", { type: "button", textContent: t("ui.target.choose") });
  choose.dataset.testid = "target-choose";
  choose.setAttribute("role", "menuitem");
  menu.append(choose);
  wrap.append(menu);
  let nodeId = null;
  const close = () => {
    menu.hidden = true;
    nodeId = null;
  };
  choose.addEventListener("click", () => {
    if (nodeId) pick(nodeId);
    close();
  });
  document.addEventListener("pointerdown", (event) => {
    if (!menu.contains(event.target)) close();
  });
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape") close();
  });
  return {
    open(id, x, y) {
      nodeId = id;
      const box = wrap.getBoundingClientRect();
      menu.style.left = `${x - box.left}px`;
      menu.style.top = `${y - box.top}px`;
      menu.hidden = false;
      choose.focus();
    },
  };
}

/** Make node `id` the target (the root: back to the usual pass); a constant cannot be one. */
function pick(id) {
  const node = state.trace && traceIndex(state.trace).nodeById.get(id);
  if (!node || node.kind === "const") return;
  update({ target: id === state.trace.root ? null : id });
}

/** The card a key or a right-click is about: the one under the pointer, else the focused one. */
function cardInFocus() {
  const focused = document.activeElement?.closest?.("[data-node-id]");
  return state.hoverNode ?? focused?.getAttribute("data-node-id") ?? null;
}

// Every card: a node's, or a collapsed statement's (it shows its root's numbers, so it is its root).
export const CARDS = ".layer-nodes [data-node-id], .layer-group-cards [data-root]";
export const cardId = (card) => card.getAttribute("data-node-id") ?? card.getAttribute("data-root");

/** `svg`: the graph; `graph`: its view (graph-view.js); `wrap`: the pane that holds it (the bar and menu go over it). */
export function mountTarget({ svg, wrap, graph }) {
  const { bar, words } = createBar(wrap.querySelector(".legend"));
  const menu = createMenu(wrap);
  svg.addEventListener("contextmenu", (event) => {
    const card = event.target.closest?.("[data-node-id], [data-root]");
    const node = card && state.trace && traceIndex(state.trace).nodeById.get(cardId(card));
    if (!node || node.kind === "const") return;
    event.preventDefault();
    menu.open(node.id, event.clientX, event.clientY);
  });
  bindKeys({
    t: () => {
      const id = cardInFocus();
      if (!id) return false;
      pick(id === state.target ? state.trace.root : id); // T again on the target: back to the root
      return true;
    },
  });

  function paint(trace) {
    const off = new Set(trace.off_target ?? []);
    const target = trace.target ?? trace.root;
    for (const card of svg.querySelectorAll(CARDS)) {
      const id = cardId(card);
      attr(card, "data-off-target", off.has(id) ? "true" : null);
      attr(card, "data-target", target !== trace.root && id === target ? "true" : null);
    }
    bar.hidden = target === trace.root;
    bar.dataset.target = target;
    if (!bar.hidden) {
      const name = nameOf(traceIndex(trace).nodeById.get(target));
      words.textContent = t("ui.target.shown", { name, count: off.size });
    }
  }

  graph.onArranged(() => state.trace && paint(state.trace)); // cards drawn anew (a group folded)
  subscribe((s, changed) => {
    if (changed.has("trace") && s.trace) paint(s.trace);
  });
}
