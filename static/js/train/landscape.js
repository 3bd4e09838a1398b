// The loss landscape of two parameters as filled SVG contours (d3-contour, vendored) with the
// learner's tries, their best guess, the descent path and the current point on it. The grid is
// the server's (POST /api/landscape: each value a forward pass of the engine); this module only
// draws it and turns pointer drags and arrow keys on the point into `onMove({x, y})`.
//
// Darker is lower: the plot is filled with the valley colour, and each contour level (the
// region at or above it) lays a translucent sheet of the high colour over it, so higher regions
// lie under more sheets and read lighter, in either theme (labs.css).

import { contours } from "../../vendor/d3-contour/d3-contour.mjs";
import { compactText } from "../core/format.js";
import { h } from "../core/dom.js";
import { t } from "../core/i18n.js";
import { legendItem, niceTicks } from "./loss-chart.js";
import { svgElement } from "../core/svg.js";

const WIDTH = 360;
const HEIGHT = 300;
const PAD = { left: 48, right: 10, top: 10, bottom: 36 };
const LEVELS = 10; // bands: the grid's finite values cut at their deciles
let clips = 0; // each landscape's clip path gets its own id
const ARROW_KEYS = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, 1], ArrowDown: [0, -1] };

/** The contour thresholds of `values`: their deciles, each once, increasing. */
export function levelsOf(values) {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (sorted.length === 0) return [];
  const levels = [];
  for (let k = 1; k < LEVELS; k += 1) {
    const level = sorted[Math.floor((k * sorted.length) / LEVELS)];
    if (level > sorted[0] && (levels.length === 0 || level > levels.at(-1))) levels.push(level);
  }
  return levels;
}

/** A number as the API sends it (non-finite ones are strings) as a JS number. */
const numberOf = (v) => (typeof v === "number" ? v : { Infinity, "-Infinity": -Infinity }[v] ?? NaN);

/**
 * The plot's scales for `grid`: the axes span the grid's cells (each value is the centre of a
 * cell half a step wider than the range on every side, as d3-contour reads a grid).
 */
function scalesOf(grid) {
  const n = grid.xs.length;
  const [dx, dy] = [(grid.xs.at(-1) - grid.xs[0]) / (n - 1), (grid.ys.at(-1) - grid.ys[0]) / (grid.ys.length - 1)];
  const x0 = grid.xs[0] - dx / 2;
  const x1 = grid.xs.at(-1) + dx / 2;
  const y0 = grid.ys[0] - dy / 2;
  const y1 = grid.ys.at(-1) + dy / 2;
  const [w, hgt] = [WIDTH - PAD.left - PAD.right, HEIGHT - PAD.top - PAD.bottom];
  const x = (v) => PAD.left + ((v - x0) / (x1 - x0)) * w;
  const y = (v) => HEIGHT - PAD.bottom - ((v - y0) / (y1 - y0)) * hgt;
  const fromPixel = (px, py) => [x0 + ((px - PAD.left) / w) * (x1 - x0), y0 + ((HEIGHT - PAD.bottom - py) / hgt) * (y1 - y0)];
  return { x, y, x0, x1, y0, y1, dx, dy, fromPixel, gridX: (g) => x(x0 + g * dx), gridY: (g) => y(y0 + g * dy) };
}

/** A d3-contour MultiPolygon (grid units) as an SVG path in plot pixels. */
function pathOf(polygons, s) {
  return polygons.map((polygon) => polygon.map((ring) => `M${ring.map(([gx, gy]) => `${s.gridX(gx).toFixed(1)},${s.gridY(gy).toFixed(1)}`).join("L")}Z`).join("")).join("");
}

