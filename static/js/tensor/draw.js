// Draws a tensor program's frame: a card a tensor (its name, shape, data grid and gradient grid),
// an edge an input, on layers laid out once (tensor/layout.js); every argument given, no
// globals. Each cell carries what it shows in full precision (`data-value`, "" while unknown).

import { attr, join, svgElement, text } from "../core/svg.js";
import { compactText, shortText } from "../core/format.js";
import { CELL_CHARS, cellAt, headerText } from "./layout.js";
import { gradName, shapeText, tensorName } from "./timeline.js";

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

/** The largest |value| of nested lists (a colour scale's end), 0 for none. */
function largest(values) {
  if (values === undefined || values === null) return 0;
  if (!Array.isArray(values)) return Number.isFinite(Number(values)) ? Math.abs(Number(values)) : 0;
  return values.reduce((m, v) => Math.max(m, largest(v)), 0);
}

/** One grid's cells: `values` (nested lists or undefined), coloured on a scale to its largest |value|. */
function drawGrid(layer, box, node, grid, values, litCells, lessonCells) {
  const { rows, cols } = box.grid;
  const { width, height, numbers } = box.cell;
  const top = grid === "data" ? box.dataY : box.gradY;
  const scale = largest(values) || 1;
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
    const sign = !known || !Number.isFinite(x) ? "none" : x < 0 ? "neg" : x > 0 ? "pos" : "zero";
    attr(g, "transform", `translate(${box.gridX + item.c * width},${top + item.r * height})`);
    attr(g, "class", ["tensor-cell", `sign-${sign}`, litCells.get(key) ?? ""].join(" ").trim());
    attr(g, "data-tensor-id", node.id);
    attr(g, "data-grid", grid);
    attr(g, "data-index", item.index.join(","));
    attr(g, "data-value", known ? fullText(item.value) : "");
    attr(g, "data-lesson", lessonCells.has(key) ? "highlight" : null);
    const strength = known && Number.isFinite(x) ? Math.abs(x) / scale : 0;
    attr(g.firstChild, "fill-opacity", (numbers ? 0.28 * strength : 0.12 + 0.88 * strength).toFixed(3));
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

/** A card's frame, header and the two grids' layers (made once per card). */
function enterCard(box, node) {
  const g = svgElement("g", { "data-testid": "tensor", role: "group", "aria-label": `${headerText(node)}, ${shapeText(node.shape)}` }, "tensor-card");
  g.append(
    svgElement("rect", { width: box.width, height: box.height, rx: 6 }, "card"),
    svgElement("text", { x: 8, y: 17 }, "tensor-label"),
    svgElement("text", { x: box.width - 8, y: 17, "text-anchor": "end" }, "tensor-shape"),
    svgElement("g", {}, "grid grid-data"),
  );
  if (box.hasGrad) {
    g.append(svgElement("text", { x: box.gridX, y: box.gradY - 4 }, "grad-label"), svgElement("g", {}, "grid grid-grad"));
  }
  text(g.children[1], headerText(node));
  text(g.children[2], shapeText(node.shape));
  if (box.hasGrad) text(g.children[4], "grad"); // micrograd's and PyTorch's `.grad`, as the scalar cards' row name
  return g;
}

/**
 * Draw the frame `view` (tensor/timeline.js tensorViewAt) of `reply` on `layers` laid out as
 * `layout`, with `lit` cells ([{tensor, index, grid, role}], a fan-in's) marked, the cards
 * (`t3`) and cells (`t3|grad|1,2`) of `ringed` (a lesson stop's highlight) ringed, and the
 * tensors of `reused` (ids: the = lab's, each read by two ops) marked.
 */
export function drawTensors(layers, layout, reply, view, lit = [], ringed = [], reused = new Set()) {
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
    drawGrid(g.querySelector(".grid-data"), box, node, "data", view.data(node.id), litCells, lessonCells);
    if (box.hasGrad) drawGrid(g.querySelector(".grid-grad"), box, node, "grad", grad, litCells, lessonCells);
  }, (node) => { // another card size: made again
    const box = layout.cards.get(node.id);
    return `${box.width}x${box.height}|${node.label}|${node.shape}`;
  });
}
