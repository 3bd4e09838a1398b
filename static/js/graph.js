// Drawing the graph: pure functions of (layers, trace, view) with a keyed enter/update/exit, so a
// new trace with the same node ids updates cards in place and nothing jumps.

import { chainText, compactText, fullText, opGlyph, preciseText, shortText } from "./format.js";
import { deadShown } from "./explain.js";
import { decorateNode, drawEdgeHits } from "./graph-hints.js";
import { t } from "./i18n.js";
import { attr, join, joined, svgElement, text } from "./svg.js";
import { traceIndex } from "./frames.js";
import { Attached } from "./attached.js";
import { nodeName } from "./names.js";

// Per trace, and a slider move makes a trace a frame: kept on it (attached.js), not in a WeakMap.
const geometryCache = new Attached("edge geometry");
const layoutKeys = new Attached("layout key");
let lastLayoutKey = null; // equal keys are handed out as this one string: later compares are O(1)
let lastGeometry = { key: null, geometry: null };

/**
 * The card's name, `{shown, cut}`: cut (the card adds "…") where it would run into the op glyph: an unnamed node's name is
 * its source text, which can be long (the full text is in the card's tooltip).
 */
export function fitLabel(label, node, glyph) {
  const fs = fontSize(node);
  const room = node.width - 2 * Math.max(6, fs * 0.55) - (glyph.length * 0.62 + 0.6) * fs;
  const fits = Math.max(3, Math.floor(room / (fs * 1.05 * 0.6)));
  if (label.length <= fits) return { shown: label, cut: false };
  // Cut between words ("x1*w1 +…", not "x1*w1 + x…"): what is shown is then words of the card's
  // accessible name, which holds the whole name (axe-core's label-in-name); a single long word is
  // cut where it must be.
  const cut = label.slice(0, fits - 1);
  const atWord = /\w/.test(label[fits - 1] ?? "") ? cut.replace(/\w+$/, "") : cut;
  return { shown: (atWord.trim() ? atWord : cut).trimEnd(), cut: true };
}

/**
 * Equal for two traces whose cards and edges are the same and sit in the same places (a slider
 * move gives a new trace of the same layout): what edge paths, edge handles and card frames
 * (position, names, op) depend on.
 */
export function layoutKey(trace) {
  let key = layoutKeys.get(trace);
  if (key !== undefined) return key;
  if (trace.structure && trace.layout) {
    // The server lays out by structure: one structure id and one layout engine, one drawing.
    key = `${trace.structure}\u0001${trace.layout.engine}\u0001${trace.layout.width}x${trace.layout.height}`;
    layoutKeys.set(trace, key);
    return key;
  }
  const parts = [];
  for (const n of trace.nodes) {
    parts.push(n.id, n.kind, n.op, n.exponent, n.label, n.text, n.x, n.y, n.width, n.height, n.kind === "const" ? n.data : "");
  }
  for (const e of trace.edges) parts.push(e.id, e.source, e.target, e.index);
  key = parts.join("\u0001");
  if (key === lastLayoutKey) key = lastLayoutKey;
  else lastLayoutKey = key;
  layoutKeys.set(trace, key);
  return key;
}

/** Edge paths: input's right side → consumer's left side; ports spread by input index. */
export function edgeGeometry(trace) {
  let geometry = geometryCache.get(trace);
  if (geometry) return geometry;
  const key = layoutKey(trace);
  if (lastGeometry.key === key) {
    geometryCache.set(trace, lastGeometry.geometry);
    return lastGeometry.geometry;
  }
  geometry = computeGeometry(trace);
  geometryCache.set(trace, geometry);
  lastGeometry = { key, geometry };
  return geometry;
}

