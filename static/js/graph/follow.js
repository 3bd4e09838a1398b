// Follow the pulse: while the timeline moves (stepping or playing), the view keeps the card being
// visited, and the edge whose contribution is shown, inside the visible pane. It glides there
// (at once under reduced motion, or when steps come too fast for a glide to be seen) and only when
// they are about to leave, so a view that already shows them stays still. A pan or zoom by the
// reader (wheel, drag, the zoom buttons, the minimap) takes control; Fit or the Follow button
// gives it back.
//
// A mark (graph/marks.js) that draws nothing: it moves the view at each frame of a new step or trace.
// What to keep in view comes from the frame (the node visited and the lit edges) and from where
// their cards are drawn (the layout, or a collapsed statement's card: graph/view.js cardOf),
// without reading the page's layout at every step. This module is the only writer of the Follow
// button's aria-pressed.

import { stepInterval } from "../core/player.js";
import { activeAt, traceIndex } from "../core/frames.js";

const reducedMotion = window.matchMedia?.("(prefers-reduced-motion: reduce)");
const MAX_GLIDE_MS = 320;
const MIN_GLIDE_MS = 60; // shorter than this (fast play) a glide is a jump drawn three times
// View changes made by the reader: each takes control from follow.
const READER_MOVES = new Set(["wheel", "drag", "zoom", "minimap"]);

const fits = (box, zone) => box.right - box.left <= zone.right - zone.left && box.bottom - box.top <= zone.bottom - zone.top;
const inside = (box, zone) => box.left >= zone.left && box.right <= zone.right && box.top >= zone.top && box.bottom <= zone.bottom;
const overlaps = (a, b) => Boolean(b) && a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;

/** The union of boxes {left, top, right, bottom}, or null for none. */
function union(boxes) {
  const shown = boxes.filter(Boolean);
  if (shown.length === 0) return null;
  return {
    left: Math.min(...shown.map((b) => b.left)),
    top: Math.min(...shown.map((b) => b.top)),
    right: Math.max(...shown.map((b) => b.right)),
    bottom: Math.max(...shown.map((b) => b.bottom)),
  };
}

/** Where a followed card may sit: the visible box less its margins and what covers its edges. */
function followZone({ box, covers }) {
  const margin = Math.min(32, box.width * 0.04);
  return {
    left: box.x + margin,
    right: box.x + box.width - margin,
    top: box.y + Math.max(margin, covers.top),
    bottom: box.y + box.height - Math.max(margin, covers.bottom),
  };
}

/** Node `id`'s card on screen (SVG-local px) in view `t`: the box it is drawn in (`cardOf`), or its layout's. */
function nodeBox(trace, id, cardOf, { x, y, k }) {
  const node = (id ? cardOf(id) : null) ?? traceIndex(trace).nodeById.get(id);
  if (!node) return null;
  const top = node.y - node.height / 2 - 16; // the tags above the card (graph-view graphBounds)
  return { left: (node.x - node.width / 2) * k + x, right: (node.x + node.width / 2) * k + x, top: top * k + y, bottom: (node.y + node.height / 2) * k + y };
}

/** What to keep in view, most first: the card with every lit edge's input, with the latest
 * contribution's input, then the card alone. An edge lies between its two cards' boxes. */
function wishes(trace, step, cardOf, view) {
  const at = activeAt(trace, step);
  const own = at ? nodeBox(trace, at.node, cardOf, view) : null;
  if (!own) return [];
  const inputs = (at.edges ?? []).map((id) => nodeBox(trace, traceIndex(trace).edgeById.get(id)?.source, cardOf, view));
  return [[own, ...inputs], [own, inputs[inputs.length - 1]], [own]].map(union);
}

