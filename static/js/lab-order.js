// The visit-order lab: the learner places a backward visit order (clicking node cards, or Tab to a
// card and Enter), runs it, and reads which contributions arrived
// too late. Leaves are optional in the order (they have nothing to pass on); constants are left out.

import { compactText } from "./format.js";
import { t } from "./i18n.js";
import { h, nodeName, toggleSwitch } from "./lab-dom.js";
import { wrongNodes } from "./lab-trace.js";
import { frameOfStep, traceIndex } from "./timeline.js";
import { setStep, state, subscribe, update } from "./state.js";

const CLICK_SLOP_PX = 5;

/** Add node `id` to the draft, or take it out when it is already placed. */
export function placeNode(id) {
  const node = state.trace && traceIndex(state.trace).nodeById.get(id);
  if (state.lab !== "order" || !node || node.kind === "const") return;
  const draft = state.orderDraft.includes(id) ? state.orderDraft.filter((x) => x !== id) : [...state.orderDraft, id];
  update({ orderDraft: draft });
}

/** Node clicks (a press and release without a drag) and Enter/Space on a focused card. */
function listenToCards(svg) {
  let press = null;
  svg.addEventListener("pointerdown", (event) => {
    const card = event.target.closest?.("[data-testid=node]");
    press = state.lab === "order" && card ? { id: card.getAttribute("data-node-id"), x: event.clientX, y: event.clientY } : null;
  });
  svg.addEventListener("pointerup", (event) => {
    if (!press) return;
    const moved = Math.hypot(event.clientX - press.x, event.clientY - press.y);
    if (moved <= CLICK_SLOP_PX) placeNode(press.id);
    press = null;
  });
  svg.addEventListener("keydown", (event) => {
    if (state.lab !== "order" || (event.key !== "Enter" && event.key !== " ")) return;
    const card = event.target.closest?.("[data-testid=node]");
    if (!card) return;
    event.preventDefault();
    placeNode(card.getAttribute("data-node-id"));
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
  const wrong = wrongNodes(trace);
  if (wrong.length) {
    const list = wrong.map((n) => t("ui.lab.wrong_grad", { name: nodeName(n), grad: compactText(n.grad), correct: compactText(n.correct_grad) }));
    lines.push(h("p", { class: "lab-detail", text: t("ui.order.wrong", { list: list.join("; ") }) }));
  } else {
    lines.push(h("p", { class: "lab-detail", text: t("ui.order.all_right") }));
  }
  return lines;
}

export function orderSection({ setLab, svg }) {
  listenToCards(svg);
  const toggle = toggleSwitch({
    off: t("ui.lab.off"), on: t("ui.order.on"), label: t("ui.order.label"),
    testId: "lab-order", onChange: (on) => setLab(on ? "order" : null),
  });
  const list = h("ol", { class: "lab-order-list", "data-testid": "order-list", "aria-label": t("ui.order.title") });
  const undo = h("button", { type: "button", text: t("ui.order.undo"), "data-testid": "order-undo", onclick: () => update({ orderDraft: state.orderDraft.slice(0, -1) }) });
  const clear = h("button", { type: "button", text: t("ui.order.clear"), "data-testid": "order-clear", onclick: () => update({ orderDraft: [], order: null }) });
  const run = h("button", { type: "button", class: "primary", text: t("ui.order.run"), "data-testid": "order-run", onclick: () => runOrder() });
  const result = h("div", { class: "lab-result", "data-testid": "order-result", "aria-live": "polite" });
  const body = h("div", { class: "lab-body lab-split" },
    h("div", {},
      h("p", { class: "lab-hint", text: t("ui.order.hint") }),
      list, h("div", { class: "lab-actions" }, undo, clear, run)),
    result);
  const section = h("section", { class: "lab-card lab-order", "aria-labelledby": "lab-order-title" },
    h("h3", { id: "lab-order-title", text: t("ui.order.title") }),
    h("p", { class: "lab-hint lab-intro", text: t("ui.order.intro") }),
    toggle.element, body);

  let awaitingRun = false;
  function runOrder() {
    if (state.orderDraft.length === 0) return;
    awaitingRun = true;
    update({ order: [...state.orderDraft] });
  }

  subscribe((s, changed) => {
    if (!["lab", "orderDraft", "order", "trace"].some((k) => changed.has(k))) return;
    const on = s.lab === "order";
    toggle.set(on);
    section.classList.toggle("active", on);
    body.hidden = !on;
    if (!on || !s.trace) return;
    const nodes = traceIndex(s.trace).nodeById;
    list.replaceChildren(...s.orderDraft.map((id) => h("li", { text: nodeName(nodes.get(id) ?? { id }) })));
    if (s.orderDraft.length === 0) list.append(h("li", { class: "lab-empty", text: t("ui.order.empty") }));
    undo.disabled = s.orderDraft.length === 0;
    clear.disabled = s.orderDraft.length === 0 && !s.order;
    run.disabled = s.orderDraft.length === 0;
    const ran = s.trace.order && s.order && s.trace.order.join() === s.order.join();
    result.replaceChildren(...(ran ? outcome(s.trace) : []));
    if (ran && awaitingRun && changed.has("trace")) {
      awaitingRun = false;
      // Replay the backward pass in the chosen order.
      const seed = traceIndex(s.trace).phases.seed?.first;
      if (seed !== undefined) setStep(frameOfStep(s.trace, seed));
      update({ playing: true });
    }
  });
  return section;
}