function computeGeometry(trace) {
  const { nodeById, inputEdges } = traceIndex(trace);
  const geometry = new Map();
  const pairs = new Map();
  for (const edge of trace.edges) {
    const pair = `${edge.source}>${edge.target}`;
    pairs.set(pair, [...(pairs.get(pair) ?? []), edge.id]);
  }
  for (const edge of trace.edges) {
    const source = nodeById.get(edge.source);
    const target = nodeById.get(edge.target);
    const inputs = inputEdges.get(edge.target).length;
    const spacing = Math.min(target.height * 0.28, 14);
    const ty = target.y + (edge.index - (inputs - 1) / 2) * spacing;
    const twins = pairs.get(`${edge.source}>${edge.target}`);
    const rank = twins.indexOf(edge.id);
    const sy = source.y + (rank - (twins.length - 1) / 2) * Math.min(source.height * 0.3, 14);
    const sx = source.x + source.width / 2;
    const tx = target.x - target.width / 2 - 2;
    // Into an open group from outside (groups.js `entry`): curve to the box's edge, then level.
    const ex = Math.min(tx, edge.entry ?? tx);
    const bend = Math.max(24, (ex - sx) / 2) + rank * 12;
    const c1 = [sx + bend, sy];
    const c2 = [ex - bend, ty];
    const d = `M${sx},${sy} C${c1[0]},${c1[1]} ${c2[0]},${c2[1]} ${ex},${ty}${ex < tx ? ` L${tx},${ty}` : ""}`;
    const at = (t) => {
      const u = 1 - t;
      const [a, b, c, e] = [u * u * u, 3 * u * u * t, 3 * u * t * t, t * t * t];
      return [a * sx + b * c1[0] + c * c2[0] + e * ex, a * sy + b * c1[1] + c * c2[1] + e * ty];
    };
    geometry.set(edge.id, { d, mid: at(0.5), at });
  }
  return geometry;
}

export function fontSize(node) {
  return Math.max(7, Math.min(node.height / 4.4, node.width / 8.5, 20));
}

/**
 * A card's name as semantic zoom shows it far out (the card is its name and its colour): as big
 * as the card allows, `{text, size}`.
 */
export function compactLabel(label, node) {
  const size = Math.min(node.height * 0.42, 30);
  const fits = Math.max(2, Math.floor((node.width - 10) / (size * 0.62)));
  return { text: label.length <= fits ? label : `${label.slice(0, fits - 1).trimEnd()}\u2026`, size };
}

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

/** The top-left corner of `node`'s card in graph units: [x, y]. */
export function cardCorner(node) {
  return [node.x - node.width / 2, node.y - node.height / 2];
}

const cardCorners = new WeakMap(); // card → the corner its parts are drawn at now ([0, 0]: as made)
const partOffsets = new WeakMap(); // a card's part → its [x, y] from the card's corner

/**
 * Put card `g`'s parts (each element with x and y: the frame, texts, tags, hints) at `corner`.
 * A card is placed by its parts' own x and y, not by a transform on it: a transform per card
 * makes each card a paint chunk of its own, and a thousand of those made compositing most of a
 * pulse frame's work (bench/profile_page.py). A part added later (graph-hints.js) is drawn at the
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

/** Write the card's place and names (once per layout: a slider move changes only numbers). */
function placeCard(g, node, parts) {
  moveCard(g, cardCorner(node));
  attr(g, "data-node-id", node.id);
  attr(g, "data-label", node.label);
  attr(g, "data-name", node.name ?? node.label);
  attr(g, "data-op", node.op ?? ""); // the table's op, or the name of the program's function it calls
  text(parts.compact, compactLabel(nodeName(node), node).text);
  if (node.kind === "const") return;
  const glyph = opGlyph(node);
  const name = fitLabel(nodeName(node), node, glyph);
  text(parts.labelName, name.shown);
  text(parts.labelMore, name.cut ? "\u2026" : "");
  text(parts.op, glyph);
}

