// The labs' marks on the graph: wrong gradients beside the correct ones on the cards ("grad 3 ≠ 4",
// tag "wrong"), lost and late contributions on their edges, and the visit-order badges. What is
// marked is data (labCards, edgeMarks: pure functions of the trace, the frame and the state) that
// the SVG mark below draws in its own layer (`g.layer-lab`, over the cards) and the 3D view paints
// on its cards and labels. On a card the mark owns only its own attributes (`data-wrong`,
// `data-correct-grad`, `data-pickable`, `aria-description`).

import { compactText, factorText, fullText } from "../core/format.js";
import { cardBoxes, edgeGeometry, fontSize } from "../graph/geometry.js";
import { t } from "../core/i18n.js";
import { svgElement } from "../core/svg.js";
import { traceIndex } from "../core/frames.js";
import { contributionsOf, isSettled, isVariant, sameNumber } from "./contributions.js";

/**
 * What the labs mark on each node at `view`, or null when no lab marks anything: Map node id →
 * {wrong: {shown, correct} | null (a variant's gradient, settled, that is not the correct one),
 * correct (the correct gradient, in a variant), badge (its place in the visit order, 0: none),
 * pickable (the order lab can place it)}.
 */
export function labCards(trace, view, { lab, orderDraft = [], finalGrads = false }) {
  const variant = isVariant(trace);
  const ordering = lab === "order";
  if (!variant && !ordering) return null;
  const cards = new Map();
  for (const node of trace.nodes) {
    const measured = variant && node.kind !== "const";
    const wrong = measured && !sameNumber(node.grad, node.correct_grad) && isSettled(trace, node.id, view.frame, finalGrads);
    cards.set(node.id, {
      wrong: wrong ? { shown: view.grad.get(node.id), correct: node.correct_grad } : null,
      correct: measured ? node.correct_grad : undefined,
      badge: ordering ? orderDraft.indexOf(node.id) + 1 : 0,
      pickable: ordering && node.kind !== "const",
    });
  }
  return cards;
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

function textElement(content, attrs, className) {
  const el = svgElement("text", attrs, className);
  el.textContent = content;
  return el;
}

/** "3 ≠ 4" where the card's grad is, and the tag "wrong" (after the derived tag, if any). */
function wrongMarks(node, { shown, correct }, fs) {
  const both = svgElement("text", {
    x: node.width - Math.max(6, fs * 0.55), y: node.height * 0.88, "font-size": fs * 0.92, "text-anchor": "end",
  }, "value lab-grad");
  // Compact on both sides: 3 ≠ 4.
  both.append(svgTspan(compactText(shown), "lab-grad-wrong"), svgTspan(" \u2260 ", "lab-grad-sign"),
    svgTspan(compactText(correct), "lab-grad-correct"));
  const tag = textElement(t("ui.card.wrong"), { x: 2 + (node.derived ? fs * 4.2 : 0), y: -fs * 0.35, "font-size": fs * 0.72 }, "tag tag-wrong");
  return [both, tag];
}

function svgTspan(content, className) {
  const span = svgElement("tspan", {}, className);
  span.textContent = content;
  return span;
}

/** The visit-order badge on the card's top-right corner. */
function badgeMark(node, badge, fs) {
  const mark = svgElement("g", { transform: `translate(${node.width},0)` }, "lab-badge");
  mark.append(svgElement("circle", { r: fs * 0.85 }),
    textElement(String(badge), { "font-size": fs * 0.9, "text-anchor": "middle", "dominant-baseline": "central" }));
  return mark;
}

/** The marks of one card (a handful of elements), placed over it in the lab layer; or null. */
function cardMarks(node, marked) {
  if (!marked.wrong && !marked.badge) return null;
  const fs = fontSize(node);
  const deco = svgElement("g", {
    "data-node-id": node.id, transform: `translate(${node.x - node.width / 2},${node.y - node.height / 2})`,
  }, "lab-deco");
  if (marked.wrong) deco.append(...wrongMarks(node, marked.wrong, fs));
  if (marked.badge) deco.append(badgeMark(node, marked.badge, fs));
  return deco;
}

const overlaps = (a, b) => a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;
const boxOf = ({ x, y, width, height }) => ({ x0: x - width / 2, x1: x + width / 2, y0: y - height / 2, y1: y + height / 2 });

/** A point on the edge (near its input end first) where a width×height box covers nothing taken. */
export function freeSpot(at, width, height, taken) {
  const candidates = [0.25, 0.35, 0.15, 0.45, 0.55, 0.65, 0.75].map(at);
  const [mx, my] = at(0.3);
  for (let k = 1; k <= 6; k++) candidates.push([mx, my - k * height * 0.8], [mx, my + k * height * 0.8]);
  const box = ([x, y]) => boxOf({ x, y, width, height });
  const spot = candidates.find((c) => !taken.some((r) => overlaps(box(c), r))) ?? candidates[0];
  taken.push(box(spot));
  return spot;
}

/** An edge mark's pill: "lost 3" (the value struck through) or "late +3", sized to its text. */
function edgeMarkPill(layer, mark, fs) {
  const g = svgElement("g", { "data-edge-id": mark.edge, "data-mark": mark.kind }, `lab-edge-mark ${mark.kind}`);
  const word = t(mark.kind === "lost" ? "ui.mark.lost" : "ui.mark.late");
  const rect = svgElement("rect", { y: -fs * 0.8, height: fs * 1.6, rx: fs * 0.8 });
  const label = svgElement("text", { "font-size": fs, "text-anchor": "middle", "dominant-baseline": "central" });
  const value = svgTspan(mark.kind === "late" ? `+${mark.value}` : mark.value, "lab-mark-value"); // late: `+3`, `+(−1)`
  label.append(svgTspan(`${word} `, "lab-mark-word"), value);
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
    g.append(svgElement("line", { x1: textWidth / 2 - valueWidth - fs * 0.15, x2: textWidth / 2 + fs * 0.15, y1: 0, y2: 0 }, "lab-strike"));
  }
  return { g, width };
}

