// The labs' marks on the graph, drawn after the player has drawn a frame: wrong gradients beside
// the correct ones on the cards ("grad 3 ≠ 4", tag "wrong"), lost and late contributions on their
// edges, and the visit-order badges. Marks are drawn in their own layer (`g.layer-lab`, over the
// cards), never inside graph.js's cards; on a card this module owns only its own attributes
// (`data-wrong`, `data-correct-grad`, `data-pickable`, `aria-description`), so graph.js's keyed,
// cached drawing (class, aria-label, texts) never has to know about the labs.

import { compactText, factorText, fullText } from "./format.js";
import { cardBoxes, edgeGeometry } from "./graph.js";
import { t } from "./i18n.js";
import { attr, svgElement } from "./svg.js";
import { subscribe } from "./state.js";
import { contributionsOf, isSettled, isVariant, sameNumber } from "./lab-trace.js";
import { traceIndex, viewAt } from "./timeline.js";

const REDRAW_KEYS = ["trace", "step", "finalGrads", "lab", "orderDraft"];

function fontSize(node) {
  return Math.max(7, Math.min(node.height / 4.4, node.width / 8.5, 20)); // as graph.js draws cards
}

function text(content, attrs, className) {
  const el = svgElement("text", attrs, className);
  el.textContent = content;
  return el;
}

/** The marks of one card (a handful of elements), placed over it in the lab layer; or null. */
function cardMarks(card, node, { wrong, shown, badge }) {
  if (!wrong && !badge) return null;
  const fs = fontSize(node);
  const deco = svgElement("g", {
    "data-node-id": node.id, transform: `translate(${node.x - node.width / 2},${node.y - node.height / 2})`,
  }, "lab-deco");
  if (wrong) {
    const grad = card.querySelector(".value.grad");
    const both = svgElement("text", {
      x: grad?.getAttribute("x") ?? node.width - 6, y: grad?.getAttribute("y") ?? node.height * 0.88,
      "font-size": fs * 0.92, "text-anchor": "end",
    }, "value lab-grad");
    const mine = svgElement("tspan", {}, "lab-grad-wrong");
    mine.textContent = compactText(shown); // compact on both sides: 3 ≠ 4
    const sign = svgElement("tspan", {}, "lab-grad-sign");
    sign.textContent = " \u2260 ";
    const right = svgElement("tspan", {}, "lab-grad-correct");
    right.textContent = compactText(node.correct_grad);
    both.append(mine, sign, right);
    // Left, after graph.js's own tag (derived), so the order badge keeps the right corner.
    deco.append(both, text(t("ui.card.wrong"), { x: 2 + (node.derived ? fs * 4.2 : 0), y: -fs * 0.35, "font-size": fs * 0.72 }, "tag tag-wrong"));
  }
  if (badge) {
    const r = fs * 0.85;
    const mark = svgElement("g", { transform: `translate(${node.width},0)` }, "lab-badge");
    mark.append(svgElement("circle", { r }), text(String(badge), { "font-size": fs * 0.9, "text-anchor": "middle", "dominant-baseline": "central" }));
    deco.append(mark);
  }
  return deco;
}

/** Lost (overwritten) and late contributions, once the timeline has shown them (the 3D view too). */
export function edgeMarks(trace, i, finalGrads) {
  const marks = [];
  for (const item of contributionsOf(trace).items) {
    if (item.frame > i && !finalGrads) break;
    const { c } = item;
    if (c.lost && (finalGrads || (item.overwrittenAt !== null && i >= item.overwrittenAt))) {
      marks.push({ edge: c.edge, kind: "lost", value: compactText(c.contribution) });
    } else if (c.late && c.contribution !== 0) { // a late 0 changes nothing: no mark
      marks.push({ edge: c.edge, kind: "late", value: factorText(c.contribution) });
    }
  }
  return marks;
}

/** Boxes a mark must not cover: the cards and the edge labels graph.js drew. */
function obstacles(trace, svg) {
  const boxes = [...cardBoxes(trace)];
  for (const label of svg?.querySelectorAll(".layer-labels .edge-label") ?? []) {
    const rect = label.querySelector("rect");
    const at = /translate\(([-\d.e]+),([-\d.e]+)\)/.exec(label.getAttribute("transform") ?? "");
    if (!rect || !at) continue;
    const [x, y] = [Number(at[1]) + Number(rect.getAttribute("x")), Number(at[2]) + Number(rect.getAttribute("y"))];
    boxes.push({ x0: x, x1: x + Number(rect.getAttribute("width")), y0: y, y1: y + Number(rect.getAttribute("height")) });
  }
  return boxes;
}

const overlaps = (a, b) => a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;

/** A point on the edge (near its input end first) where a width×height box covers nothing taken. */
function freeSpot(at, width, height, taken) {
  const box = ([x, y]) => ({ x0: x - width / 2, x1: x + width / 2, y0: y - height / 2, y1: y + height / 2 });
  const candidates = [0.25, 0.35, 0.15, 0.45, 0.55, 0.65, 0.75].map(at);
  const [mx, my] = at(0.3);
  for (let k = 1; k <= 6; k++) candidates.push([mx, my - k * height * 0.8], [mx, my + k * height * 0.8]);
  const spot = candidates.find((c) => !taken.some((r) => overlaps(box(c), r))) ?? candidates[0];
  taken.push(box(spot));
  return spot;
}

