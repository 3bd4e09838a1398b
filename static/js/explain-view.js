// The explanation popover: click (or Enter on) an edge for its local derivative and chain-rule
// product, a node for its whole sum of contributions. Redrawn from the state on every step.
// Escape closes it and gives focus back to the edge or node it explains.

import { explainEdge, explainNode, passComplete } from "./explain.js";
import { t } from "./i18n.js";
import { pageScope } from "./scope.js";
import { onPlainClick } from "./svg.js";
import { viewAt } from "./timeline.js";


function line(className, content) {
  const p = document.createElement("p");
  p.className = className;
  p.textContent = content;
  return p;
}

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

// The mounted popover's entry for a view whose nodes and edges are no DOM elements (the 3D view
// picks them on its canvas): openExplanation(kind, id, opener), or openExplanation(null) to close.
let explainFromView = null;

/**
 * Explain node or edge `id` (`kind` "node" | "edge") as a click on it in the SVG would; `opener`
 * ({getBoundingClientRect(), focus(), isConnected, cardRects()}: the cards' boxes on screen)
 * places the popover clear of the cards and gets the focus back.
 * A null `kind` closes the popover.
 */
export function openExplanation(kind, id, opener) {
  explainFromView?.(kind, id, opener);
}

/** `wrap` is the graph's positioned container, `svg` the graph (its edges and nodes are targets). */
export function mountExplanations({ svg, wrap }, scope = pageScope) {
  const { state, subscribe } = scope.store;
  const box = document.createElement("div");
  box.className = "explain";
  box.id = "explain";
  box.dataset.testid = "explain";
  box.setAttribute("role", "dialog");
  box.setAttribute("aria-labelledby", "explain-title");
  box.tabIndex = -1;
  box.hidden = true;
  const head = document.createElement("div");
  head.className = "explain-head";
  const title = document.createElement("h2");
  title.id = "explain-title";
  title.className = "explain-title";
  const close = document.createElement("button");
  close.type = "button";
  close.className = "ghost explain-close";
  close.setAttribute("aria-label", t("ui.explain.close"));
  close.textContent = "\u00d7";
  head.append(title, close);
  const body = document.createElement("div");
  body.className = "explain-body";
  body.setAttribute("aria-live", "polite");
  box.append(head, body);
  wrap.append(box);

  let target = null; // {kind: "edge"|"node", id, opener}

  function render() {
    if (!target || !state.trace) return;
    const { trace } = state;
    const exists = target.kind === "edge"
      ? trace.edges.some((e) => e.id === target.id) : trace.nodes.some((n) => n.id === target.id);
    if (!exists) {
      hide(false);
      return;
    }
    const view = viewAt(trace, state.step, { finalGrads: state.finalGrads });
    const complete = state.finalGrads || passComplete(trace, state.step);
    const content = target.kind === "edge" ? edgeContent(trace, view, target.id) : nodeContent(trace, view, target.id, complete);
    title.textContent = content.title;
    body.replaceChildren(...content.parts);
    box.dataset.kind = target.kind;
  }

  // Near the edge or node, on the side where it covers the fewest cards.
  function place(opener) {
    const area = wrap.getBoundingClientRect();
    const at = opener.getBoundingClientRect();
    const [width, height, gap] = [box.offsetWidth, box.offsetHeight, 12];
    const cx = at.left + at.width / 2 - area.left;
    const cy = at.top + at.height / 2 - area.top;
    const clamp = ([left, top]) => [
      Math.max(8, Math.min(left, area.width - width - 8)), Math.max(8, Math.min(top, area.height - height - 8))];
    const candidates = [
      [cx - width / 2, at.bottom - area.top + gap], [cx - width / 2, at.top - area.top - height - gap],
      [at.right - area.left + gap, cy - height / 2], [at.left - area.left - width - gap, cy - height / 2],
      [8, area.height - height - 8], [area.width - width - 8, 8],
    ].map(clamp);
    // A view without SVG cards (the 3D view) says where its cards are on screen.
    const cards = opener.cardRects?.() ?? [...svg.querySelectorAll("[data-testid=node] .card")].slice(0, 400).map((c) => c.getBoundingClientRect());
    const covered = ([left, top]) => {
      const [x0, y0] = [left + area.left, top + area.top];
      let sum = 0;
      for (const r of [...cards, at]) {
        const w = Math.min(x0 + width, r.right) - Math.max(x0, r.left);
        const h = Math.min(y0 + height, r.bottom) - Math.max(y0, r.top);
        if (w > 0 && h > 0) sum += w * h;
      }
      return sum;
    };
    let best = candidates[0];
    for (const c of candidates) if (covered(c) < covered(best)) best = c;
    box.style.setProperty("--explain-left", `${Math.round(best[0])}px`);
    box.style.setProperty("--explain-top", `${Math.round(best[1])}px`);
  }

  function show(kind, id, opener) {
    target = { kind, id, opener };
    box.hidden = false;
    render();
    place(opener);
    box.focus({ preventScroll: true });
  }

  function hide(returnFocus = true) {
    if (!target) return;
    const { opener } = target;
    target = null;
    box.hidden = true;
    if (returnFocus && opener?.isConnected) opener.focus({ preventScroll: true });
  }

  function activate(element) {
    const edge = element?.closest?.(".edge-hit[data-edge-id]");
    if (edge) {
      show("edge", edge.getAttribute("data-edge-id"), edge);
      return true;
    }
    const node = element?.closest?.("[data-testid=node][data-node-id]");
    if (node && state.lab !== "order") { // in the visit-order lab, node clicks place the order
      show("node", node.getAttribute("data-node-id"), node);
      return true;
    }
    return false;
  }

  onPlainClick(svg, (pressed) => {
    if (!activate(pressed)) hide(false);
  });
  svg.addEventListener("keydown", (event) => {
    if (event.key !== "Enter" && event.key !== " ") return;
    if (activate(event.target)) event.preventDefault();
  });
  explainFromView = (kind, id, opener) => (kind ? show(kind, id, opener) : hide(false));
  close.addEventListener("click", () => hide());
  scope.keys.bindKeys({ Escape: () => hide() }, { when: () => Boolean(target) });

  subscribe((s, changed) => {
    if (!target) return;
    if (changed.has("trace") || changed.has("step") || changed.has("finalGrads")) render();
    if (changed.has("lab") && s.lab === "order" && target.kind === "node") hide(false);
  });
}
