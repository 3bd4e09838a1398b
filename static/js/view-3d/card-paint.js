// Painting the 3D view's panels into 2D canvases (three.js shows each canvas as a texture): a node
// card as the SVG card looks (label, op, data, grad, tags, the labs' marks) and an edge label
// (`upstream × local = contribution`). Pure functions of their arguments; the colours and fonts
// are the page's CSS custom properties, read by readPalette() when the theme changes.

import { deadShown, warningWords } from "../controls/explain.js";
import { compactText, opGlyph, shortText } from "../core/format.js";
import { foldedOpText } from "../graph/hints.js";
import { fontSize } from "../graph/geometry.js";
import { t } from "../core/i18n.js";
import { nodeName } from "../core/names.js";

const COLOR_VARS = {
  card: "--card", cardStroke: "--card-stroke", surface: "--surface", surface2: "--surface-2",
  text: "--text", muted: "--muted", edge: "--edge", forward: "--forward", forwardSoft: "--forward-soft",
  backward: "--backward", backwardSoft: "--backward-soft", gradText: "--grad-text", warn: "--warn",
  error: "--error", accent: "--accent", labWrong: "--lab-wrong", labRight: "--lab-right", labLate: "--lab-late",
  sans: "--font-sans", mono: "--font-mono",
};

/** The colours and font families `element` inherits from the CSS now (light or dark theme). */
export function readPalette(element = document.documentElement) {
  const style = getComputedStyle(element);
  const palette = {};
  for (const [name, variable] of Object.entries(COLOR_VARS)) palette[name] = style.getPropertyValue(variable).trim();
  palette.labWrong ||= palette.backward;
  palette.labRight ||= palette.forward;
  palette.labLate ||= palette.warn;
  palette.sans ||= "sans-serif";
  palette.mono ||= "monospace";
  return palette;
}

/**
 * What node `node`'s card shows at `view` (core/frames.js viewAt: the one source of data, grad and
 * `--`), as texts and flags. `options`: {root, foldConstants, hovered, lab (what the labs mark on
 * it: labs/marks.js labCards, {wrong, badge}, or undefined)}. Two equal models paint the same card
 * (view-3d/scene.js repaints only what changed).
 */
export function cardModel(node, view, { nodeById, root, foldConstants = false, hovered = false, lab = undefined }) {
  const data = view.data.get(node.id);
  const grad = view.grad.get(node.id);
  const model = {
    kind: node.kind, data: shortText(data), computed: view.computed.has(node.id),
    visited: view.visited.has(node.id), current: view.current === node.id, root: node.id === root, hovered, badge: lab?.badge ?? 0,
  };
  if (node.kind === "const") return model;
  const warned = Boolean(node.warnings?.length) && data !== undefined;
  Object.assign(model, {
    label: nodeName(node), grad: shortText(grad), hasGrad: grad !== undefined,
    op: (foldConstants && foldedOpText(node, nodeById)) || opGlyph(node), derived: Boolean(node.derived),
    dead: deadShown(node, view), warned, data: shortText(data) + (warned ? " \u26a0" : ""),
    warning: warned && (node.kind !== "op" || model.computed) ? `\u26a0 ${node.warnings.map(warningWords).join(", ")}` : "",
    wrong: lab?.wrong ? { shown: compactText(lab.wrong.shown), correct: compactText(lab.wrong.correct) } : null,
  });
  return model;
}

/** The card's font size in graph units: the SVG card's rule (graph/draw.js), so both views read alike. */
export const cardFontSize = fontSize;

/**
 * The panel around a card, in graph units: the card box plus room above it for the tags
 * (derived, const, dead, wrong, the order badge) and below it for a warning.
 */
export function cardPanel(node) {
  const fs = cardFontSize(node);
  const side = fs * 1.2;
  return { fs, left: side, right: side, top: fs * 1.3, bottom: fs * 1.3, width: node.width + 2 * side, height: node.height + fs * 2.6 };
}

/** A 2D canvas of `width`×`height` graph units at `scale` pixels per unit, its context scaled to units. */
export function unitCanvas(width, height, scale, canvas = document.createElement("canvas")) {
  const w = Math.max(1, Math.ceil(width * scale));
  const h = Math.max(1, Math.ceil(height * scale));
  if (canvas.width !== w) canvas.width = w;
  if (canvas.height !== h) canvas.height = h;
  const ctx = canvas.getContext("2d");
  ctx.setTransform(w / width, 0, 0, h / height, 0, 0);
  ctx.clearRect(0, 0, width, height);
  return { canvas, ctx };
}

function roundRect(ctx, x, y, w, h, r) {
  ctx.beginPath();
  ctx.roundRect(x, y, w, h, r);
}

function font(ctx, size, family, weight = 400) {
  ctx.font = `${weight} ${size}px ${family}`;
}

