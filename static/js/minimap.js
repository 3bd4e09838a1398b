// The minimap: while the graph is larger than the pane, a corner of the pane shows the whole graph
// small (one box per card on a canvas, never the cards themselves), the part on screen as a
// rectangle, and the pulse (the node being visited) as a dot. Pressing or dragging on it moves the
// view there, which takes control from follow (the move is reported to zoom.js as "minimap").
//
// The minimap's elements are this module's alone. It reads where the cards are drawn (the
// trace's layout, or a collapsed statement's card: graph-view.js bounds and cardOf), the pane's
// measurements (real-size.js) and, with the gradient map on, its buckets.

import { graphBounds } from "./graph-view.js";
import { t } from "./i18n.js";
import { state, subscribe } from "./state.js";
import { playIndex, traceIndex } from "./timeline.js";

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

/** Where the cards are when nothing says otherwise: every node at its place in the layout. */
const EVERY_NODE = { bounds: graphBounds, cardOf: () => null };

/**
 * `wrap`: the graph pane (the minimap goes in its corner); `zoom`: its view; `metrics()`: the
 * pane's measurements; `buckets()`: the gradient map's Map node id → bucket, or null while off;
 * `drawn`: {bounds(trace), cardOf(id)}, the extent of the drawing and the box of the card drawn
 * for a node (graph-view.js). Returns {box(), redraw()} (redraw: the cards moved).
 */
