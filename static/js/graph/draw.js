// Drawing the graph: pure functions of (layers, trace, view) with a keyed enter/update/exit, so a
// new trace with the same node ids updates cards in place and nothing jumps.

import { fullText, opGlyph, preciseText, shortText } from "../core/format.js";
import { deadShown } from "../controls/explain.js";
import { decorateNode, drawEdgeHits } from "./hints.js";
import { t } from "../core/i18n.js";
import { attr, join, joined, svgElement, text } from "../core/svg.js";
import { traceIndex } from "../core/frames.js";
import {
  cardCorner, compactLabel, edgeGeometry, edgeLabels, fitLabel, fontSize, labelFontSize, layoutKey, placeLabels,
} from "./geometry.js";
import { nodeName, shortFormula } from "../core/names.js";


/**
 * A card's tooltip (its <title>: the full numbers) is written when the pointer or the focus
 * reaches the card, and while it is there: a slider move on 1,000 cards would otherwise build
 * 1,000 sentences that nobody reads. `shownOnCard` keeps what each card's last update showed.
 */
let pointedCard = null;
const shownOnCard = new WeakMap(); // card → {node, data, grad, warn, dead}, for its tooltip
const cardParts = new WeakMap(); // card → its text elements, found once
const cardLayout = new WeakMap(); // card → the layout key it was last placed for

function tooltipText({ node, data, grad, warn, dead }) {
  const name = nodeName(node);
  const lines = [node.kind === "op" ? `${name}  (${node.op})` : name];
  if (node.expansion) lines.push(t("ui.explain.derived", { expansion: node.expansion }));
  lines.push(`data = ${preciseText(data)}`);
  if (node.kind !== "const") lines.push(`grad = ${preciseText(grad)}`);
  if (warn) lines.push(warningText(node));
  if (dead) lines.push(t("ui.card.dead_tooltip"));
  return lines.join("\n");
}

function showTooltip(g) {
  pointedCard = g;
  const shown = shownOnCard.get(g);
  if (shown) text(g.querySelector("title"), tooltipText(shown));
}

function enterNode(node) {
  const g = svgElement("g", { "data-testid": "node" }, "node");
  g.addEventListener("pointerenter", () => showTooltip(g));
  g.addEventListener("focus", () => showTooltip(g));
  g.addEventListener("pointerleave", () => { if (pointedCard === g) pointedCard = null; });
  const fs = fontSize(node);
  const pad = Math.max(6, fs * 0.55);
  const w = node.width;
  const h = node.height;
  g.append(
    svgElement("title"),
    svgElement("rect", { class: "card", x: 0, y: 0, width: w, height: h, rx: Math.min(10, h / 5) }),
  );
  // Far out (semantic zoom), a card is its name alone, as big as the card allows.
  const compact = compactLabel("", node);
  g.append(svgElement("text", { x: w / 2, y: h / 2, "font-size": compact.size, "text-anchor": "middle", "dominant-baseline": "central" }, "label-compact"));
  if (node.kind === "const") {
    const value = svgElement("text", { x: w / 2, y: h / 2, "font-size": fs, "text-anchor": "middle", "dominant-baseline": "central" }, "value data");
    g.append(tag("const", fs), value); // the tag over the card, read first
    return spaceWords(g);
  }
  const rows = [h * 0.34, h * 0.64, h * 0.88];
  const label = svgElement("text", { x: pad, y: rows[0], "font-size": fs * 1.05 }, "label");
  // The name, and the "…" of a cut name apart from it and hidden from assistive technology: the
  // card's accessible name holds the whole name, so its visible text must be a part of it.
  label.append(svgElement("tspan", {}, "label-name"), svgElement("tspan", { "aria-hidden": "true" }, "label-more"));
  const op = svgElement("text", { x: w - pad, y: rows[0], "font-size": fs, "text-anchor": "end" }, "op op-plain");
  const dataName = svgElement("text", { x: pad, y: rows[1], "font-size": fs * 0.75 }, "row-name");
  const data = svgElement("text", { x: w - pad, y: rows[1], "font-size": fs, "text-anchor": "end" }, "value data");
  const gradName = svgElement("text", { x: pad, y: rows[2], "font-size": fs * 0.75 }, "row-name grad-name");
  const grad = svgElement("text", { x: w - pad, y: rows[2], "font-size": fs, "text-anchor": "end" }, "value grad");
  dataName.textContent = "data";
  gradName.textContent = "grad";
  g.append(label, op, dataName, data, gradName, grad);
  const tags = [];
  if (node.derived) tags.push("derived");
  g.append(...tags.map((t, i) => tag(t, fs, i)));
  return spaceWords(g);
}

