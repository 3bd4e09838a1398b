// The visit-order lab: the learner places a backward visit order (clicking node cards, or Tab to a
// card and Enter), runs it, and reads which contributions arrived
// too late. Leaves are optional in the order (they have nothing to pass on); constants are left out.

import { t } from "../core/i18n.js";
import { wrongSentences } from "./overwrite.js";
import { h, setHidden, toggleSwitch } from "../core/dom.js";
import { nodeName } from "../core/names.js";
import { frameOfStep, traceIndex } from "../core/frames.js";
import { onPlainClick } from "../core/svg.js";

/** Add node `id` to `store`'s draft, or take it out when it is already placed. */
export function placeNode(store, id) {
  const { state, update } = store;
  const node = state.trace && traceIndex(state.trace).nodeById.get(id);
  if (state.lab !== "order" || !node || node.kind === "const") return;
  const draft = state.orderDraft.includes(id) ? state.orderDraft.filter((x) => x !== id) : [...state.orderDraft, id];
  update({ orderDraft: draft });
}

/** Node clicks (a press and release without a drag) and Enter/Space on a focused card. */
function listenToCards(svg, store) {
  const cardId = (element) => element?.closest?.("[data-testid=node]")?.getAttribute("data-node-id");
  onPlainClick(svg, (pressed) => {
    const id = cardId(pressed);
    if (id) placeNode(store, id);
  });
  svg.addEventListener("keydown", (event) => {
    const id = cardId(event.target);
    if (store.state.lab !== "order" || (event.key !== "Enter" && event.key !== " ") || !id) return;
    event.preventDefault();
    placeNode(store, id);
  });
}

function outcome(trace) {
  const check = trace.order_check;
  if (!check) return [];
  const lines = [];
  if (check.valid) {
    lines.push(h("p", { class: "lab-ok", "data-testid": "order-verdict", text: `\u2713 ${check.message}.` }));
    return lines;
  }
  lines.push(h("p", { class: "lab-bad", "data-testid": "order-verdict", text: t("ui.order.invalid", { message: check.message }) }));
  for (const warning of trace.warnings ?? []) {
    if (warning.type === "late" || warning.type === "never_visited") lines.push(h("p", { class: "lab-detail", text: `${warning.message}.` }));
  }
  const wrong = wrongSentences(trace);
  if (wrong.length) {
    lines.push(h("p", { class: "lab-detail", text: t("ui.order.wrong", { list: wrong.join("; ") }) }));
  } else {
    lines.push(h("p", { class: "lab-detail", text: t("ui.order.all_right") }));
  }
  return lines;
}

/** The lab card's elements; its buttons call `actions` ({undo, clear, run}). */
function orderCard(setLab, actions) {
  const toggle = toggleSwitch({
    off: t("ui.lab.off"), on: t("ui.order.on"), label: t("ui.order.label"),
    testId: "lab-order", onChange: (on) => setLab(on ? "order" : null),
  });
  const parts = {
    toggle,
    list: h("ol", { class: "lab-order-list", "data-testid": "order-list", "aria-label": t("ui.order.title") }),
    undo: h("button", { type: "button", text: t("ui.order.undo"), "data-testid": "order-undo", onclick: actions.undo }),
    clear: h("button", { type: "button", text: t("ui.order.clear"), "data-testid": "order-clear", onclick: actions.clear }),
    run: h("button", { type: "button", class: "primary", text: t("ui.order.run"), "data-testid": "order-run", onclick: actions.run }),
    result: h("div", { class: "lab-result", "data-testid": "order-result", "aria-live": "polite" }),
  };
  parts.body = h("div", { class: "lab-body lab-split" },
    h("div", {}, h("p", { class: "lab-hint", text: t("ui.order.hint") }), parts.list,
      h("div", { class: "lab-actions" }, parts.undo, parts.clear, parts.run)),
    parts.result);
  parts.section = h("section", { class: "lab-card lab-order", "aria-labelledby": "lab-order-title" },
    h("h3", { id: "lab-order-title", text: t("ui.order.title") }),
    h("p", { class: "lab-hint lab-intro", text: t("ui.order.intro") }),
    toggle.element, parts.body);
  return parts;
}

/** The draft placed so far, the buttons' state, and the outcome of the order that ran. */
function writeOrder(parts, s) {
  const nodes = traceIndex(s.trace).nodeById;
  parts.list.replaceChildren(...s.orderDraft.map((id) => h("li", { text: nodeName(nodes.get(id) ?? { id }) })));
  if (s.orderDraft.length === 0) parts.list.append(h("li", { class: "lab-empty", text: t("ui.order.empty") }));
  parts.undo.disabled = s.orderDraft.length === 0;
  parts.clear.disabled = s.orderDraft.length === 0 && !s.order;
  parts.run.disabled = s.orderDraft.length === 0;
  const ran = Boolean(s.trace.order && s.order && s.trace.order.join() === s.order.join());
  parts.result.replaceChildren(...(ran ? outcome(s.trace) : []));
  return ran;
}

/** The visit-order lab's card on `scope` (node clicks on its graph place the order). */
export function orderSection(scope, setLab) {
  const { state, subscribe, update, setStep } = scope.store;
  listenToCards(scope.graph.svg, scope.store);
  let awaitingRun = false;
  const parts = orderCard(setLab, {
    undo: () => update({ orderDraft: state.orderDraft.slice(0, -1) }),
    clear: () => update({ orderDraft: [], order: null }),
    run() {
      if (state.orderDraft.length === 0) return;
      awaitingRun = true;
      update({ order: [...state.orderDraft] });
    },
  });

  subscribe((s, changed) => {
    if (!["lab", "orderDraft", "order", "trace"].some((k) => changed.has(k))) return;
    const on = s.lab === "order";
    parts.toggle.set(on);
    parts.section.classList.toggle("active", on);
    setHidden(parts.body, !on);
    if (!on || !s.trace) return;
    const ran = writeOrder(parts, s);
    if (ran && awaitingRun && changed.has("trace")) {
      awaitingRun = false;
      // Replay the backward pass in the chosen order.
      const seed = traceIndex(s.trace).phases.seed?.first;
      if (seed !== undefined) setStep(frameOfStep(s.trace, seed));
      update({ playing: true });
    }
  });
  return parts.section;
}
