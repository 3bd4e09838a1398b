// The graph pane: builds the SVG scaffolding (markers, layers), the marks' registry and the
// player that draws each frame, wires pan/zoom/fit, reports the hovered node, and writes the
// pane's and the graph's classes (the only module that does): stale while the program has an
// error, the 3D view shown, many cards, constants folded, the gradient map on.

import { setAttr } from "../core/dom.js";
import { svgElement } from "../core/svg.js";
import { compactLabel, fontSize } from "./geometry.js";
import { mountGroups } from "./group-view.js";
import { createMarks } from "./marks.js";
import { createPlayer } from "../core/player.js";
import { t } from "../core/i18n.js";
import { framesOf } from "../core/frames.js";
import { createZoom } from "./zoom.js";

/** An arrowhead for the edges' `marker-end` (the pane's defs; a notebook's first view's). */
export function arrowMarker(id, { reverse = false } = {}) {
  const marker = svgElement("marker", {
    id,
    viewBox: "0 0 10 10",
    refX: reverse ? "1" : "9",
    refY: "5",
    markerWidth: "7",
    markerHeight: "7",
    markerUnits: "userSpaceOnUse",
    orient: reverse ? "auto-start-reverse" : "auto",
  });
  marker.append(svgElement("path", { d: "M0,0 L10,5 L0,10 z" }, `arrowhead ${id}`));
  return marker;
}

function sameBounds(a, b) {
  return a && b && ["x", "y", "width", "height"].every((k) => Math.abs(a[k] - b[k]) < 0.5);
}

// Below these on-screen font sizes (px) small text, then all text, is hidden: unreadable anyway,
// and painting thousands of tiny glyphs is what makes large graphs slow.
const SMALL_TEXT_MIN_PX = 6;
const TEXT_MIN_PX = 3;
const TYPICAL_FONT = 14;
// Semantic zoom. The reading size: a card's name is never drawn smaller on screen than this (in
// rem, so it grows with the page's type: 10 px at 1280 px wide, 19 px at 3840). Zoomed out past
// it, a card is its name alone, drawn large, and its colour (`data-zoom="far"` on the SVG; the
// numbers, tags and edge labels hide: they would be under 9.5 px); else the full card. Fit never
// shrinks the graph below the scale where even those large names reach the reading size: past
// it, Fit keeps that scale and pans to the step shown.
const READING_REM = 2 / 3;
// …and, on a screen read from afar (a laptop, a projector: FAR_SCREEN_PX wide or more), never
// below READING_MIN_PX: a 1280 px page has a rem of 15 px, and text under 11 px is not read from
// the back of a room (issue 41); a phone, read at arm's length, keeps the rem's 9 to 10 px and
// fits whole graphs. A whole card's smallest words that count, its op badge, reach the reading
// size too, or the card is drawn far (its name alone).
const READING_MIN_PX = 11;
const FAR_SCREEN_PX = 1024;
// Fit zooms in to the reading size of whole cards when the graph then overflows the pane by at
// most this much (a short pan, the step in view); a bigger graph is fitted far out, by its names.
const NEAR_FIT_OVERFLOW = 1.25;

/** The on-screen size of a card's texts per unit of scale (graph units): its op badge (smaller
 *  than its name: `near`), and its name far out. */
function nameSizes(trace) {
  const typical = trace?.nodes.find((n) => n.kind === "op") ?? trace?.nodes[0] ?? { width: 150, height: 64 };
  return { near: fontSize(typical), far: compactLabel("", typical).size };
}

/** The least scale Fit may use for `bounds` in `box`: whole cards at the reading size when the
 *  graph then overflows the pane only a little, else names far out at the reading size. */
function fitMinScale(bounds, box, reading) {
  const near = reading.px / reading.names.near;
  const overflow = Math.max((bounds.width * near) / box.width, (bounds.height * near) / box.height);
  return overflow <= NEAR_FIT_OVERFLOW ? near : reading.px / reading.names.far;
}

/** The step's current node at frame `step` of `trace`, or null. */
function currentNode(trace, step) {
  const frame = framesOf(trace)[step];
  return frame ? trace.steps.at(frame.step)?.node ?? null : null;
}

