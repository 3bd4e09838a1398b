// The minimap: while the graph is larger than the pane, a corner of the pane shows the whole graph
// small (one box per card on a canvas, never the cards themselves), the part on screen as a
// rectangle, and the pulse (the node being visited) as a dot. Pressing or dragging on it moves the
// view there, which takes control from follow (the move is reported to graph/zoom.js as "minimap").
//
// A mark (graph/marks.js) whose layer is its own corner of the pane: its elements are this module's
// alone. It reads where the cards are drawn (the trace's layout, or a collapsed statement's card:
// graph/view.js bounds and cardOf), the pane's measurements (graph/pane-metrics.js) and, with the
// gradient map on, the map's buckets at the frame (gradients/gradmap.js gradBuckets).

import { gradBuckets } from "../gradients/gradmap.js";
import { t } from "../core/i18n.js";
import { activeAt, traceIndex } from "../core/frames.js";
import { sameDrawing } from "../compute/merge-numbers.js";

const MAX_WIDTH_REM = 13;
const MAX_HEIGHT_REM = 8;
const MIN_SIDE_REM = 3;
const SLACK_PX = 2; // a graph overflowing the pane by less than this still counts as fitting
// Where it sits in the pane (real-size.css .minimap: right, bottom, border), for its box.
const INSET_RIGHT_REM = 0.9;
const INSET_BOTTOM_REM = 0.7;
const BORDER_PX = 1;

function element(tag, className, testid) {
  const el = document.createElement(tag);
  el.className = className;
  if (testid) el.dataset.testid = testid;
  return el;
}

/** How graph coordinates map into the minimap for `bounds` (the drawing's extent): {x0, y0, scale, width, height, bounds} (CSS px). */
function measure(bounds, { rem, width: paneWidth }) {
  const width = Math.min(MAX_WIDTH_REM * rem, paneWidth * 0.3);
  const scale = Math.min(width / bounds.width, (MAX_HEIGHT_REM * rem) / bounds.height);
  // A long thin graph sits in the middle of a minimap of the least height (or width).
  const least = MIN_SIDE_REM * rem;
  const [boxWidth, boxHeight] = [Math.max(least, bounds.width * scale), Math.max(least, bounds.height * scale)];
  return {
    x0: bounds.x - (boxWidth / scale - bounds.width) / 2,
    y0: bounds.y - (boxHeight / scale - bounds.height) / 2,
    scale,
    width: boxWidth,
    height: boxHeight,
    bounds,
  };
}

/** Is some of the drawing (`bounds`) outside the visible part of the pane (`box`) in view `t`? */
function overflowing(bounds, { x, y, k }, box) {
  return bounds.x * k + x < box.x - SLACK_PX || (bounds.x + bounds.width) * k + x > box.x + box.width + SLACK_PX
    || bounds.y * k + y < box.y - SLACK_PX || (bounds.y + bounds.height) * k + y > box.y + box.height + SLACK_PX;
}

/** The minimap's elements, in `wrap`'s corner. */
function minimapElements(wrap) {
  const root = element("div", "minimap", "minimap");
  root.hidden = true;
  root.setAttribute("aria-hidden", "true"); // a pointer shortcut: the graph itself is the content
  root.title = t("ui.minimap.title");
  const canvas = element("canvas", "minimap-boxes");
  const view = element("div", "minimap-view", "minimap-view");
  const pulse = element("div", "minimap-pulse", "minimap-pulse");
  root.append(canvas, view, pulse);
  wrap.append(root);
  return { root, canvas, view, pulse };
}

/** The boxes' fills: the plain one and the gradient map's, read from the style sheet (the theme's). */
function createFills(root) {
  let colours = null; // {plain, [bucket]: fill}
  return {
    forget() {
      colours = null;
    },
    of(bucket) {
      colours ??= { plain: getComputedStyle(root).getPropertyValue("--minimap-box").trim() || "#888" };
      if (!bucket) return colours.plain;
      colours[bucket] ??= getComputedStyle(root).getPropertyValue(`--gm-${bucket}`).trim() || colours.plain;
      return colours[bucket];
    },
  };
}

/**
 * One box per card drawn into `canvas`: a collapsed statement's card once, in its root's colour
 * (its last node: the trace lists a statement's nodes in the order they are computed).
 */