/** The filled bands and their contour lines; NaN cells (no number there) hatched apart. */
function drawBands(layer, grid, s) {
  const n = grid.xs.length;
  const m = grid.ys.length;
  const values = grid.losses.flat().map(numberOf);
  // NaN is no height at all: contoured as above every level, then marked as such.
  const heights = values.map((v) => (Number.isNaN(v) ? Infinity : v));
  const levels = levelsOf(values);
  layer.append(svgElement("rect", { x: PAD.left, y: PAD.top, width: WIDTH - PAD.left - PAD.right, height: HEIGHT - PAD.top - PAD.bottom }, "landscape-valley"));
  for (const band of contours().size([n, m]).thresholds(levels)(heights)) {
    layer.append(svgElement("path", { d: pathOf(band.coordinates, s), "data-level": String(band.value) }, "landscape-band"));
  }
  values.forEach((v, k) => {
    if (!Number.isNaN(v)) return;
    const [j, i] = [k % n, Math.floor(k / n)];
    layer.append(svgElement("rect", { x: s.gridX(j), y: s.gridY(i + 1), width: s.gridX(j + 1) - s.gridX(j), height: s.gridY(i) - s.gridY(i + 1) }, "landscape-nan"));
  });
  return { levels: String(levels.length), undefinedCells: String(values.filter(Number.isNaN).length) };
}

/** Ticks and names of both axes. */
function drawAxes(layer, s, names) {
  const bottom = HEIGHT - PAD.bottom;
  layer.append(svgElement("rect", { x: PAD.left, y: PAD.top, width: WIDTH - PAD.left - PAD.right, height: bottom - PAD.top }, "landscape-frame"));
  for (const tick of niceTicks(s.x0, s.x1, 5)) {
    const label = svgElement("text", { x: s.x(tick), y: bottom + 13, "text-anchor": "middle" }, "landscape-tick");
    label.textContent = compactText(tick);
    layer.append(svgElement("line", { x1: s.x(tick), x2: s.x(tick), y1: bottom, y2: bottom + 4 }, "landscape-tick-mark"), label);
  }
  for (const tick of niceTicks(s.y0, s.y1, 5)) {
    const label = svgElement("text", { x: PAD.left - 6, y: s.y(tick), "text-anchor": "end", "dominant-baseline": "central" }, "landscape-tick");
    label.textContent = compactText(tick);
    layer.append(svgElement("line", { x1: PAD.left - 4, x2: PAD.left, y1: s.y(tick), y2: s.y(tick) }, "landscape-tick-mark"), label);
  }
  const xName = svgElement("text", { x: WIDTH - PAD.right, y: HEIGHT - 4, "text-anchor": "end" }, "landscape-axis-name");
  xName.textContent = names[0];
  const yName = svgElement("text", { x: PAD.left - 6, y: PAD.top - 2, "text-anchor": "end", "dominant-baseline": "hanging" }, "landscape-axis-name");
  yName.textContent = names[1];
  layer.append(xName, yName);
}

/** The tries, the descent path (from the best guess), the best guess and the current point. */
function drawMarks(layer, handle, s, marks) {
  const at = ([vx, vy]) => [s.x(vx), s.y(vy)];
  for (const point of marks.tries) {
    const [cx, cy] = at(point);
    layer.append(svgElement("circle", { cx, cy, r: 2.6 }, "landscape-try"));
  }
  if (marks.path.length > 1) {
    const d = marks.path.map((point, k) => `${k ? "L" : "M"}${at(point).map((c) => c.toFixed(1)).join(",")}`).join("");
    layer.append(svgElement("path", { d }, "landscape-path-halo"), svgElement("path", { d }, "landscape-path"));
    for (const point of marks.path.slice(1)) {
      const [cx, cy] = at(point);
      layer.append(svgElement("circle", { cx, cy, r: 2.4 }, "landscape-step"));
    }
  }
  if (marks.best) {
    const [cx, cy] = at(marks.best);
    layer.append(svgElement("path", { d: `M${cx},${cy - 7}L${cx + 7},${cy}L${cx},${cy + 7}L${cx - 7},${cy}Z` }, "landscape-guess"));
  }
  const [cx, cy] = at(marks.current);
  for (const circle of handle.querySelectorAll("circle")) {
    circle.setAttribute("cx", cx);
    circle.setAttribute("cy", cy);
  }
}