/** `text` cut with "…" to at most `room` units wide in the context's font. */
function fitText(ctx, text, room) {
  if (ctx.measureText(text).width <= room) return text;
  let cut = text;
  while (cut.length > 1 && ctx.measureText(`${cut}\u2026`).width > room) cut = cut.slice(0, -1);
  return `${cut.trimEnd()}\u2026`;
}

// The tags over a card, as the SVG card words them (graph/draw.js, graph/hints.js, labs/marks.js).
const TAG_WORDS = { derived: "ui.card.derived", dead: "ui.card.dead", wrong: "ui.card.wrong" };

function tag(ctx, text, x, y, fs, color, palette) {
  font(ctx, fs * 0.72, palette.sans, 600);
  ctx.fillStyle = color;
  ctx.textAlign = "left";
  ctx.textBaseline = "alphabetic";
  const upper = text.toUpperCase();
  ctx.letterSpacing = `${fs * 0.72 * 0.04}px`;
  ctx.fillText(upper, x, y);
  const width = ctx.measureText(upper).width;
  ctx.letterSpacing = "0px";
  return width;
}

/** The card's outline and fill: the timeline's state, as the SVG card's class draws it. */
function paintFrame(ctx, model, palette, { w, h }) {
  let [fill, stroke, lineWidth, dash] = [palette.card, palette.cardStroke, 1.4, []];
  if (model.kind === "const") [fill, dash] = [palette.surface2, [3, 2]];
  else if (model.kind === "op" && !model.computed) dash = [5, 3];
  if (model.computed) [fill, stroke] = [palette.forwardSoft, palette.forward];
  if (model.visited) [fill, stroke] = [palette.backwardSoft, palette.backward];
  if (model.root) lineWidth = 2.2;
  if (model.dead) dash = [2, 3];
  if (model.current) [stroke, lineWidth, dash] = [palette.text, 4, []];
  if (model.hovered && !model.current) stroke = palette.accent;
  roundRect(ctx, lineWidth / 2, lineWidth / 2, w - lineWidth, h - lineWidth, Math.min(10, h / 5));
  ctx.fillStyle = fill;
  ctx.fill();
  ctx.setLineDash(dash);
  ctx.lineWidth = lineWidth;
  ctx.strokeStyle = stroke;
  ctx.stroke();
  ctx.setLineDash([]);
}

/** A constant's card: its value in the middle, and the const tag. */
function paintConst(ctx, model, palette, { w, h, fs }) {
  font(ctx, fs, palette.mono, 600);
  ctx.fillStyle = palette.muted;
  ctx.textAlign = "center";
  ctx.textBaseline = "middle";
  ctx.fillText(model.data, w / 2, h / 2);
  tag(ctx, t("ui.card.const"), 2, -fs * 0.35, fs, palette.muted, palette);
}

/** The top row (op glyph on the right, the name in what room is left) and the rows' names. */
function paintNames(ctx, model, palette, { w, fs, pad, rows }) {
  font(ctx, fs, palette.mono, 600);
  ctx.fillStyle = palette.muted;
  ctx.textAlign = "right";
  ctx.fillText(model.op, w - pad, rows[0]);
  const opWidth = model.op ? ctx.measureText(model.op).width + fs * 0.6 : 0;
  font(ctx, fs * 1.05, palette.sans, 650);
  ctx.fillStyle = palette.text;
  ctx.textAlign = "left";
  ctx.fillText(fitText(ctx, model.label, w - 2 * pad - opWidth), pad, rows[0]);
  font(ctx, fs * 0.75, palette.sans);
  ctx.fillStyle = palette.muted;
  ctx.fillText("data", pad, rows[1]);
  ctx.fillStyle = model.hasGrad ? palette.gradText : palette.muted;
  if (model.hasGrad) font(ctx, fs * 0.75, palette.sans, 600);
  ctx.fillText("grad", pad, rows[2]);
}

/** The data and grad numbers; a lab's wrong grad shows as `wrong ≠ correct`. */
function paintValues(ctx, model, palette, { w, fs, pad, rows }) {
  ctx.textAlign = "right";
  font(ctx, fs, palette.mono, 600);
  ctx.fillStyle = model.warned ? palette.warn : palette.forward;
  ctx.fillText(model.data, w - pad, rows[1]);
  if (!model.wrong) {
    if (!model.hasGrad) font(ctx, fs, palette.mono, 400);
    ctx.fillStyle = model.hasGrad ? palette.gradText : palette.muted;
    ctx.fillText(model.grad, w - pad, rows[2]);
    return;
  }
  // The labs' mark: the grad this variant computed ≠ the correct one.
  font(ctx, fs * 0.92, palette.mono, 700);
  let x = w - pad;
  for (const [text, color] of [[model.wrong.correct, palette.labRight], [" \u2260 ", palette.muted], [model.wrong.shown, palette.labWrong]]) {
    ctx.fillStyle = color;
    ctx.fillText(text, x, rows[2]);
    x -= ctx.measureText(text).width;
  }
}