function paintBoxes(canvas, frame, trace, cardOf, fill) {
  const ratio = window.devicePixelRatio || 1;
  const [w, h] = [Math.round(frame.width * ratio), Math.round(frame.height * ratio)];
  if (canvas.width !== w || canvas.height !== h) [canvas.width, canvas.height] = [w, h];
  canvas.style.width = `${frame.width}px`;
  canvas.style.height = `${frame.height}px`;
  const ctx = canvas.getContext("2d");
  ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
  ctx.clearRect(0, 0, frame.width, frame.height);
  const cards = new Map(); // box → the node whose colour it takes
  for (const node of trace.nodes) cards.set(cardOf(node.id) ?? node, node.id);
  for (const [box, id] of cards) {
    ctx.fillStyle = fill(id);
    const x = (box.x - box.width / 2 - frame.x0) * frame.scale;
    const y = (box.y - box.height / 2 - frame.y0) * frame.scale;
    ctx.fillRect(x, y, Math.max(1, box.width * frame.scale), Math.max(1, box.height * frame.scale));
  }
}

/** The visible part of the pane (`box`, in view `t`) as a rectangle in the minimap. */
function placeView(view, frame, { x, y, k }, box) {
  const s = frame.scale;
  const clip = (v, max) => Math.min(max, Math.max(0, v));
  const left = clip(((box.x - x) / k - frame.x0) * s, frame.width);
  const top = clip(((box.y - y) / k - frame.y0) * s, frame.height);
  const right = clip(((box.x + box.width - x) / k - frame.x0) * s, frame.width);
  const bottom = clip(((box.y + box.height - y) / k - frame.y0) * s, frame.height);
  view.style.transform = `translate(${left}px, ${top}px)`;
  view.style.width = `${Math.max(2, right - left)}px`;
  view.style.height = `${Math.max(2, bottom - top)}px`;
}

/** Press or drag on the minimap: the view centres there; grabbing the rectangle keeps where it was grabbed. */
function listenToPresses(parts, zoom, metrics, currentFrame) {
  const { root, canvas, view } = parts;
  let grab = null;
  const moveTo = (event) => {
    const frame = currentFrame();
    const bounds = canvas.getBoundingClientRect();
    const gx = (event.clientX - bounds.left - grab.dx) / frame.scale + frame.x0;
    const gy = (event.clientY - bounds.top - grab.dy) / frame.scale + frame.y0;
    const { k } = zoom.transform;
    const { box } = metrics();
    zoom.set({ x: box.x + box.width / 2 - gx * k, y: box.y + box.height / 2 - gy * k, k }, "minimap");
  };
  root.addEventListener("pointerdown", (event) => {
    if (event.button !== 0 || !currentFrame()) return;
    event.preventDefault();
    const rect = view.getBoundingClientRect();
    const onView = event.clientX >= rect.left && event.clientX <= rect.right && event.clientY >= rect.top && event.clientY <= rect.bottom;
    grab = {
      id: event.pointerId,
      dx: onView ? event.clientX - (rect.left + rect.right) / 2 : 0,
      dy: onView ? event.clientY - (rect.top + rect.bottom) / 2 : 0,
    };
    root.setPointerCapture(event.pointerId);
    root.classList.add("dragging");
    if (!onView) moveTo(event);
  });
  root.addEventListener("pointermove", (event) => {
    if (grab && grab.id === event.pointerId) moveTo(event);
  });
  const release = (event) => {
    if (!grab || grab.id !== event.pointerId) return;
    grab = null;
    root.classList.remove("dragging");
  };
  root.addEventListener("pointerup", release);
  root.addEventListener("pointercancel", release);
}

/**
 * The minimap of `graph`'s pane (graph/view.js: wrap, zoom, bounds, cardOf); `metrics()`: the
 * pane's measurements; `state`: its scope's state.
 */
class Minimap {
  constructor(graph, metrics, state) {
    Object.assign(this, { graph, metrics, state });
    this.parts = minimapElements(graph.wrap);
    this.fills = createFills(this.parts.root);
    this.frame = null; // the mapping of graph coordinates into the minimap (measure)
    this.paintQueued = false;
    this.boxesStale = true;
    this.listen();
  }

  listen() {
    const { graph, metrics } = this;
    // The view moves often (a drag, a follow glide): the rectangle follows at once, the boxes stay.
    graph.zoom.onChange(() => {
      if (!this.state.trace) return;
      if (this.parts.root.hidden || !this.frame || !overflowing(this.frame.bounds, graph.zoom.transform, metrics().box)) this.queue();
      else this.placeMarks();
    });
    new ResizeObserver(() => this.queue({ boxes: true })).observe(graph.wrap);
    // The theme changes the boxes' colours (the attribute on <html>, the system's preference).
    const recolour = () => {
      this.fills.forget();
      this.queue({ boxes: true });
    };
    new MutationObserver(recolour).observe(document.documentElement, { attributes: true, attributeFilter: ["data-theme"] });
    window.matchMedia?.("(prefers-color-scheme: dark)").addEventListener?.("change", recolour);
    listenToPresses(this.parts, graph.zoom, metrics, () => this.frame);
  }