/** The point that the landscape moves: a focusable ring, its value said to screen readers. */
function handleElement() {
  const group = svgElement("g", { tabindex: "0", role: "slider", "aria-roledescription": t("ui.landscape.point"), "data-testid": "landscape-point", class: "landscape-handle" });
  group.append(svgElement("circle", { r: 11 }, "landscape-handle-target"), svgElement("circle", { r: 6.5 }, "landscape-handle-ring"));
  return group;
}

/** The landscape's drawing: its svg, layers (bands, axes, marks: clipped) and point. */
function landscapeElements() {
  const svg = svgElement("svg", { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, class: "landscape", "data-testid": "landscape", role: "group" });
  // Tries and steps outside the grid (zoomed in) are cut at its frame.
  const clipId = `landscape-clip-${(clips += 1)}`;
  const clip = svgElement("clipPath", { id: clipId });
  clip.append(svgElement("rect", { x: PAD.left, y: PAD.top, width: WIDTH - PAD.left - PAD.right, height: HEIGHT - PAD.top - PAD.bottom }));
  const layers = { bands: svgElement("g"), axes: svgElement("g"), marks: svgElement("g", { "clip-path": `url(#${clipId})` }) };
  const handle = handleElement();
  svg.append(clip, layers.bands, layers.axes, layers.marks, handle);
  const legend = h("ul", { class: "chart-legend landscape-legend", "data-testid": "landscape-legend" });
  return { svg, layers, handle, legend, shown: null }; // shown: {grid, s, marks, names}
}

/** A point from a pointer at (clientX, clientY), clamped to the grid and rounded to a tenth of a cell. */
function pointAt(view, event) {
  const box = view.svg.getBoundingClientRect();
  const [px, py] = [((event.clientX - box.left) / box.width) * WIDTH, ((event.clientY - box.top) / box.height) * HEIGHT];
  const { s, grid } = view.shown;
  const [vx, vy] = s.fromPixel(px, py);
  return { x: tidy(clamp(vx, grid.xs[0], grid.xs.at(-1)), s.dx), y: tidy(clamp(vy, grid.ys[0], grid.ys.at(-1)), s.dy) };
}

/** Dragging the point (a press anywhere on the grid) or moving it with the arrow keys calls `onMove`. */
function listenToMoves(view, onMove) {
  const { svg, handle } = view;
  svg.addEventListener("pointerdown", (event) => {
    if (!view.shown || event.button !== 0) return;
    svg.setPointerCapture(event.pointerId);
    handle.focus({ preventScroll: true });
    onMove(pointAt(view, event));
    event.preventDefault();
  });
  svg.addEventListener("pointermove", (event) => {
    if (view.shown && svg.hasPointerCapture(event.pointerId)) onMove(pointAt(view, event));
  });
  handle.addEventListener("keydown", (event) => {
    const move = ARROW_KEYS[event.key];
    if (!move || !view.shown || event.ctrlKey || event.metaKey || event.altKey) return;
    event.preventDefault();
    event.stopPropagation(); // the arrows move the point here, not the timeline (core/keys.js)
    const { s, grid, marks } = view.shown;
    const cells = event.shiftKey ? 5 : 1;
    const [vx, vy] = marks.current;
    onMove({
      x: tidy(clamp(vx + move[0] * cells * s.dx, grid.xs[0], grid.xs.at(-1)), s.dx),
      y: tidy(clamp(vy + move[1] * cells * s.dy, grid.ys[0], grid.ys.at(-1)), s.dy),
    });
  });
}

/** Draw `grid` and `marks` (see mountLandscape) into the view. */
function drawLandscape(view, grid, marks) {
  const { svg, layers, handle, shown } = view;
  // The contours only when the grid (or an axis's name) changed: the marks move far more often.
  const same = shown && shown.grid === grid && shown.names === marks.names.join("\n");
  const s = same ? shown.s : scalesOf(grid);
  if (!same) {
    layers.bands.replaceChildren();
    layers.axes.replaceChildren();
    Object.assign(svg.dataset, drawBands(layers.bands, grid, s));
    drawAxes(layers.axes, s, marks.names);
  }
  view.shown = { grid, s, marks, names: marks.names.join("\n") };
  layers.marks.replaceChildren();
  drawMarks(layers.marks, handle, s, marks);
  handle.removeAttribute("display");
  describe(view, grid, marks);
  drawLegend(view.legend, marks, Number(svg.dataset.undefinedCells) > 0);
}

