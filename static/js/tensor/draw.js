// Draws a tensor program's frame: a card a tensor (its name, shape, data grid and gradient grid),
// an edge an input, on layers laid out once (tensor/layout.js); every argument given, no
// globals. Each cell carries what it shows in full precision (`data-value`, "" while unknown).
//
// A colour grid (past 6×6: makemore's hold 35,000 cells) is painted on a canvas, a pixel a cell;
// its cells are elements that carry the hooks (index, value, lit) but are not drawn, but for lit
// ones (tensor.css), and a box over the grid takes the pointer for them (cellOfEvent): a drag
// changes every number, and 35,000 SVG cells restyled and repainted took ~0.4 s a move. When
// only the numbers changed (the same step, the same cells lit: a drag), its cells' `data-value`
// are written once the numbers rest (VALUES_DELAY_MS after the last change), not every move.

import { attr, join, joined, svgElement, text } from "../core/svg.js";
import { compactText, shortText } from "../core/format.js";
import { CELL_CHARS, cellAt, headerText } from "./layout.js";
import { gradName, shapeText, tensorName } from "./timeline.js";
import { t } from "../core/i18n.js";

/** The SVG's markers and layers ({edges, cards}) inside `svg`. */
export function tensorLayers(svg) {
  const defs = svgElement("defs");
  for (const kind of ["idle", "forward", "backward"]) {
    const marker = svgElement("marker", {
      id: `tensor-arrow-${kind}`, viewBox: "0 0 10 10", refX: "9", refY: "5", markerWidth: "7", markerHeight: "7",
      markerUnits: "userSpaceOnUse", orient: "auto",
    });
    marker.append(svgElement("path", { d: "M0,0 L10,5 L0,10 z" }, `arrowhead arrow-${kind}`));
    defs.append(marker);
  }
  const viewport = svgElement("g", {}, "viewport");
  const layers = { edges: svgElement("g", {}, "tensor-edges"), cards: svgElement("g", {}, "tensor-cards") };
  viewport.append(layers.edges, layers.cards);
  svg.replaceChildren(defs, viewport);
  return layers;
}

const fullText = (value) => (value === undefined ? "" : String(value));

/** After the numbers of a colour grid last changed alone, when its cells' data-value are written. */
export const VALUES_DELAY_MS = 150;
const pendingValues = new Map(); // a colour grid's layer → the write of its cells' data-value
let valuesTimer = null;

/** Write every pending colour grid's data-value now (a step, a test, the numbers at rest). */
export function flushCellValues() {
  clearTimeout(valuesTimer);
  for (const write of pendingValues.values()) write();
  pendingValues.clear();
}

/** The RGB of a CSS colour (a custom property's value), as the canvas reads it. */
function rgbOf(colour) {
  const probe = (rgbOf.context ??= document.createElement("canvas").getContext("2d"));
  probe.fillStyle = "#000";
  probe.fillStyle = colour;
  const hex = /^#([0-9a-f]{6})$/i.exec(probe.fillStyle);
  if (hex) return [0, 2, 4].map((k) => parseInt(hex[1].slice(k, k + 2), 16));
  const parts = /rgba?\(([^)]*)\)/.exec(probe.fillStyle);
  return parts ? parts[1].split(",").slice(0, 3).map(Number) : [0, 0, 0];
}

/** `values` (nested lists, row-major) as one flat array: the numbers a grid's cells show, in
 *  order; `flat` (a reply's own Float64Array of the same numbers: tensor/recompute.js) as it is. */
function flatNumbers(values, flat) {
  if (flat) return flat;
  const out = [];
  const walk = (v) => {
    if (Array.isArray(v)) for (const x of v) walk(x);
    else out.push(Number(v));
  };
  walk(values);
  return out;
}

/** The theme's colours of positive and negative cells, as RGB (read once a frame). */
function cellColours(element) {
  const style = getComputedStyle(element);
  return { pos: rgbOf(style.getPropertyValue("--forward").trim()), neg: rgbOf(style.getPropertyValue("--backward").trim()) };
}

/** A colour grid's cells on its canvas: blue positive, orange negative, as strong as |value| is
 *  against the grid's largest (as a number grid's cells are filled), nothing unknown or zero. */