/**
 * A space between the card's texts, in the card's own text (SVG draws no text outside a <text>):
 * what assistive technology reads as the card's visible words is then "a data 2.000 grad --",
 * words its accessible name holds in the same order, not "adata2.000grad--".
 */
export function spaceWords(g) {
  for (const text of g.querySelectorAll(":scope > text:not(:first-of-type)")) text.before(" ");
  return g;
}

const TAG_WORDS = { const: "ui.card.const", derived: "ui.card.derived" };

function tag(name, fs, position = 0) {
  const el = svgElement("text", { x: 2 + position * fs * 4.2, y: -fs * 0.35, "font-size": fs * 0.72 }, `tag tag-${name}`);
  el.textContent = t(TAG_WORDS[name]);
  return el;
}

function warningText(node) {
  return (node.warnings ?? []).map((w) => `\u26a0 ${w.message ?? w.type}`).join("\n");
}

/** The card's text elements, found once per card. */
function partsOf(g) {
  let parts = cardParts.get(g);
  if (!parts) {
    parts = {
      data: g.querySelector(".value.data"),
      labelName: g.querySelector(".label-name"),
      labelMore: g.querySelector(".label-more"),
      op: g.querySelector(".op"),
      grad: g.querySelector(".value.grad"),
      gradName: g.querySelector(".grad-name"),
      compact: g.querySelector(".label-compact"),
    };
    cardParts.set(g, parts);
  }
  return parts;
}

/** The card's class: its kind and where the timeline is with it. */
function cardClass(node, view, rootId, nodeById, dead) {
  const classes = ["node", `kind-${node.kind}`];
  if (view.computed.has(node.id)) classes.push("computed");
  if (view.visited.has(node.id)) classes.push("visited");
  if (view.current === node.id) classes.push("current");
  if (view.grad.get(node.id) !== undefined) classes.push("has-grad");
  if (node.id === rootId) classes.push("root");
  if (node.warnings?.length) classes.push("warned");
  if (dead) classes.push("dead");
  if (node.kind !== "const" && node.inputs.some((id) => nodeById.get(id)?.kind === "const")) classes.push("has-const-input");
  return classes.join(" ");
}

const cardCorners = new WeakMap(); // card → the corner its parts are drawn at now ([0, 0]: as made)
const partOffsets = new WeakMap(); // a card's part → its [x, y] from the card's corner

/**
 * Put card `g`'s parts (each element with x and y: the frame, texts, tags, hints) at `corner`.
 * A card is placed by its parts' own x and y, not by a transform on it: a transform per card
 * makes each card a paint chunk of its own, and a thousand of those made compositing most of a
 * pulse frame's work (bench/profile_page.py). A part added later (graph/hints.js) is drawn at the
 * card's corner of the moment; its offset from it is read once.
 */
function moveCard(g, [x, y]) {
  const [x0, y0] = cardCorners.get(g) ?? [0, 0];
  if (x === x0 && y === y0) return;
  for (const part of g.children) {
    if (!part.hasAttribute("x")) continue;
    let offset = partOffsets.get(part);
    if (!offset) {
      offset = [Number(part.getAttribute("x")) - x0, Number(part.getAttribute("y") ?? 0) - y0];
      partOffsets.set(part, offset);
    }
    attr(part, "x", x + offset[0]);
    attr(part, "y", y + offset[1]);
  }
  cardCorners.set(g, [x, y]);
}

/** Write the card's place and names (once per layout: a slider move changes only numbers). A
 *  formula too long for the card is said short where it can be (core/names.js shortFormula). */