/** The SVG's defs and layers (the travelling dots in `overlay`, their own compositing layer). */
function graphLayers(svg, overlay) {
  const defs = svgElement("defs");
  defs.append(arrowMarker("arrow-idle"), arrowMarker("arrow-forward"), arrowMarker("arrow-backward", { reverse: true }));
  const viewport = svgElement("g", {}, "viewport");
  const layers = {
    edges: svgElement("g", {}, "layer-edges"),
    edgeHits: svgElement("g", {}, "layer-edge-hits"), // wide, focusable twins of the edges
    pulses: svgElement("g", {}, "layer-pulses"),
    nodes: svgElement("g", {}, "layer-nodes"),
    labels: svgElement("g", {}, "layer-labels"),
  };
  viewport.append(layers.edges, layers.edgeHits, layers.nodes, layers.labels);
  svg.append(defs, viewport);
  // The travelling dots live in their own SVG (its own compositing layer), so animating them
  // does not repaint every card.
  const overlayViewport = svgElement("g", {}, "viewport");
  overlayViewport.append(layers.pulses);
  overlay.append(overlayViewport);
  return { layers, viewports: [viewport, overlayViewport] };
}

/** Pan and zoom, telling the SVG how small its text is now (`data-lod`, `data-zoom`: semantic zoom). */
function paneZoom(svg, viewports, reading, wheelZooms) {
  return createZoom(svg, viewports, (k) => {
    const px = TYPICAL_FONT * k;
    const lod = px < TEXT_MIN_PX ? "2" : px < SMALL_TEXT_MIN_PX ? "1" : "0";
    if (svg.dataset.lod !== lod) svg.dataset.lod = lod;
    const level = k * reading.names.near < reading.px - 0.01 ? "far" : "near";
    if (svg.dataset.zoom !== level) svg.dataset.zoom = level;
  }, { wheelZooms });
}

/**
 * Fit the drawing into the pane (never below the reading size: then the step shown is in view),
 * and keep a fitted view fitted when the pane changes size; the user's own pan or zoom stays.
 */
function createFit({ wrap, zoom, groups, reading, state }) {
  let fitted = { bounds: null, transform: null };
  // The overview's cards are few and large: Fit shows them all, the pane's whole size counted
  // (the part of it scrolled into the window may be small).
  const wholeScale = (trace, bounds) => (groups.fitsWhole(trace)
    ? Math.min(wrap.clientWidth / bounds.width, wrap.clientHeight / bounds.height) * 0.8
    : Infinity);
  function fit() {
    const trace = state.trace;
    if (!trace) return;
    const bounds = groups.bounds(trace);
    const rem = parseFloat(getComputedStyle(document.documentElement).fontSize) || 16;
    // The zoom buttons and the legend sit over the pane's top and bottom edges: fit between them.
    const clear = (selector) => (wrap.querySelector(selector)?.offsetHeight ?? 0) + rem;
    const floor = window.innerWidth >= FAR_SCREEN_PX ? READING_MIN_PX : 0;
    Object.assign(reading, { px: Math.max(floor, READING_REM * rem), names: nameSizes(trace) });
    const card = groups.cardOf(currentNode(trace, state.step));
    zoom.fit(bounds, 1.6 * (rem / 16), { top: clear(".pane-tools, .graph-tools"), bottom: clear(".legend") },
      { minScale: Math.min(wholeScale(trace, bounds), fitMinScale(bounds, zoom.visibleBox(), reading)), focus: card });
    fitted = { bounds, transform: JSON.stringify(zoom.transform) };
  }
  // The graph area changes size when panels, labs or the error box change height, or the
  // window does: keep a fitted view fitted, but never undo the user's own pan or zoom.
  new ResizeObserver(() => {
    if (fitted.transform !== null && JSON.stringify(zoom.transform) === fitted.transform) fit();
  }).observe(wrap);
  return { fit, fittedBounds: () => fitted.bounds };
}

/**
 * `inView()`: a test of node ids, whether the card showing one (its own, its collapsed
 * statement's) overlaps the pane at the view of the moment, with half a pane of margin. The
 * pane's size comes from a ResizeObserver: asking the SVG in the middle of a draw would lay out
 * the page there and then. Before the first size every card counts as in view. No card counts
 * while the pane is scrolled out of the window (an IntersectionObserver says), nor while the
 * view is too small for any text (`data-lod` 2: a card's numbers, the only thing a slider move
 * changes on it, are not drawn then).
 */