function paintCanvas(canvas, values, flat, { rows, cols }, { pos, neg }) {
  const context = canvas.getContext("2d");
  const image = (canvas.image ??= context.createImageData(cols, rows)); // one a canvas, reused
  const pixels = image.data;
  pixels.fill(0);
  if (values !== undefined && values !== null) {
    const numbers = flatNumbers(values, flat);
    let scale = 0;
    for (let k = 0; k < numbers.length; k++) {
      const size = Math.abs(numbers[k]);
      if (size > scale && size !== Infinity) scale = size;
    }
    scale ||= 1;
    for (let k = 0, p = 0; k < numbers.length; k++, p += 4) {
      const x = numbers[k];
      if (!Number.isFinite(x) || x === 0) continue;
      const colour = x > 0 ? pos : neg;
      pixels[p] = colour[0];
      pixels[p + 1] = colour[1];
      pixels[p + 2] = colour[2];
      pixels[p + 3] = Math.round(255 * (0.12 + (0.88 * Math.abs(x)) / scale));
    }
  }
  context.putImageData(image, 0, 0);
}

/** A colour grid: its canvas painted, and its cells joined again only when what they carry
 *  besides their numbers changed (known or not, lit cells); else their numbers written later. */
function drawColourGrid(layer, box, node, grid, values, litCells, colours) {
  const known = values !== undefined && values !== null;
  const lit = [...litCells].filter(([key]) => key.startsWith(`${node.id}|${grid}|`)).map(([key, role]) => `${key}=${role}`).join(" ");
  const flat = values === node[grid] ? node.flat?.[grid] : undefined;
  paintCanvas(layer.previousSibling.previousSibling.firstChild, values, flat, box.grid, colours);
  const key = `${known}|${lit}`;
  if (layer.dataset.drawn === key) {
    const { rows, cols } = box.grid;
    pendingValues.set(layer, () => {
      for (let r = 0; r < rows; r++) {
        for (let c = 0; c < cols; c++) attr(joined(layer, `${r},${c}`), "data-value", fullText(cellAt(values, node.shape, r, c).value));
      }
    });
    return;
  }
  pendingValues.delete(layer);
  layer.dataset.drawn = key;
  drawCells(layer, box, node, grid, values, litCells);
}

/** The largest |value| of nested lists (a colour scale's end), 0 for none. */
function largest(values) {
  if (values === undefined || values === null) return 0;
  if (!Array.isArray(values)) return Number.isFinite(Number(values)) ? Math.abs(Number(values)) : 0;
  return values.reduce((m, v) => Math.max(m, largest(v)), 0);
}

/** One grid's cells: `values` (nested lists or undefined), coloured on a scale to its largest |value|. */
function drawGrid(layer, box, node, grid, values, litCells, colours, lessonCells) {
  if (box.cell.numbers) drawCells(layer, box, node, grid, values, litCells, lessonCells);
  else drawColourGrid(layer, box, node, grid, values, litCells, colours);
}

/** A grid's cells, each with its hooks (`data-lesson` on a cell a lesson's stop rings); a number grid's filled and written. */
function drawCells(layer, box, node, grid, values, litCells, lessonCells = new Set()) {
  const { rows, cols } = box.grid;
  const { width, height, numbers } = box.cell;
  const top = grid === "data" ? box.dataY : box.gradY;
  const scale = numbers ? largest(values) || 1 : 1;
  const items = [];
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) items.push({ r, c, ...cellAt(values, node.shape, r, c) });
  join(layer, items, (item) => `${item.r},${item.c}`, () => {
    const g = svgElement("g", { "data-testid": "tensor-cell" }, "tensor-cell");
    g.append(svgElement("rect", { width, height }, "cell-box"));
    if (numbers) g.append(svgElement("text", { x: width - 5, y: height / 2, "dominant-baseline": "central", "text-anchor": "end" }, "cell-text"));
    return g;
  }, (g, item) => {
    const key = `${node.id}|${grid}|${item.index.join(",")}`;
    const x = Number(item.value);
    const known = item.value !== undefined && item.value !== null;
    // A colour grid's colours are its canvas's.
    const sign = !numbers || !known || !Number.isFinite(x) ? "none" : x < 0 ? "neg" : x > 0 ? "pos" : "zero";
    attr(g, "transform", `translate(${box.gridX + item.c * width},${top + item.r * height})`);
    attr(g, "class", ["tensor-cell", `sign-${sign}`, litCells.get(key) ?? ""].join(" ").trim());
    attr(g, "data-tensor-id", node.id);
    attr(g, "data-grid", grid);
    attr(g, "data-index", item.index.join(","));
    attr(g, "data-value", known ? fullText(item.value) : "");
    attr(g, "data-lesson", lessonCells.has(key) ? "highlight" : null);
    const strength = known && Number.isFinite(x) ? Math.abs(x) / scale : 0;
    if (numbers) attr(g.firstChild, "fill-opacity", (0.28 * strength).toFixed(3));
    // Unknown (an op's data before its step, a gradient before the pass reaches it): blank.
    // A cell that does something when clicked (a gradient's opens its sum, a named leaf's its
    // editor) is a button the keyboard reaches too, while its grid has numbers (a colour grid's
    // thousands of cells would be as many tab stops).
    const acts = numbers && (grid === "grad" ? known : node.kind === "leaf" && Boolean(node.name));
    const name = `${grid === "grad" ? gradName(node) : tensorName(node)}${item.index.length ? `[${item.index.join(",")}]` : ""}`;
    attr(g, "tabindex", acts ? "0" : null);
    attr(g, "role", acts ? "button" : null);
    attr(g, "aria-label", acts ? `${name} = ${compactText(item.value)}` : null);
    if (numbers) {
      const shown = known ? (node.dtype === "int" ? compactText(item.value) : shortText(item.value)) : "";
      text(g.lastChild, shown);
      // `−0.003462` (9 characters) is drawn narrower to stay in its cell.
      attr(g.lastChild, "textLength", shown.length > CELL_CHARS ? width - 7 : null);
      attr(g.lastChild, "lengthAdjust", shown.length > CELL_CHARS ? "spacingAndGlyphs" : null);
    }
  });
}