/** The tags above the card, the warning under it, and the visit-order badge on its corner. */
function paintMarks(ctx, model, palette, { w, h, fs, panel }) {
  let x = 2;
  for (const [name, color] of [["derived", palette.warn], ["dead", palette.error], ["wrong", palette.labWrong]]) {
    if (model[name]) x += tag(ctx, t(TAG_WORDS[name]), x, -fs * 0.35, fs, color, palette) + fs * 0.6;
  }
  if (model.warning) {
    font(ctx, fs * 0.72, palette.sans, 600);
    ctx.fillStyle = palette.warn;
    ctx.textAlign = "right";
    ctx.fillText(fitText(ctx, model.warning, w + panel.left), w - 2, h + fs * 0.95);
  }
  if (!model.badge) return;
  // The visit-order lab's badge: this node's place in the order, on the card's top-right corner.
  ctx.beginPath();
  ctx.arc(w, 0, fs * 0.85, 0, 2 * Math.PI);
  ctx.fillStyle = palette.backward;
  ctx.fill();
  font(ctx, fs * 0.9, palette.mono, 700);
  ctx.fillStyle = "#ffffff";
  ctx.textAlign = "center";
  ctx.textBaseline = "middle";
  ctx.fillText(String(model.badge), w, 0);
}

/**
 * Paint card `model` (cardModel: the texts and flags the SVG card shows) for `node` into `canvas`
 * at `scale` canvas pixels per graph unit. Returns the canvas.
 */
export function paintCard(canvas, node, model, palette, scale) {
  const panel = cardPanel(node);
  const { ctx } = unitCanvas(panel.width, panel.height, scale, canvas);
  ctx.translate(panel.left, panel.top);
  const { fs } = panel;
  const [w, h] = [node.width, node.height];
  const box = { w, h, fs, panel, pad: Math.max(6, fs * 0.55), rows: [h * 0.34, h * 0.64, h * 0.88] };
  paintFrame(ctx, model, palette, box);
  ctx.textBaseline = "alphabetic";
  if (model.kind === "const") {
    paintConst(ctx, model, palette, box);
    return canvas;
  }
  paintNames(ctx, model, palette, box);
  paintValues(ctx, model, palette, box);
  paintMarks(ctx, model, palette, box);
  return canvas;
}

/** The box of an edge label in graph units (graph/draw.js placeLabels sizes it the same way). */
export function labelBox(text, fs) {
  return { width: text.length * fs * 0.62 + fs, height: fs * 1.6 };
}

const LABEL_COLORS = {
  forward: ["forward", "forward"], backward: ["backward", "gradText"], lost: ["labWrong", "labWrong"], late: ["labLate", "labLate"],
};

/**
 * Paint an edge label at `scale` pixels per unit: the text in a framed box of the label's width,
 * as the SVG edge label looks. `kind`: "forward" | "backward" (the chain rule on a lit edge), or
 * a lab's mark, "lost" (its `struck` end crossed out) | "late".
 */
export function paintLabel(canvas, { text, kind, width, height, struck = "" }, fs, palette, scale) {
  const margin = 2;
  const { ctx } = unitCanvas(width + 2 * margin, height + 2 * margin, scale, canvas);
  ctx.translate(margin, margin);
  const [frame, ink] = LABEL_COLORS[kind].map((name) => palette[name]);
  const mark = kind === "lost" || kind === "late";
  roundRect(ctx, 0, 0, width, height, mark ? height / 2 : 4);
  ctx.globalAlpha = 0.94;
  ctx.fillStyle = palette.surface;
  ctx.fill();
  ctx.globalAlpha = 1;
  ctx.lineWidth = 1.5;
  ctx.strokeStyle = frame;
  ctx.stroke();
  font(ctx, fs, palette.mono, 600);
  ctx.fillStyle = ink;
  ctx.textAlign = "center";
  ctx.textBaseline = "middle";
  const shown = fitText(ctx, text, width - fs * 0.4);
  ctx.fillText(shown, width / 2, height / 2 + fs * 0.04);
  if (struck && shown === text) {
    const right = width / 2 + ctx.measureText(text).width / 2;
    ctx.beginPath();
    ctx.moveTo(right - ctx.measureText(struck).width - fs * 0.15, height / 2);
    ctx.lineTo(right + fs * 0.15, height / 2);
    ctx.lineWidth = Math.max(1, fs * 0.1);
    ctx.strokeStyle = ink;
    ctx.stroke();
  }
  return canvas;
}
