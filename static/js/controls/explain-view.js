// The explanation popover: click (or Enter on) an edge for its local derivative and chain-rule
// product, a node for its whole sum of contributions. Redrawn from the state on every step.
// Escape closes it and gives focus back to the edge or node it explains.

import { h } from "../core/dom.js";
import { explainEdge, explainNode, passComplete } from "./explain.js";
import { t } from "../core/i18n.js";
import { onPlainClick } from "../core/svg.js";
import { viewAt } from "../core/frames.js";

const line = (className, content) => h("p", { class: className, text: content });

function edgeContent(trace, view, edgeId) {
  const e = explainEdge(trace, view, edgeId);
  const parts = [line("explain-op", e.operation), line("explain-formula", e.derivative)];
  if (e.chain) parts.push(line("explain-formula explain-chain", e.chain));
  parts.push(line("explain-words", e.chainWords));
  return { title: e.title, parts };
}

function nodeContent(trace, view, nodeId, complete) {
  const n = explainNode(trace, view, nodeId, { complete });
  const parts = [line("explain-op", n.definition), line("explain-formula explain-sum", n.sum)];
  for (const note of n.notes) parts.push(line("explain-note", note));
  return { title: n.title, parts };
}

/** The popover's elements, in `wrap` (hidden until something is explained). */
function popover(wrap) {
  const title = h("h2", { id: "explain-title", class: "explain-title" });
  const close = h("button", { type: "button", class: "ghost explain-close", "aria-label": t("ui.explain.close"), text: "\u00d7" });
  const body = h("div", { class: "explain-body", "aria-live": "polite" });
  const box = h("div", { class: "explain", id: "explain", "data-testid": "explain", role: "dialog", "aria-labelledby": "explain-title", tabindex: "-1", hidden: true },
    h("div", { class: "explain-head" }, title, close), body);
  wrap.append(box);
  return { box, title, close, body };
}

/** Where the popover goes: near `at` (a box on screen), on the side that covers the fewest `cards`. */
function bestPlace(area, at, size, cards) {
  const { width, height } = size;
  const gap = 12;
  const cx = at.left + at.width / 2 - area.left;
  const cy = at.top + at.height / 2 - area.top;
  const clamp = ([left, top]) => [
    Math.max(8, Math.min(left, area.width - width - 8)), Math.max(8, Math.min(top, area.height - height - 8))];
  const candidates = [
    [cx - width / 2, at.bottom - area.top + gap], [cx - width / 2, at.top - area.top - height - gap],
    [at.right - area.left + gap, cy - height / 2], [at.left - area.left - width - gap, cy - height / 2],
    [8, area.height - height - 8], [area.width - width - 8, 8],
  ].map(clamp);
  const covered = ([left, top]) => {
    const [x0, y0] = [left + area.left, top + area.top];
    let sum = 0;
    for (const r of [...cards, at]) {
      const w = Math.min(x0 + width, r.right) - Math.max(x0, r.left);
      const hh = Math.min(y0 + height, r.bottom) - Math.max(y0, r.top);
      if (w > 0 && hh > 0) sum += w * hh;
    }
    return sum;
  };
  return candidates.reduce((best, c) => (covered(c) < covered(best) ? c : best), candidates[0]);
}

/** The node or edge an element of the SVG stands for: {kind, id} or null. */
function targetOf(element, state) {
  const edge = element?.closest?.(".edge-hit[data-edge-id]");
  if (edge) return { kind: "edge", id: edge.getAttribute("data-edge-id"), opener: edge };
  const node = element?.closest?.("[data-testid=node][data-node-id]");
  // In the visit-order lab, node clicks place the order.
  if (node && state.lab !== "order") return { kind: "node", id: node.getAttribute("data-node-id"), opener: node };
  return null;
}

/** A click (no drag) or Enter on an edge or a node explains it; a click elsewhere closes the popover. */
function listenToGraph(svg, state, { show, hide }) {
  onPlainClick(svg, (pressed) => {
    const picked = targetOf(pressed, state);
    if (picked) show(picked.kind, picked.id, picked.opener);
    else hide(false);
  });
  svg.addEventListener("keydown", (event) => {
    if (event.key !== "Enter" && event.key !== " ") return;
    const picked = targetOf(event.target, state);
    if (!picked) return;
    show(picked.kind, picked.id, picked.opener);
    event.preventDefault();
  });
}

/** The popover's content for `target` at the state's frame, or null when it is gone from the trace. */
function contentFor(target, state) {
  const { trace } = state;
  const exists = target.kind === "edge" ? trace.edges.some((e) => e.id === target.id) : trace.nodes.some((n) => n.id === target.id);
  if (!exists) return null;
  const view = viewAt(trace, state.step, { finalGrads: state.finalGrads });
  const complete = state.finalGrads || passComplete(trace, state.step);
  return target.kind === "edge" ? edgeContent(trace, view, target.id) : nodeContent(trace, view, target.id, complete);
}

/**
 * The explanations on `scope`'s graph (`svg`, in the positioned container `wrap`). Returns
 * {open(kind, id, opener)}: explain node or edge `id` (`kind` "node" | "edge") as a click on it
 * in the SVG would (the 3D view, whose cards are no DOM elements, calls it); `opener`
 * ({getBoundingClientRect(), focus(), isConnected, cardRects()}: the cards' boxes on screen)
 * places the popover clear of the cards and gets the focus back. A null `kind` closes it.
 */
export function mountExplanations({ svg, wrap }, scope) {
  const { state, subscribe } = scope.store;
  const ui = popover(wrap);
  let target = null; // {kind: "edge"|"node", id, opener}

  function render() {
    if (!target || !state.trace) return;
    const content = contentFor(target, state);
    if (!content) {
      hide(false);
      return;
    }
    ui.title.textContent = content.title;
    ui.body.replaceChildren(...content.parts);
    ui.box.dataset.kind = target.kind;
  }

  function place(opener) {
    // A view without SVG cards (the 3D view) says where its cards are on screen.
    const cards = opener.cardRects?.() ?? [...svg.querySelectorAll("[data-testid=node] .card")].slice(0, 400).map((c) => c.getBoundingClientRect());
    const [left, top] = bestPlace(wrap.getBoundingClientRect(), opener.getBoundingClientRect(), { width: ui.box.offsetWidth, height: ui.box.offsetHeight }, cards);
    ui.box.style.setProperty("--explain-left", `${Math.round(left)}px`);
    ui.box.style.setProperty("--explain-top", `${Math.round(top)}px`);
  }

  function show(kind, id, opener) {
    target = { kind, id, opener };
    ui.box.hidden = false;
    render();
    place(opener);
    ui.box.focus({ preventScroll: true });
  }

  function hide(returnFocus = true) {
    if (!target) return;
    const { opener } = target;
    target = null;
    ui.box.hidden = true;
    if (returnFocus && opener?.isConnected) opener.focus({ preventScroll: true });
  }

  listenToGraph(svg, state, { show, hide });
  ui.close.addEventListener("click", () => hide());
  scope.keys.bindKeys({ Escape: () => hide() }, { when: () => Boolean(target) });

  subscribe((s, changed) => {
    if (!target) return;
    if (changed.has("trace") || changed.has("step") || changed.has("finalGrads")) render();
    if (changed.has("lab") && s.lab === "order" && target.kind === "node") hide(false);
  });
  return { open: (kind, id, opener) => (kind ? show(kind, id, opener) : hide(false)) };
}