/** What goes before a grid's cells: for a colour grid its canvas and the box that takes the
 *  pointer for its cells (cellOfEvent), for a number grid nothing. */
function gridBack(box, top) {
  if (box.cell.numbers) return [];
  const { rows, cols } = box.grid;
  const [width, height] = [cols * box.cell.width, rows * box.cell.height];
  const hit = svgElement("rect", { x: box.gridX, y: top, width, height, "data-rows": rows, "data-cols": cols }, "grid-hit");
  return [gridCanvas(box, top), hit];
}

/** A colour grid's canvas (a pixel a cell, drawn at the grid's size). */
function gridCanvas(box, top) {
  const { rows, cols } = box.grid;
  const [width, height] = [cols * box.cell.width, rows * box.cell.height];
  const holder = svgElement("foreignObject", { x: box.gridX, y: top, width, height, "aria-hidden": "true" }, "grid-canvas");
  const canvas = document.createElement("canvas");
  Object.assign(canvas, { width: cols, height: rows });
  Object.assign(canvas.style, { width: `${width}px`, height: `${height}px`, display: "block", imageRendering: "pixelated" });
  holder.append(canvas);
  return holder;
}

/** A colour grid's cell under a pointer `event` on its hit box (its cells are not drawn: a
 *  canvas shows them), or null. */
function cellAtPointer(hit, event) {
  const layer = hit.nextSibling;
  const rows = Number(hit.dataset.rows);
  const cols = Number(hit.dataset.cols);
  const point = new DOMPoint(event.clientX, event.clientY).matrixTransform(hit.getScreenCTM().inverse());
  const c = Math.floor(((point.x - Number(hit.getAttribute("x"))) / Number(hit.getAttribute("width"))) * cols);
  const r = Math.floor(((point.y - Number(hit.getAttribute("y"))) / Number(hit.getAttribute("height"))) * rows);
  if (!(r >= 0 && r < rows && c >= 0 && c < cols)) return null;
  return joined(layer, `${r},${c}`) ?? null;
}

/** The tensor cell an event is on: its element, or a colour grid's cell under the pointer. */
export function cellOfEvent(event) {
  const target = event.target;
  const hit = target.closest?.(".grid-hit");
  if (hit) return cellAtPointer(hit, event);
  return target.closest?.("[data-testid=tensor-cell]") ?? null;
}

/** An op card's Expand button at `{x, width}` of its header (tensor/expand-view.js opens it). */
function expandButton({ x, width }, node) {
  const label = t("ui.tensor.expand_label", { name: node.label });
  const button = svgElement("g", { "data-testid": "tensor-expand", "data-tensor-id": node.id, role: "button", tabindex: "0", "aria-label": label }, "tensor-expand-button");
  const title = svgElement("title");
  title.textContent = label;
  const word = svgElement("text", { x: x + width / 2, y: 16, "text-anchor": "middle" });
  word.textContent = t("ui.tensor.expand");
  button.append(title, svgElement("rect", { x, y: 4, width, height: 17, rx: 4 }), word);
  return button;
}