/** The edge marks, each where it covers no card and no edge label drawn this frame (`labels`). */
function drawEdgeMarks(layer, trace, marks, labels) {
  layer.replaceChildren();
  if (marks.length === 0) return;
  const geometry = edgeGeometry(trace);
  const typical = trace.nodes.find((n) => n.kind === "op") ?? trace.nodes[0];
  const fs = fontSize(typical) * 0.72;
  const taken = [...cardBoxes(trace), ...labels.map(boxOf)];
  for (const mark of marks) {
    const { g, width } = edgeMarkPill(layer, mark, fs);
    const [x, y] = freeSpot(geometry.get(mark.edge).at, width, fs * 1.6, taken);
    g.setAttribute("transform", `translate(${x},${y})`);
  }
}

/**
 * Cards are focusable buttons already (graph-hints: Enter explains the node, its aria-label says
 * what it holds); while the order lab is on, the description says what Enter does there instead.
 */
function cardAttributes(marked) {
  const description = !marked.pickable ? null
    : marked.badge ? t("ui.order.pick_again", { position: marked.badge }) : t("ui.order.pick");
  return {
    "data-correct-grad": marked.correct === undefined ? null : fullText(marked.correct),
    "data-wrong": marked.wrong ? "true" : null,
    "data-pickable": marked.pickable ? "true" : null,
    "aria-description": description,
  };
}

/** The labs' mark (graph/marks.js): its layer holds the cards' marks and the edges' marks. */
export function labMark() {
  let parts = null; // the layer's two groups, made on the first frame
  return {
    name: "lab",
    keys: ["lab", "orderDraft"],
    owns: { card: ["data-correct-grad", "data-wrong", "data-pickable", "aria-description"] },
    layer: "over",
    render(frame, layer) {
      if (!parts) {
        parts = { edges: svgElement("g", {}, "lab-edges"), cards: svgElement("g", {}, "lab-cards") };
        layer.append(parts.edges, parts.cards);
      }
      const { trace, view, state } = frame;
      const marked = labCards(trace, view, state);
      if (!marked) {
        if (parts.edges.firstChild || parts.cards.firstChild) [parts.edges, parts.cards].forEach((g) => g.replaceChildren());
        return null;
      }
      const { nodeById } = traceIndex(trace);
      parts.cards.replaceChildren(...[...marked].map(([id, m]) => cardMarks(nodeById.get(id), m)).filter(Boolean));
      drawEdgeMarks(parts.edges, trace, isVariant(trace) ? edgeMarks(trace, view.frame, state.finalGrads) : [], frame.labels);
      return { cards: new Map([...marked].map(([id, m]) => [id, cardAttributes(m)])) };
    },
  };
}