function drawEdgeMarks(layer, trace, marks) {
  layer.replaceChildren();
  if (marks.length === 0) return;
  const geometry = edgeGeometry(trace);
  const typical = trace.nodes.find((n) => n.kind === "op") ?? trace.nodes[0];
  const fs = fontSize(typical) * 0.72;
  const taken = obstacles(trace, layer.ownerSVGElement);
  for (const mark of marks) {
    const g = svgElement("g", { "data-edge-id": mark.edge, "data-mark": mark.kind }, `lab-edge-mark ${mark.kind}`);
    const word = t(mark.kind === "lost" ? "ui.mark.lost" : "ui.mark.late");
    const rect = svgElement("rect", { y: -fs * 0.8, height: fs * 1.6, rx: fs * 0.8 });
    const label = svgElement("text", { "font-size": fs, "text-anchor": "middle", "dominant-baseline": "central" });
    const name = svgElement("tspan", {}, "lab-mark-word");
    name.textContent = `${word} `;
    const value = svgElement("tspan", {}, "lab-mark-value");
    value.textContent = mark.kind === "late" ? `+${mark.value}` : mark.value; // late: `+3`, `+(−1)`
    label.append(name, value);
    g.append(rect, label);
    layer.append(g);
    // Sized from the rendered text (fonts differ); a drawn strike, as text-decoration is not
    // reliable on SVG text.
    const textWidth = label.getComputedTextLength() || (word.length + mark.value.length + 2) * fs * 0.62;
    const width = textWidth + fs * 1.2;
    rect.setAttribute("x", -width / 2);
    rect.setAttribute("width", width);
    if (mark.kind === "lost") {
      const valueWidth = value.getComputedTextLength() || mark.value.length * fs * 0.62;
      const x2 = textWidth / 2;
      g.append(svgElement("line", { x1: x2 - valueWidth - fs * 0.15, x2: x2 + fs * 0.15, y1: 0, y2: 0 }, "lab-strike"));
    }
    const [x, y] = freeSpot(geometry.get(mark.edge).at, width, fs * 1.6, taken);
    g.setAttribute("transform", `translate(${x},${y})`);
  }
}

/** This module's attributes on a card (each set only when it changes; null removes it). */
function flagCard(g, { correct = null, wrong = false, pickable = false, description = null } = {}) {
  attr(g, "data-correct-grad", correct);
  attr(g, "data-wrong", wrong ? "true" : null);
  attr(g, "data-pickable", pickable ? "true" : null);
  attr(g, "aria-description", description);
}

/**
 * Cards are focusable buttons already (graph-hints: Enter explains the node, its aria-label says
 * what it holds); while the order lab is on, the description says what Enter does there instead.
 */
function pickDescription(position) {
  return position ? t("ui.order.pick_again", { position }) : t("ui.order.pick");
}

/** Mount the marks over `svg` (the graph drawn by graph-view.js). */
export function mountMarks(svg) {
  const layer = svgElement("g", {}, "layer-lab");
  const edgeLayer = svgElement("g", {}, "lab-edges");
  const cardLayer = svgElement("g", {}, "lab-cards");
  layer.append(edgeLayer, cardLayer);
  let flagged = false; // whether any card carries this module's attributes
  subscribe((s, changed) => {
    if (!s.trace || !REDRAW_KEYS.some((k) => changed.has(k))) return;
    const viewport = svg.querySelector("g.viewport");
    if (viewport && layer.parentNode !== viewport) viewport.append(layer);
    const variant = isVariant(s.trace);
    const ordering = s.lab === "order";
    if (!variant && !ordering) {
      // No lab marks: nothing to do on a step (a frame costs what it changes), once cleared.
      if (!flagged) return;
      edgeLayer.replaceChildren();
      cardLayer.replaceChildren();
      for (const g of svg.querySelectorAll("[data-testid=node]")) flagCard(g);
      flagged = false;
      return;
    }
    const cards = svg.querySelectorAll("[data-testid=node]");
    flagged = true;
    const view = variant ? viewAt(s.trace, s.step, { finalGrads: s.finalGrads }) : null;
    const nodes = traceIndex(s.trace).nodeById;
    const draft = s.orderDraft ?? [];
    const decos = [];
    for (const g of cards) {
      const node = nodes.get(g.getAttribute("data-node-id"));
      if (!node) continue;
      let wrong = false;
      let shown;
      let correct = null;
      if (variant && node.kind !== "const") {
        correct = fullText(node.correct_grad);
        shown = view.grad.get(node.id);
        wrong = !sameNumber(node.grad, node.correct_grad) && isSettled(s.trace, node.id, s.step, s.finalGrads);
      }
      const position = ordering ? draft.indexOf(node.id) + 1 : 0;
      const pickable = ordering && node.kind !== "const";
      flagCard(g, { correct, wrong, pickable, description: pickable ? pickDescription(position) : null });
      const deco = cardMarks(g, node, { wrong, shown, badge: position });
      if (deco) decos.push(deco);
    }
    cardLayer.replaceChildren(...decos);
    drawEdgeMarks(edgeLayer, s.trace, variant ? edgeMarks(s.trace, s.step, s.finalGrads) : []);
  });
}