  /** The visible part of the pane as a rectangle in the minimap, and the pulse's dot. */
  placeMarks() {
    const { frame, parts, state, graph } = this;
    if (!frame || parts.root.hidden) return;
    placeView(parts.view, frame, graph.zoom.transform, this.metrics().box);
    const current = state.trace ? activeAt(state.trace, state.step)?.node : null;
    const node = current && (graph.cardOf(current) ?? traceIndex(state.trace).nodeById.get(current));
    if (parts.pulse.hidden !== !node) parts.pulse.hidden = !node;
    if (node) parts.pulse.style.transform = `translate(${(node.x - frame.x0) * frame.scale}px, ${(node.y - frame.y0) * frame.scale}px)`;
  }

  /** The room the minimap takes at the pane's bottom edge (real-size.css keeps the legend out of
   * it, so a long legend, the gradient map's in Russian, wraps instead of running under it). */
  claimRoom(width) {
    const { wrap } = this.graph;
    const room = width ? `calc(${width}px + 1rem)` : "0px";
    if (wrap.style.getPropertyValue("--minimap-room") !== room) wrap.style.setProperty("--minimap-room", room);
  }

  /** A box's fill: the gradient map's colour of node `id` while the map is on, else the plain one. */
  fillOf(id) {
    const { state } = this;
    const buckets = state.gradMap ? gradBuckets(state.trace, state.step, { finalGrads: state.finalGrads }).buckets : null;
    return this.fills.of(buckets?.get(id)?.bucket);
  }

  /** Show or hide the minimap for the view now, repainting its boxes if they are stale. */
  refresh() {
    const { state, parts, graph } = this;
    const trace = state.trace;
    if (trace?.nodes.length) this.frame = measure(graph.bounds(trace), this.metrics());
    const show = Boolean(trace?.nodes.length) && overflowing(this.frame.bounds, graph.zoom.transform, this.metrics().box);
    if (parts.root.hidden === show) parts.root.hidden = !show;
    this.claimRoom(show ? this.frame.width + 2 * BORDER_PX : 0);
    if (!show) return;
    parts.root.style.width = `${this.frame.width + 2 * BORDER_PX}px`;
    parts.root.style.height = `${this.frame.height + 2 * BORDER_PX}px`;
    if (this.boxesStale) {
      paintBoxes(parts.canvas, this.frame, trace, graph.cardOf, (id) => this.fillOf(id));
      this.boxesStale = false;
    }
    this.placeMarks();
  }

  /** Refresh at the next frame (several changes in one frame are drawn once). */
  queue({ boxes = false } = {}) {
    if (boxes) this.boxesStale = true;
    if (this.paintQueued) return;
    this.paintQueued = true;
    requestAnimationFrame(() => this.flush());
  }

  /** The queued refresh, now: once, whether the frame or box() asks first. */
  flush() {
    if (!this.paintQueued) return;
    this.paintQueued = false;
    this.refresh();
  }

  /** The minimap's box in the pane's pixels (the SVG's local ones), or null while hidden: as the
   *  frame being drawn shows it (a new program's minimap, queued, is refreshed now, so that the
   *  view follow chooses in this frame keeps the current card clear of it). */
  box() {
    this.flush();
    const { frame } = this;
    if (this.parts.root.hidden || !frame) return null;
    const { width, height, rem } = this.metrics();
    const right = width - INSET_RIGHT_REM * rem;
    const bottom = height - INSET_BOTTOM_REM * rem;
    return { left: right - frame.width - 2 * BORDER_PX, top: bottom - frame.height - 2 * BORDER_PX, right, bottom };
  }

  /** The frame drawn: the boxes follow the drawing, and frame by frame the gradient map's colours. */
  render({ changedKeys: changed, state: s, arranged, trace }) {
    if (changed?.has("presenting")) this.fills.forget();
    // New numbers of the same drawing (a slider move) colour the boxes only on the gradient map.
    const redrawn = changed?.has("trace") && (s.gradMap || !sameDrawing(this.drawn, trace));
    this.drawn = trace;
    const boxes = !changed || arranged || redrawn || ["gradMap", "presenting"].some((key) => changed.has(key)) || (s.gradMap && changed.has("step"));
    if (boxes) this.queue({ boxes: true });
    else this.placeMarks();
    return null;
  }
}

/**
 * The minimap of `graph`'s pane, as a mark; `metrics()`: the pane's measurements. Returns
 * {mark, box()}: box() is the minimap's box in the pane's pixels, or null while hidden.
 */
export function minimapMark({ graph, metrics }, scope) {
  const minimap = new Minimap(graph, metrics, scope.store.state);
  return {
    mark: { name: "minimap", keys: ["gradMap", "presenting"], render: (frame) => minimap.render(frame) },
    box: () => minimap.box(),
  };
}