export function mountMinimap({ wrap, zoom, metrics, buckets = () => null, drawn = EVERY_NODE }) {
  const root = element("div", "minimap", "minimap");
  root.hidden = true;
  root.setAttribute("aria-hidden", "true"); // a pointer shortcut: the graph itself is the content
  root.title = t("ui.minimap.title");
  const canvas = element("canvas", "minimap-boxes");
  const view = element("div", "minimap-view", "minimap-view");
  const pulse = element("div", "minimap-pulse", "minimap-pulse");
  root.append(canvas, view, pulse);
  wrap.append(root);

  // How graph coordinates map into the minimap: {x0, y0, scale, width, height, bounds} (CSS px).
  let frame = null;
  let colours = null; // {plain, [bucket]: fill}, read from the style sheet when the theme changes
  let paintQueued = false;
  let boxesStale = true;

  function measure(trace) {
    const bounds = drawn.bounds(trace);
    const { rem, width: paneWidth } = metrics();
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

  /** Is some of the graph outside the visible part of the pane? */
  function overflowing(bounds) {
    const { x, y, k } = zoom.transform;
    const { box } = metrics();
    return bounds.x * k + x < box.x - SLACK_PX || (bounds.x + bounds.width) * k + x > box.x + box.width + SLACK_PX
      || bounds.y * k + y < box.y - SLACK_PX || (bounds.y + bounds.height) * k + y > box.y + box.height + SLACK_PX;
  }

  function fillOf(bucket) {
    colours ??= { plain: getComputedStyle(root).getPropertyValue("--minimap-box").trim() || "#888" };
    if (!bucket) return colours.plain;
    colours[bucket] ??= getComputedStyle(root).getPropertyValue(`--gm-${bucket}`).trim() || colours.plain;
    return colours[bucket];
  }

  function paintBoxes(trace) {
    const ratio = window.devicePixelRatio || 1;
    const [w, h] = [Math.round(frame.width * ratio), Math.round(frame.height * ratio)];
    if (canvas.width !== w || canvas.height !== h) [canvas.width, canvas.height] = [w, h];
    canvas.style.width = `${frame.width}px`;
    canvas.style.height = `${frame.height}px`;
    const ctx = canvas.getContext("2d");
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.clearRect(0, 0, frame.width, frame.height);
    const shown = buckets();
    // One box per card drawn: a collapsed statement's card once, in its root's colour (its last
    // node: the trace lists a statement's nodes in the order they are computed).
    const cards = new Map(); // box → the node whose colour it takes
    for (const node of trace.nodes) cards.set(drawn.cardOf(node.id) ?? node, node.id);
    for (const [box, id] of cards) {
      ctx.fillStyle = fillOf(shown?.get(id));
      const x = (box.x - box.width / 2 - frame.x0) * frame.scale;
      const y = (box.y - box.height / 2 - frame.y0) * frame.scale;
      ctx.fillRect(x, y, Math.max(1, box.width * frame.scale), Math.max(1, box.height * frame.scale));
    }
  }

  /** The visible part of the pane as a rectangle in the minimap, and the pulse's dot. */
  function placeMarks() {
    if (!frame || root.hidden) return;
    const { x, y, k } = zoom.transform;
    const { box } = metrics();
    const s = frame.scale;
    const clip = (v, max) => Math.min(max, Math.max(0, v));
    const left = clip(((box.x - x) / k - frame.x0) * s, frame.width);
    const top = clip(((box.y - y) / k - frame.y0) * s, frame.height);
    const right = clip(((box.x + box.width - x) / k - frame.x0) * s, frame.width);
    const bottom = clip(((box.y + box.height - y) / k - frame.y0) * s, frame.height);
    view.style.transform = `translate(${left}px, ${top}px)`;
    view.style.width = `${Math.max(2, right - left)}px`;
    view.style.height = `${Math.max(2, bottom - top)}px`;
    const current = state.trace ? playIndex(state.trace).active[state.step]?.node : null;
    const node = current && (drawn.cardOf(current) ?? traceIndex(state.trace).nodeById.get(current));
    if (pulse.hidden !== !node) pulse.hidden = !node;
    if (node) pulse.style.transform = `translate(${(node.x - frame.x0) * s}px, ${(node.y - frame.y0) * s}px)`;
  }

  /** The room the minimap takes at the pane's bottom edge (real-size.css keeps the legend out of
   * it, so a long legend, the gradient map's in Russian, wraps instead of running under it). */
  function claimRoom(width) {
    const room = width ? `calc(${width}px + 1rem)` : "0px";
    if (wrap.style.getPropertyValue("--minimap-room") !== room) wrap.style.setProperty("--minimap-room", room);
  }

  /** Show or hide the minimap for the view now, repainting its boxes if they are stale. */
  function refresh() {
    const trace = state.trace;
    if (!trace || trace.nodes.length === 0) {
      root.hidden = true;
      claimRoom(0);
      return;
    }
    frame = measure(trace);
    const show = overflowing(frame.bounds);
    if (root.hidden === show) root.hidden = !show;
    claimRoom(show ? frame.width + 2 * BORDER_PX : 0);
    if (!show) return;
    root.style.width = `${frame.width + 2 * BORDER_PX}px`;
    root.style.height = `${frame.height + 2 * BORDER_PX}px`;
    if (boxesStale) {
      paintBoxes(trace);
      boxesStale = false;
    }
    placeMarks();
  }

  /** Refresh at the next frame (several changes in one frame are drawn once). */
  function queue({ boxes = false } = {}) {
    if (boxes) boxesStale = true;
    if (paintQueued) return;
    paintQueued = true;
    requestAnimationFrame(() => {
      paintQueued = false;
      refresh();
    });
  }

  // The view moves often (a drag, a follow glide): the rectangle follows at once, the boxes stay.
  zoom.onChange(() => {
    if (!state.trace) return;
    if (root.hidden || !frame || !overflowing(frame.bounds)) queue();
    else placeMarks();
  });
  new ResizeObserver(() => queue({ boxes: true })).observe(wrap);
  subscribe((s, changed) => {
    if (changed.has("trace") || changed.has("gradMap")) queue({ boxes: true });
    else if (changed.has("step")) {
      if (s.gradMap) queue({ boxes: true }); // the boxes' colours are the gradient map's, frame by frame
      else placeMarks();
    }
    if (changed.has("presenting")) {
      colours = null;
      queue({ boxes: true });
    }
  });
  // The theme changes the boxes' colours (the attribute on <html>, the system's preference).
  const recolour = () => {
    colours = null;
    queue({ boxes: true });
  };
  new MutationObserver(recolour).observe(document.documentElement, { attributes: true, attributeFilter: ["data-theme"] });
  window.matchMedia?.("(prefers-color-scheme: dark)").addEventListener?.("change", recolour);

  // Press or drag: the view centres there; grabbing the rectangle keeps where it was grabbed.
  let grab = null;
  const moveTo = (event) => {
    const bounds = canvas.getBoundingClientRect();
    const gx = (event.clientX - bounds.left - grab.dx) / frame.scale + frame.x0;
    const gy = (event.clientY - bounds.top - grab.dy) / frame.scale + frame.y0;
    const { k } = zoom.transform;
    const { box } = metrics();
    zoom.set({ x: box.x + box.width / 2 - gx * k, y: box.y + box.height / 2 - gy * k, k }, "minimap");
  };
  root.addEventListener("pointerdown", (event) => {
    if (event.button !== 0 || !frame) return;
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

  return {
    /** Paint the boxes again at the next frame: the cards were drawn elsewhere. */
    redraw: () => queue({ boxes: true }),
    /** The minimap's box in the pane's pixels (the SVG's local ones), or null while hidden. */
    box() {
      if (root.hidden || !frame) return null;
      const { width, height, rem } = metrics();
      const right = width - INSET_RIGHT_REM * rem;
      const bottom = height - INSET_BOTTOM_REM * rem;
      return { left: right - frame.width - 2 * BORDER_PX, top: bottom - frame.height - 2 * BORDER_PX, right, bottom };
    },
  };
}