/** A card's frame, header and the two grids' layers (made once per card). */
function enterCard(box, node) {
  const g = svgElement("g", { "data-testid": "tensor", role: "group", "aria-label": `${headerText(node)}, ${shapeText(node.shape)}` }, "tensor-card");
  g.append(
    svgElement("rect", { width: box.width, height: box.height, rx: 6 }, "card"),
    svgElement("text", { x: 8, y: 17 }, "tensor-label"),
    svgElement("text", { x: box.width - 8, y: 17, "text-anchor": "end" }, "tensor-shape"),
    ...gridBack(box, box.dataY),
    svgElement("g", {}, "grid grid-data"),
  );
  if (box.hasGrad) {
    g.append(svgElement("text", { x: box.gridX, y: box.gradY - 4 }, "grad-label"), ...gridBack(box, box.gradY), svgElement("g", {}, "grid grid-grad"));
  }
  text(g.children[1], headerText(node));
  text(g.children[2], shapeText(node.shape));
  if (box.expand) {
    g.children[2].setAttribute("x", box.expand.x - 6);
    g.append(expandButton(box.expand, node));
  }
  if (box.hasGrad) text(g.querySelector(".grad-label"), "grad"); // micrograd's and PyTorch's `.grad`, as the scalar cards' row name
  return g;
}

/**
 * Draw the frame `view` (tensor/timeline.js tensorViewAt) of `reply` on `layers` laid out as
 * `layout`, with `lit` cells ([{tensor, index, grid, role}], a fan-in's) marked, the cards
 * (`t3`) and cells (`t3|grad|1,2`) of `ringed` (a lesson stop's highlight) ringed, and the
 * tensors of `reused` (ids: the = lab's, each read by two ops) marked.
 */
export function drawTensors(layers, layout, reply, view, lit = [], ringed = [], reused = new Set()) {
  const colours = cellColours(layers.cards);
  const litCells = new Map(lit.map((cell) => [`${cell.tensor}|${cell.grid}|${cell.index.join(",")}`, `lit-${cell.role}`]));
  const lessonCells = new Set(ringed.filter((key) => key.includes("|")));
  const lessonCards = new Set(ringed.filter((key) => !key.includes("|")));
  join(layers.edges, layout.edges, (edge) => edge.id, () => svgElement("path", {}, "tensor-edge"), (path, edge) => {
    const state = view.edge(edge) ?? "idle";
    attr(path, "d", edge.d);
    attr(path, "class", `tensor-edge ${state}`);
    attr(path, "data-state", state);
    attr(path, "marker-end", `url(#tensor-arrow-${state.startsWith("backward") ? "backward" : state.startsWith("forward") ? "forward" : "idle"})`);
  });
  join(layers.cards, reply.nodes, (node) => node.id, (node) => enterCard(layout.cards.get(node.id), node), (g, node) => {
    const box = layout.cards.get(node.id);
    const grad = view.grad(node.id);
    attr(g, "transform", `translate(${box.x},${box.y})`);
    const classes = ["tensor-card", `kind-${node.kind}`];
    if (view.current === node.id) classes.push("current");
    if (view.arriving.includes(node.id)) classes.push("arriving");
    if (!view.computed(node.id)) classes.push("pending");
    attr(g, "class", classes.join(" "));
    attr(g, "data-tensor-id", node.id);
    attr(g, "data-name", node.name);
    attr(g, "data-label", node.label);
    attr(g, "data-op", node.op ?? "");
    attr(g, "data-kind", node.kind);
    attr(g, "data-shape", node.shape.join(","));
    attr(g, "data-computed", String(view.computed(node.id)));
    attr(g, "data-reached", String(grad !== undefined));
    attr(g, "data-lesson", lessonCards.has(node.id) ? "highlight" : null);
    attr(g, "data-reused", reused.has(node.id) ? "true" : null);
    drawGrid(g.querySelector(".grid-data"), box, node, "data", view.data(node.id), litCells, colours, lessonCells);
    if (box.hasGrad) drawGrid(g.querySelector(".grid-grad"), box, node, "grad", grad, litCells, colours, lessonCells);
  }, (node) => { // another card size: made again
    const box = layout.cards.get(node.id);
    return `${box.width}x${box.height}|${node.label}|${node.shape}`;
  });
  if (pendingValues.size) {
    clearTimeout(valuesTimer);
    valuesTimer = setTimeout(flushCellValues, VALUES_DELAY_MS);
  }
}