function placeCard(g, node, parts, trace) {
  moveCard(g, cardCorner(node));
  attr(g, "data-node-id", node.id);
  attr(g, "data-label", node.label);
  attr(g, "data-name", node.name ?? node.label);
  attr(g, "data-op", node.op ?? ""); // the table's op, or the name of the program's function it calls
  const full = nodeName(node);
  let compact = compactLabel(full, node);
  let short;
  const shortened = () => (short === undefined ? (short = shortFormula(node, trace)) : short);
  if (compact.text !== full && shortened()) compact = compactLabel(short, node);
  text(parts.compact, compact.text);
  parts.said = {}; // what the card's accessible name says of its name (graph/hints.js decorateNode)
  if (node.kind === "const") return;
  const glyph = opGlyph(node);
  let name = fitLabel(full, node, glyph);
  if (name.cut && shortened()) name = { ...fitLabel(short, node, glyph), cut: true };
  text(parts.labelName, name.shown);
  text(parts.labelMore, name.more);
  text(parts.op, name.glyph);
  parts.said = { name: name.cut ? `${name.shown}${name.more}` : full, op: glyph, cut: name.cut };
}

/** Refresh a card from `view`; returns the short texts it shows ({data, grad}) and what it says of
 *  its name (`said`: {name, op, cut}, set as the card is placed) for decorateNode. */
function updateNode(g, node, view, trace, layout, nodeById) {
  const data = view.data.get(node.id);
  const grad = view.grad.get(node.id);
  const parts = partsOf(g);
  if (cardLayout.get(g) !== layout) {
    cardLayout.set(g, layout);
    placeCard(g, node, parts, trace);
  }
  const shown = { data: shortText(data), grad: shortText(grad), said: parts.said };
  attr(g, "data-data", fullText(data));
  attr(g, "data-grad", fullText(grad));
  // The dead tag waits for the forward pass to compute the relu: before that it would give the
  // lesson away.
  const dead = deadShown(node, view);
  attr(g, "class", cardClass(node, view, trace.root, nodeById, dead));
  attr(g, "data-current", view.current === node.id ? "true" : null); // the card being visited
  attr(g, "data-dead", dead ? "true" : "false");
  const warn = node.warnings?.length && data !== undefined ? " \u26a0" : "";
  shownOnCard.set(g, { node, data, grad, warn, dead });
  if (pointedCard === g) showTooltip(g);
  text(parts.data, shown.data + warn);
  if (node.kind !== "const") {
    text(parts.grad, shown.grad);
    text(parts.gradName, view.gradRow ?? "grad");
  }
  return shown;
}

function updateEdge(path, edge, view, geometry, nodeById) {
  const state = view.edges.get(edge.id)?.state ?? "idle";
  attr(path, "d", geometry.get(edge.id).d);
  attr(path, "class", `edge ${state}`);
  attr(path, "data-edge-id", edge.id);
  attr(path, "data-source-kind", nodeById.get(edge.source).kind); // const edges hide when folded
  const backward = state.startsWith("backward");
  attr(path, "marker-end", backward ? null : `url(#arrow-${state.startsWith("forward") ? "forward" : "idle"})`);
  attr(path, "marker-start", backward ? "url(#arrow-backward)" : null);
}

function enterLabel() {
  const g = svgElement("g", {}, "edge-label");
  g.append(svgElement("rect", { rx: 4 }), svgElement("text", { "text-anchor": "middle", "dominant-baseline": "central" }),
    svgElement("line", { x1: 0, y1: 0 }, "leader"));
  return g;
}

function updateLabel(g, label, fs) {
  const { x, y, width } = label;
  attr(g, "class", `edge-label ${label.kind}`);
  attr(g, "transform", `translate(${x},${y})`);
  attr(g, "data-source-kind", label.sourceKind);
  const [rect, textEl, leader] = g.children;
  // A label moved off its edge (to keep cards readable) points back at the edge's middle.
  const moved = Math.abs(label.dy) > 1 || Math.abs(label.dx) > 1;
  attr(leader, "x2", moved ? label.dx : 0);
  attr(leader, "y2", moved ? label.dy : 0);
  attr(leader, "y1", moved ? Math.sign(label.dy) * label.height / 2 : 0);
  attr(rect, "x", -width / 2);
  attr(rect, "y", -fs * 0.8);
  attr(rect, "width", width);
  attr(rect, "height", fs * 1.6);
  attr(textEl, "font-size", fs);
  text(textEl, label.text);
}

