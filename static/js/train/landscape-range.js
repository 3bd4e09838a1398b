// The Train lab's loss landscape, shown when exactly two parameters are ticked: the root over a
// grid of their values around the current point (the server's POST /api/landscape, every value
// a forward pass of the engine), drawn as contours (train/landscape.js) with the tries, the best guess
// and the descent path on it. A grid is asked for when the function changes (another program,
// other parameters, a data leaf moved) or when a point to show leaves the grid's range, never
// while the point moves inside it: dragging costs no request but the graph's own.

import { h } from "../core/dom.js";
import { t } from "../core/i18n.js";
import { mountLandscape } from "./landscape.js";
import { niceTicks } from "./loss-chart.js";

const POINTS = 41; // a side
// The server's default bound on points² × nodes (docs/api.md, landscape_max_node_points): a
// big graph asks for a coarser grid rather than for a refusal.
const MAX_NODE_POINTS = 400_000;
const MIN_REACH = 3; // an axis spans at least ±3 around its centre

/** Grid points a side for a graph of `nodeCount` nodes: 41, fewer when the work bound says so. */
export function pointsFor(nodeCount) {
  return Math.max(5, Math.min(POINTS, Math.floor(Math.sqrt(MAX_NODE_POINTS / Math.max(1, nodeCount)))));
}

/**
 * One axis's range around `values`: centred on them, ±max(3, |centre|, 0.65 × their spread)
 * times `zoom` (below 1: closer in), with round ends.
 */
function axisAround(values, zoom) {
  const [lo, hi] = [Math.min(...values), Math.max(...values)];
  const centre = (lo + hi) / 2;
  const reach = zoom * Math.max(MIN_REACH, Math.abs(centre), 0.65 * (hi - lo));
  const ticks = niceTicks(centre - reach, centre + reach, 6);
  const step = ticks.length > 1 ? ticks[1] - ticks[0] : reach;
  const round = (v) => Number(v.toPrecision(12));
  return [round(Math.floor((centre - reach) / step) * step), round(Math.ceil((centre + reach) / step) * step)];
}

/** The ranges ({x: [lo, hi], y: [lo, hi]}) of a grid holding every point of `points` ([[x, y]]), `zoom` as above. */
export function rangeAround(points, zoom = 1) {
  return { x: axisAround(points.map(([x]) => x), zoom), y: axisAround(points.map(([, y]) => y), zoom) };
}

const inside = (range, [x, y]) => x >= range.x[0] && x <= range.x[1] && y >= range.y[0] && y <= range.y[1];

/** The section's elements, its plot, and what it has asked for and shows. */
function landscapeParts(onMove) {
  const title = h("h4", { class: "landscape-title" });
  const hint = h("p", { class: "lab-hint landscape-hint" });
  const message = h("p", { class: "train-message landscape-message", "data-testid": "landscape-message", role: "status" });
  const figure = h("div", { class: "landscape-figure" });
  const zoomIn = h("button", { type: "button", text: t("ui.landscape.zoom_in"), "data-testid": "landscape-zoom-in" });
  const zoomOut = h("button", { type: "button", text: t("ui.landscape.zoom_out"), "data-testid": "landscape-zoom-out" });
  const tools = h("div", { class: "landscape-tools" }, zoomIn, zoomOut);
  const element = h("div", { class: "train-landscape", "data-testid": "train-landscape" }, title, hint, figure, tools, message);
  const plot = mountLandscape(figure, { onMove });
  plot.clear();
  return {
    title, hint, message, figure, zoomIn, zoomOut, tools, element, plot,
    asked: null, // {key, range}: the grid shown or on its way
    grid: null, // the grid shown, for asked.key
    latest: null, // the last view, drawn when a grid arrives
    requests: 0,
    // Zoomed in (below 1), the grid is around the current point alone, so the marks it must hold
    // do not pull it back out; zoom 1 holds the best guess and the whole path too.
    zoom: 1,
    refit: false, // the zoom changed: a new range, the grid shown kept meanwhile
  };
}

/** Ask `scope`'s server for the grid of `view` over `range`; the newest request wins. */
async function fetchGrid(scope, parts, view, key, range) {
  const id = (parts.requests += 1);
  parts.asked = { key, range };
  try {
    const reply = await scope.server.landscape({
      source: view.source, values: view.values, parameters: view.params,
      x_range: range.x, y_range: range.y, points: pointsFor(view.nodeCount),
    });
    if (id !== parts.requests) return;
    parts.grid = reply;
    parts.message.textContent = "";
    drawGrid(parts);
  } catch (err) {
    if (id !== parts.requests) return;
    parts.grid = null;
    parts.plot.clear();
    parts.message.textContent = err.detail?.message ?? String(err);
  }
}

function drawGrid({ grid, latest, plot }) {
  if (!grid || !latest) return;
  const { names, current, best, tries, path, loss } = latest;
  plot.draw(grid, { names, current, best, tries, path, loss });
}

/** Show `view` (see landscapeSection): a new grid asked for when the old one no longer serves. */
function showView(scope, parts, view) {
  parts.latest = view;
  const two = view.on && view.params.length === 2 && scope.server?.landscape;
  parts.element.hidden = !view.on;
  parts.figure.hidden = !two;
  parts.tools.hidden = !two;
  parts.title.textContent = two ? t("ui.landscape.title", { x: view.names[0], y: view.names[1] }) : t("ui.landscape.title_none");
  parts.hint.textContent = two ? t("ui.landscape.hint") : t("ui.landscape.need_two");
  if (!two) {
    parts.requests += 1; // a reply on its way is for a landscape no longer asked for
    [parts.asked, parts.grid] = [null, null];
    parts.message.textContent = "";
    parts.plot.clear();
    return;
  }
  const { asked } = parts;
  const fixed = Object.entries(view.values).filter(([name]) => !view.params.includes(name));
  const key = JSON.stringify([view.source, view.params, fixed, pointsFor(view.nodeCount)]);
  const needed = (parts.zoom < 1 ? [view.current] : [view.current, view.best, ...view.path]).filter((p) => p && p.every(Number.isFinite));
  if (!asked || asked.key !== key || parts.refit || !needed.every((p) => inside(asked.range, p))) {
    parts.refit = false;
    if (asked?.key !== key) {
      parts.grid = null;
      parts.plot.clear();
    }
    fetchGrid(scope, parts, view, key, rangeAround(needed.length ? needed : [[0, 0]], parts.zoom));
  }
  drawGrid(parts);
}

/**
 * The landscape's part of the Train card on `scope` (its server's `landscape` endpoint).
 * `onMove({x, y})`: the learner moved the point. Returns {element, show(view)}; view: {on,
 * params, names, source, values (every leaf), nodeCount, current, best, tries, path, loss}
 * (points as [x, y] in the parameters' order).
 */
export function landscapeSection(scope, { onMove }) {
  const parts = landscapeParts(onMove);
  const show = (view) => showView(scope, parts, view);
  const rezoom = (factor) => {
    parts.zoom = Math.min(4, Math.max(1 / 64, parts.zoom * factor));
    parts.refit = true;
    if (parts.latest) show(parts.latest);
  };
  parts.zoomIn.addEventListener("click", () => rezoom(0.5));
  parts.zoomOut.addEventListener("click", () => rezoom(2));
  return { element: parts.element, show };
}