function cardsInView(svg, zoom, groups) {
  const pane = { width: 0, height: 0, onScreen: true };
  new ResizeObserver(([entry]) => {
    pane.width = entry.contentRect.width;
    pane.height = entry.contentRect.height;
  }).observe(svg);
  new IntersectionObserver((entries) => {
    pane.onScreen = entries.at(-1).isIntersecting;
  }).observe(svg);
  return () => {
    if (!pane.onScreen || svg.dataset.lod === "2") return () => false;
    if (!pane.width || !pane.height) return () => true;
    const { x, y, k } = zoom.transform;
    const [left, right] = [(-x - pane.width / 2) / k, (pane.width * 1.5 - x) / k];
    const [top, bottom] = [(-y - pane.height / 2) / k, (pane.height * 1.5 - y) / k];
    return (id) => {
      const box = groups.cardOf(id);
      if (!box) return true;
      return box.x + box.width / 2 >= left && box.x - box.width / 2 <= right
        && box.y + box.height / 2 >= top && box.y - box.height / 2 <= bottom;
    };
  };
}

/** The pane's and the graph's classes, from the state (their one writer). */
function writeClasses(svg, wrap, s) {
  wrap.classList.toggle("stale", Boolean(s.error) && Boolean(s.trace ?? s.tensor)); // a tensor program's too (tensor/view.js)
  wrap.classList.toggle("view-3d", s.view3d);
  svg.classList.toggle("many", (s.trace?.nodes.length ?? 0) > 150);
  svg.classList.toggle("fold-constants", s.foldConstants);
  svg.classList.toggle("gradmap", s.gradMap);
}

const CLASS_KEYS = ["error", "trace", "view3d", "foldConstants", "gradMap"];

/**
 * The graph pane on its elements, for `scope` (whose `graph` it becomes). `wheelZooms(event)`:
 * whether the wheel zooms the graph (the page: always; an embedded player: once it has the focus,
 * so a page scrolls past it). `collapseAt`: graphs of at least this many nodes open with their
 * statements collapsed (graph/groups.js COLLAPSE_AT_NODES unless the page's URL says otherwise).
 * Returns {svg, wrap, player, zoom, marks, fit, onFit, bounds(trace), cardOf(id)}.
 */
export function mountGraph({ svg, overlay, wrap, fitButton, zoomIn, zoomOut, wheelZooms, collapseAt }, scope) {
  const { state, subscribe, update } = scope.store;
  const { layers, viewports } = graphLayers(svg, overlay);
  const reading = { px: READING_MIN_PX, names: nameSizes(null) }; // refreshed by each fit (type size, trace)
  const zoom = paneZoom(svg, viewports, reading, wheelZooms);
  const groups = mountGroups({ svg, layers, tools: wrap, threshold: collapseAt, onArrangedAll: () => fitted.fit() }, scope);
  const marks = createMarks(layers);
  const player = createPlayer(layers, marks, { draw: groups.draw, drawKeys: groups.drawKeys, inView: cardsInView(svg, zoom, groups), drawsWhole: groups.fitsWhole }, scope);
  groups.attach(player);
  const fitted = createFit({ wrap, zoom, groups, reading, state });
  const onFit = []; // other views of the graph fitted with it (the 3D view)
  const fit = () => {
    fitted.fit();
    for (const listener of onFit) listener();
  };
  fitButton.addEventListener("click", fit);
  zoomIn.addEventListener("click", () => zoom.zoomBy(1.25));
  zoomOut.addEventListener("click", () => zoom.zoomBy(0.8));

  layers.nodes.addEventListener("pointerover", (event) => {
    const node = event.target.closest?.("[data-node-id]");
    update({ hoverNode: node ? node.getAttribute("data-node-id") : null });
  });
  layers.nodes.addEventListener("pointerleave", () => update({ hoverNode: null }));

  wrap.dataset.stale = t("ui.graph.stale"); // app.css writes it over a stale graph
  subscribe((s, changed) => {
    if (CLASS_KEYS.some((key) => changed.has(key))) writeClasses(svg, wrap, s);
    if (changed.has("trace") && s.trace) {
      // Values-only updates keep the view; a different shape of graph is refitted.
      if (!sameBounds(groups.bounds(s.trace), fitted.fittedBounds())) fitted.fit();
      setAttr(svg, "data-ready", "true");
      setAttr(svg, "aria-label", t("ui.graph.label_count", { count: s.trace.nodes.length }));
    }
  });

  scope.graph = {
    svg, wrap, player, zoom, marks,
    /** Fit the graph to the pane (the Fit button, a change of the page's layout). */
    fit,
    /** Call `listener` after each fit (the 3D view fits its camera). */
    onFit: (listener) => onFit.push(listener),
    // Where the cards are drawn now (statements collapsed or not): the extent of the drawing and
    // the box (graph coordinates, centred) of the card that shows node `id`.
    bounds: (trace) => groups.bounds(trace),
    cardOf: (id) => groups.cardOf(id),
  };
  return scope.graph;
}
