// Where a tensor program's cards go (no DOM): one column per depth, left to right in the
// program's order (an op one column right of its deepest input; a tensor the program writes
// just left of its first reader), each card a header, its data grid and its gradient's grid.
// A grid shows numbers while they fit (NUMBER_CELLS a side), else a colour a cell.

import { shapeText, tensorIndex } from "./timeline.js";
import { expandable } from "./expand.js";
import { t } from "../core/i18n.js";

/** A grid of at most this many rows and columns shows its numbers. */
export const NUMBER_CELLS = 6;
const NUMBER_CELL = { width: 56, height: 19 };
/** A number's characters that fit a cell at its font size; a longer one is drawn narrower. */
export const CELL_CHARS = 7;
const COLOUR_GRID_MAX = 120; // a colour grid's largest side (graph units)
const COLOUR_ROW = 10; // a vector's colour cells' height: a strip, not a hairline
const HEADER = 26;
const GRAD_LABEL = 15;
const PAD = 8;
const COLUMN_GAP = 44;
const ROW_GAP = 26;
const CHAR = 7.4; // the header's characters (monospace, 12 units)
const BUTTON_CHAR = 6.2; // the Expand button's characters (sans, 10.5 units)
const BUTTON_PAD = 8;

/** Rows and columns of a grid of `shape`: a matrix as it is, a vector one row, a number 1×1;
 *  more dims: the first dim's rows of everything else flattened. */
export function gridOf(shape) {
  if (shape.length === 0) return { rows: 1, cols: 1 };
  if (shape.length === 1) return { rows: 1, cols: shape[0] };
  return { rows: shape[0], cols: shape.slice(1).reduce((a, b) => a * b, 1) };
}

/** The cell size of a grid: numbers while they fit, else colours within COLOUR_GRID_MAX. */
function cellOf({ rows, cols }) {
  if (rows <= NUMBER_CELLS && cols <= NUMBER_CELLS) return { ...NUMBER_CELL, numbers: true };
  const side = Math.max(2, Math.min(14, COLOUR_GRID_MAX / Math.max(rows, cols)));
  return { width: side, height: rows === 1 ? Math.max(side, COLOUR_ROW) : side, numbers: false };
}

/** A card's title: its label, and the op that made a named tensor (`h = tanh`). */
export const headerText = (node) => (node.name && node.op ? `${node.label} = ${node.op}` : node.label);

/** A card's box and its grids' places (relative to the card). */
function cardOf(node) {
  const grid = gridOf(node.shape);
  const cell = cellOf(grid);
  const gridWidth = grid.cols * cell.width;
  const gridHeight = grid.rows * cell.height;
  const header = `${headerText(node)}   ${shapeText(node.shape)}`;
  // An op's card has its Expand button at the header's end (tensor/expand-view.js).
  const button = expandable(node) ? t("ui.tensor.expand").length * BUTTON_CHAR + 2 * BUTTON_PAD : 0;
  const width = Math.max(gridWidth, header.length * CHAR + (button && button + PAD), 60) + 2 * PAD;
  const hasGrad = node.grad !== null && node.kind !== "const";
  const dataY = HEADER;
  const gradY = dataY + gridHeight + GRAD_LABEL;
  const height = (hasGrad ? gradY + gridHeight : dataY + gridHeight) + PAD;
  const expand = button ? { x: width - PAD + 3 - button, width: button } : null;
  return { id: node.id, width, height, grid, cell, gridX: (width - gridWidth) / 2, dataY, gradY, hasGrad, expand };
}

/** Each tensor's column: ops one right of their deepest input, written tensors left of their first reader. */
function columnsOf(reply) {
  const column = new Map();
  for (const node of reply.nodes) column.set(node.id, Math.max(-1, ...node.inputs.map((id) => column.get(id) ?? 0)) + 1);
  for (const node of reply.nodes) {
    const readers = node.inputs.length ? [] : reply.nodes.filter((n) => n.inputs.includes(node.id));
    if (readers.length) column.set(node.id, Math.max(0, Math.min(...readers.map((n) => column.get(n.id))) - 1));
  }
  return column;
}

/**
 * The layout of `reply`: {cards: Map id → {x, y, width, height, grid, cell, gridX, dataY,
 * gradY, hasGrad, expand (its Expand button's {x, width}, or null)}, edges: [{id, source, target, d}], width, height, numbers (whether a grid
 * shows numbers)}. Deterministic: the
 * same reply, the same places.
 */
export function tensorLayout(reply) {
  const columns = columnsOf(reply);
  const byColumn = [];
  for (const node of reply.nodes) (byColumn[columns.get(node.id)] ??= []).push(cardOf(node));
  const heights = byColumn.map((cards = []) => cards.reduce((sum, c) => sum + c.height, 0) + ROW_GAP * Math.max(0, cards.length - 1));
  const tallest = Math.max(0, ...heights);
  const cards = new Map();
  let x = 0;
  byColumn.forEach((column = [], k) => {
    let y = (tallest - heights[k]) / 2;
    for (const card of column) {
      cards.set(card.id, { ...card, x, y });
      y += card.height + ROW_GAP;
    }
    x += Math.max(0, ...column.map((c) => c.width)) + COLUMN_GAP;
  });
  const edges = tensorIndex(reply).edges.map((edge) => {
    const [a, b] = [cards.get(edge.source), cards.get(edge.target)];
    const [x1, y1, x2, y2] = [a.x + a.width, a.y + a.height / 2, b.x, b.y + b.height / 2];
    const bend = Math.max(20, (x2 - x1) / 2);
    return { ...edge, d: `M${x1},${y1} C${x1 + bend},${y1} ${x2 - bend},${y2} ${x2 - 6},${y2}` };
  });
  const numbers = [...cards.values()].some((card) => card.cell.numbers);
  return { cards, edges, width: Math.max(0, x - COLUMN_GAP), height: tallest, numbers };
}

/** The element of nested lists `values` at grid cell (r, c) of `shape`, and its index. */
export function cellAt(values, shape, r, c) {
  if (shape.length === 0) return { value: values, index: [] };
  if (shape.length === 1) return { value: values?.[c], index: [c] };
  const index = [r];
  let rest = c;
  const tail = shape.slice(1);
  const inner = [];
  for (let k = tail.length - 1; k >= 0; k--) {
    inner.unshift(rest % tail[k]);
    rest = Math.floor(rest / tail[k]);
  }
  index.push(...inner);
  let value = values;
  for (const i of index) value = value?.[i];
  return { value, index };
}
