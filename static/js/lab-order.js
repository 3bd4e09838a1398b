// The visit-order lab: the learner places a backward visit order (clicking node cards, or Tab to a
// card and Enter), runs it, and reads which contributions arrived
// too late. Leaves are optional in the order (they have nothing to pass on); constants are left out.

import { compactText } from "./format.js";
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
  lines.push(h("p", { class: "lab-bad", "data-testid": "order-verdict", text: `\u2717 Not a reverse topological order: ${check.message}.` }));
  for (const warning of trace.warnings ?? []) {
    if (warning.type === "late" || warning.type === "never_visited") lines.push(h("p", { class: "lab-detail", text: `${warning.message}.` }));
  }
  const wrong = wrongNodes(trace);
  if (wrong.length) {
    lines.push(h("p", { class: "lab-detail", text: `Wrong: ${wrong.map((n) => `grad[${nodeName(n)}] = ${compactText(n.grad)}, correct ${compactText(n.correct_grad)}`).join("; ")}.` }));
  } else {
    lines.push(h("p", { class: "lab-detail", text: "Every gradient still came out right: what arrived late landed on leaves, which have nothing to pass on." }));
  }
  return lines;
}

export function orderSection({ setLab, svg }) {
  listenToCards(svg);
  const toggle = toggleSwitch({
    off: "off", on: "placing order", label: "Place a backward visit order by clicking nodes",
    testId: "lab-order", onChange: (on) => setLab(on ? "order" : null),
  });
  const list = h("ol", { class: "lab-order-list", "data-testid": "order-list", "aria-label": "Visit order" });
  const undo = h("button", { type: "button", text: "Undo", "data-testid": "order-undo", onclick: () => update({ orderDraft: state.orderDraft.slice(0, -1) }) });
  const clear = h("button", { type: "button", text: "Clear", "data-testid": "order-clear", onclick: () => update({ orderDraft: [], order: null }) });
  const run = h("button", { type: "button", class: "primary", text: "Run order", "data-testid": "order-run", onclick: () => runOrder() });
  const result = h("div", { class: "lab-result", "data-testid": "order-result", "aria-live": "polite" });
  const body = h("div", { class: "lab-body lab-split" },
    h("div", {},
      h("p", { class: "lab-hint", text: "Click nodes in the order backward should visit them (or Tab to a card and press Enter). Leaves are optional: they have nothing to pass on." }),
      list, h("div", { class: "lab-actions" }, undo, clear, run)),
    result);
  const section = h("section", { class: "lab-card lab-order", "aria-labelledby": "lab-order-title" },
    h("h3", { id: "lab-order-title", text: "Visit order" }),
    h("p", { class: "lab-hint lab-intro", text: "Choose the order backward visits nodes. Which orders lose a path?" }),
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
    if (s.orderDraft.length === 0) list.append(h("li", { class: "lab-empty", text: "nothing placed yet" }));
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