/** Refresh a card from `view`; returns the short texts it shows ({data, grad}) for decorateNode. */
function updateNode(g, node, view, rootId, layout, nodeById) {
  const data = view.data.get(node.id);
  const grad = view.grad.get(node.id);
  const shown = { data: shortText(data), grad: shortText(grad) };
  const parts = partsOf(g);
  if (cardLayout.get(g) !== layout) {
    cardLayout.set(g, layout);
    placeCard(g, node, parts);
  }
  attr(g, "data-data", fullText(data));
  attr(g, "data-grad", fullText(grad));
  // The dead tag waits for the forward pass to compute the relu: before that it would give the
  // lesson away.
  const dead = deadShown(node, view);
  attr(g, "class", cardClass(node, view, rootId, nodeById, dead));
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

function edgeLabels(trace, view) {
  const labels = [];
  const { nodeById, edgeById } = traceIndex(trace);
  for (const id of view.active) {
    const edge = edgeById.get(id);
    if (!edge) continue; // not drawn: inside a collapsed group
    const shown = view.edges.get(edge.id);
    if (shown?.state === "backward-active") {
      labels.push({ id: edge.id, kind: "backward", text: chainText(shown.contribution), sourceKind: nodeById.get(edge.source).kind });
    } else if (shown?.state === "forward-active") {
      // Forward mode's tangent step: the edge's term of the chain rule; a value: the input's value.
      const text = shown.contribution ? chainText(shown.contribution) : compactText(nodeById.get(edge.source).data);
      labels.push({ id: edge.id, kind: "forward", text, sourceKind: nodeById.get(edge.source).kind });
    }
  }
  return labels;
}

function enterLabel() {
  const g = svgElement("g", {}, "edge-label");
  g.append(svgElement("rect", { rx: 4 }), svgElement("text", { "text-anchor": "middle", "dominant-baseline": "central" }),
    svgElement("line", { x1: 0, y1: 0 }, "leader"));
  return g;
}

function overlaps(a, b) {
  return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;
}

const boxesCache = new Attached("card boxes");

/** The cards' boxes (with a 2 px margin), once per trace: labels and marks must not cover them. */
export function cardBoxes(trace) {
  let boxes = boxesCache.get(trace);
  if (!boxes) {
    boxes = trace.nodes.map((n) => ({
      x0: n.x - n.width / 2 - 2, x1: n.x + n.width / 2 + 2, y0: n.y - n.height / 2 - 2, y1: n.y + n.height / 2 + 2,
    }));
    boxesCache.set(trace, boxes);
  }
  return boxes;
}

/**
 * A spot for each label on or near its edge that covers no card and no other label: along the
 * curve first, then stepping above/below its middle (a leader line points back at the edge).
 * A label with no such spot is left out: labels are shown only where they fit (the narration
 * says the same numbers). Only a handful of labels are shown at once.
 */
function placeLabels(labels, trace, geometry, fs) {
  if (labels.length === 0) return labels;
  const cards = cardBoxes(trace);
  const taken = [];
  const placed = [];
  for (const label of labels) {
    const { at } = geometry.get(label.id);
    const width = label.text.length * fs * 0.62 + fs;
    const height = fs * 1.6;
    const box = ([x, y]) => ({ x0: x - width / 2, x1: x + width / 2, y0: y - height / 2, y1: y + height / 2 });
    const candidates = [0.5, 0.4, 0.6, 0.3, 0.7].map(at);
    const [mx, my] = at(0.5);
    for (let k = 1; k <= 16; k++) candidates.push([mx, my - k * height * 0.75], [mx, my + k * height * 0.75]);
    const free = (c) => {
      const b = box(c);
      return !cards.some((r) => overlaps(b, r)) && !taken.some((r) => overlaps(b, r));
    };
    const spot = candidates.find(free);
    if (!spot) continue;
    taken.push(box(spot));
    placed.push(Object.assign(label, { x: spot[0], y: spot[1], width, height, dx: mx - spot[0], dy: my - spot[1] }));
  }
  return placed;
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

/** What a card is made for: another kind, tag or size of card is a new element (svg.js join). */
const cardShape = (n) => `${n.kind}:${n.derived}:${n.width}x${n.height}`;

/**
 * Draw `trace` as it looks in `view` into `layers` ({edges, labels, nodes} SVG groups). With
 * `changed` ([node ids, edge ids], from frames.js changedBetween or numbersChanged) and the same
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
  const drawNode = (el, node) => decorateNode(el, node, trace, view, updateNode(el, node, view, trace.root, layout, nodeById));
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
    // A collapsed group's stand-in (groups.js) holds its edges' ends; group-view.js draws its card.
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

function labelFontSize(trace) {
  const typical = trace.nodes.find((n) => n.kind === "op") ?? trace.nodes[0];
  return typical ? fontSize(typical) * 0.8 : 12;
}

/**
 * The edge labels of `view` as drawGraph places them ({id, kind, text, x, y, width, height, dx,
 * dy} in graph units) and their font size: the 3D view shows the same labels at the same places.
 */
export function placedEdgeLabels(trace, view) {
  const fontSize = labelFontSize(trace);
  return { labels: placeLabels(edgeLabels(trace, view), trace, edgeGeometry(trace), fontSize), fontSize };
}

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