/** What a card is made for: another kind, tag or size of card is a new element (core/svg.js join). */
const cardShape = (n) => `${n.kind}:${n.derived}:${n.width}x${n.height}`;

/**
 * Draw `trace` as it looks in `view` into `layers` ({edges, labels, nodes} SVG groups). With
 * `changed` ([node ids, edge ids], from core/frames.js changedBetween or numbersChanged) and the same
 * trace already drawn, or one of its layout whose other cards and edges look alike in `view` (new
 * numbers), only those cards and edges are refreshed: a step or a slider move costs what it
 * changes, not the graph.
 * Returns {refreshed (how many cards and edges it refreshed), labels (the edge labels placed,
 * placedEdgeLabels's items: where they are, for the marks to keep clear of)}.
 */
export function drawGraph(layers, trace, view, changed = null) {
  const geometry = edgeGeometry(trace);
  const layout = layoutKey(trace);
  const labelSize = labelFontSize(trace);
  const { nodeById, edgeById } = traceIndex(trace);
  const drawNode = (el, node) => decorateNode(el, node, trace, view, updateNode(el, node, view, trace, layout, nodeById));
  const drawEdge = (el, edge) => updateEdge(el, edge, view, geometry, nodeById);
  let refreshed;
  const drawn = drawnTraces.get(layers);
  if (changed && drawn && (drawn === trace || layoutKey(drawn) === layout)) {
    const [nodes, edges] = [new Set(changed[0]), new Set(changed[1])];
    for (const id of edges) drawEdge(joined(layers.edges, id), edgeById.get(id));
    for (const id of nodes) {
      const node = nodeById.get(id);
      if (node.kind !== "group") drawNode(joined(layers.nodes, id), node);
    }
    drawnTraces.set(layers, trace);
    refreshed = nodes.size + edges.size;
  } else {
    join(layers.edges, trace.edges, (e) => e.id, () => svgElement("path"), drawEdge);
    if (layers.edgeHits) drawEdgeHits(layers.edgeHits, trace, geometry, layout);
    // A collapsed group's stand-in (graph/groups.js) holds its edges' ends; graph/group-view.js draws its card.
    join(layers.nodes, trace.nodes.filter((n) => n.kind !== "group"), (n) => n.id, enterNode, drawNode, cardShape);
    drawnTraces.set(layers, trace);
    refreshed = trace.nodes.length + trace.edges.length;
  }
  const labels = placeLabels(edgeLabels(trace, view), trace, geometry, labelSize);
  join(layers.labels, labels, (l) => l.id, enterLabel, (el, label) => updateLabel(el, label, labelSize));
  return { refreshed, labels };
}

/** The card element drawn for node `id` in `layers`, or undefined (not drawn: in a collapsed group). */
export function cardElement(layers, id) {
  return joined(layers.nodes, id);
}

/** The edge's path drawn in `layers`, or undefined. */
export function edgeElement(layers, id) {
  return joined(layers.edges, id);
}

const drawnTraces = new WeakMap(); // layers → the trace whose every card and edge they hold

/**
 * The travelling dots of the current step: along each active edge, forward (input → consumer)
 * or backward (consumer → input). Cosmetic only: the caller clears them on the next step.
 */
export function drawPulses(layer, trace, view, durationMs) {
  layer.replaceChildren();
  const geometry = edgeGeometry(trace);
  for (const edgeId of view.active) {
    const shown = view.edges.get(edgeId);
    if (!shown.pulse || !geometry.has(edgeId)) continue; // not drawn: inside a collapsed group
    const backward = shown.state.startsWith("backward");
    const dot = svgElement("circle", { r: 5 }, `pulse ${backward ? "backward" : "forward"}`);
    const edge = traceIndex(trace).edgeById.get(edgeId);
    dot.setAttribute("data-source-kind", traceIndex(trace).nodeById.get(edge.source).kind);
    const motion = svgElement("animateMotion", {
      dur: `${Math.max(60, durationMs)}ms`,
      path: geometry.get(edgeId).d,
      fill: "freeze",
      begin: "indefinite",
      calcMode: "linear",
      keyPoints: backward ? "1;0" : "0;1",
      keyTimes: "0;1",
    });
    dot.append(motion);
    layer.append(dot);
    motion.beginElement?.();
  }
}