/** What the drawing says: the point as a slider in two directions, the grid and marks as data. */
function describe({ svg, handle }, grid, marks) {
  const [vx, vy] = marks.current;
  // A slider in two directions: its number is the first parameter's, its text says both.
  for (const [name, value] of [["aria-valuenow", vx], ["aria-valuemin", grid.xs[0]], ["aria-valuemax", grid.xs.at(-1)]]) handle.setAttribute(name, String(value));
  handle.setAttribute("aria-label", t("ui.landscape.point_label", { x: marks.names[0], y: marks.names[1] }));
  handle.setAttribute("aria-valuetext", t("ui.landscape.point_value", { x: marks.names[0], xv: compactText(vx), y: marks.names[1], yv: compactText(vy), loss: compactText(marks.loss) }));
  svg.setAttribute("aria-label", t("ui.landscape.label", { x: marks.names[0], y: marks.names[1], steps: Math.max(0, marks.path.length - 1) }));
  Object.assign(svg.dataset, {
    parameters: JSON.stringify(grid.parameters), xRange: JSON.stringify([grid.xs[0], grid.xs.at(-1)]),
    yRange: JSON.stringify([grid.ys[0], grid.ys.at(-1)]), points: String(grid.xs.length),
    current: JSON.stringify(marks.current), best: marks.best ? JSON.stringify(marks.best) : "", path: JSON.stringify(marks.path),
    tries: String(marks.tries.length),
  });
}

/**
 * Mount the landscape in `container`; returns `draw(grid, marks)` (grid: the server's reply;
 * marks: {names: [x label, y label], current: [x, y], best: [x, y] | null, tries: [[x, y]],
 * path: [[x, y]] from the best guess through every step, loss: the current root}) and
 * `clear()`. `onMove({x, y})` is called as the learner drags the point or moves it with keys.
 */
export function mountLandscape(container, { onMove }) {
  const view = landscapeElements();
  const { svg, layers, handle, legend } = view;
  container.append(svg, legend);
  listenToMoves(view, onMove);
  return {
    draw: (grid, marks) => drawLandscape(view, grid, marks),
    /** Nothing shown: no grid (yet), or not two parameters. */
    clear() {
      view.shown = null;
      for (const layer of Object.values(layers)) layer.replaceChildren();
      handle.setAttribute("display", "none");
      legend.replaceChildren();
      for (const key of Object.keys(svg.dataset)) if (key !== "testid") delete svg.dataset[key];
    },
    /** Is the point at `point` ([x, y]) inside the grid shown? */
    covers([vx, vy]) {
      if (!view.shown) return false;
      const { xs, ys } = view.shown.grid;
      return vx >= xs[0] && vx <= xs.at(-1) && vy >= ys[0] && vy <= ys.at(-1);
    },
  };
}

function drawLegend(legend, marks, anyUndefined) {
  const items = [legendItem("handle", t("ui.landscape.legend_point"))];
  if (marks.tries.length) items.push(legendItem("tries", t("ui.chart.legend_tries")));
  if (marks.best) items.push(legendItem("guess", t("ui.landscape.legend_guess")));
  if (marks.path.length > 1) items.push(legendItem("path", t("ui.landscape.legend_path")));
  if (anyUndefined) items.push(legendItem("nan", t("ui.landscape.legend_nan")));
  legend.replaceChildren(...items);
}

const clamp = (v, lo, hi) => Math.min(hi, Math.max(lo, v));

/** `v` rounded to a round fraction of `cell` (a hundredth of it, to a power of ten), so a dragged value reads cleanly. */
function tidy(v, cell) {
  const quantum = 10 ** Math.floor(Math.log10(cell / 10));
  return Number((Math.round(v / quantum) * quantum).toPrecision(12));
}