/** A view that glides to a target (or jumps, under reduced motion or fast play). */
function createGlide(zoom, speed) {
  let glide = 0; // counter: a newer glide, or the reader's own move, retires the running one
  let destination = null; // the view a running glide is heading for
  return {
    /** Boxes are reckoned in the view a running glide is heading for, not where it has got to. */
    view: () => destination ?? zoom.transform,
    stop() {
      glide += 1;
      destination = null;
    },
    to(target) {
      const token = ++glide;
      const from = zoom.transform;
      const ms = reducedMotion?.matches ? 0 : Math.min(MAX_GLIDE_MS, stepInterval(speed()) * 0.5);
      destination = ms < MIN_GLIDE_MS ? null : target;
      if (!destination) {
        zoom.set(target, "follow");
        return;
      }
      const start = performance.now();
      const frame = (now) => {
        if (token !== glide) return;
        const u = Math.min(1, (now - start) / ms);
        const eased = 1 - (1 - u) ** 3;
        zoom.set({ x: from.x + (target.x - from.x) * eased, y: from.y + (target.y - from.y) * eased, k: from.k }, "follow");
        if (u < 1) requestAnimationFrame(frame);
        else destination = null;
      };
      requestAnimationFrame(frame);
    },
  };
}

/**
 * The move (a view {x, y, k}) that brings the current card, and as much of its step as fits, into
 * view; null when it is seen whole already (in the visible box, under none of what lies over the
 * pane): then the view stays, even when the card is nearer an edge than a move would put it.
 */
function moveFor(candidates, metrics, avoid, view) {
  const area = followZone(metrics);
  const box = candidates.find((c) => fits(c, area)) ?? candidates[candidates.length - 1];
  if (!box) return null;
  const { box: pane, overlays } = metrics;
  if (!(pane.width > 0 && pane.height > 0)) return null; // not laid out yet: nowhere to move to
  const covered = [...overlays, avoid].some((over) => overlaps(box, over));
  const seen = { left: pane.x, right: pane.x + pane.width, top: pane.y, bottom: pane.y + pane.height };
  if (inside(box, seen) && !covered) return null;
  // Centre it on each axis where it is out (on both when only something over the pane is in the way).
  const outX = box.left < area.left || box.right > area.right || covered;
  const outY = box.top < area.top || box.bottom > area.bottom || covered;
  const dx = outX ? (area.left + area.right) / 2 - (box.left + box.right) / 2 : 0;
  const dy = outY ? (area.top + area.bottom) / 2 - (box.top + box.bottom) / 2 : 0;
  return { x: view.x + dx, y: view.y + dy, k: view.k };
}

/**
 * Follow on `graph`'s pane (graph/view.js: its zoom, and cardOf, the box of the card drawn for
 * a node), as a mark. `button`: the Follow toggle; `metrics()`: the pane's measurements
 * (graph/pane-metrics.js); `avoid()`: a box (SVG-local px) the followed card must not sit under (the
 * minimap), or null. The zoom buttons and the legend are avoided too (metrics().overlays).
 */
export function followMark({ graph, button, metrics, avoid = () => null }, scope) {
  const { state } = scope.store;
  const glide = createGlide(graph.zoom, () => state.speed);
  let following = true;
  let followed = { trace: null, step: -1 };

  const show = () => button.setAttribute("aria-pressed", String(following));
  function keepInView() {
    if (!following || !state.trace) return;
    const candidates = wishes(state.trace, state.step, graph.cardOf, glide.view()).filter(Boolean);
    const target = moveFor(candidates, metrics(), avoid(), glide.view());
    if (target) glide.to(target);
  }
  function setFollowing(on) {
    following = on;
    show();
    if (on) keepInView();
    else glide.stop(); // a glide on its way stops where it is
  }

  graph.zoom.onChange((_transform, how) => {
    if (how === "follow") return;
    glide.stop(); // any other move of the view retires a running glide
    if (READER_MOVES.has(how)) {
      if (following) setFollowing(false);
    } else if (how === "fit") setFollowing(true); // Fit, a new program's fit, a fitted view kept fitted
  });
  button.addEventListener("click", () => setFollowing(!following));
  show();
  return {
    name: "follow",
    render({ trace, view }) {
      if (trace === followed.trace && view.frame === followed.step) return null;
      followed = { trace, step: view.frame };
      keepInView();
      return null;
    },
  };
}
