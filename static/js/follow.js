// Follow the pulse: while the timeline moves (stepping or playing), the view keeps the card being
// visited, and the edge whose contribution is shown, inside the visible pane. It glides there
// (at once under reduced motion, or when steps come too fast for a glide to be seen) and only when
// they are about to leave, so a view that already shows them stays still. A pan or zoom by the
// reader (wheel, drag, the zoom buttons, the minimap) takes control; Fit or the Follow button
// gives it back.
//
// This module is the only writer of the Follow button's aria-pressed. What to keep in view comes
// from the drawing (`[data-current="true"]`: a card drawn for a whole collapsed statement is
// followed too) and, for a node's card and its lit edges, from where the card is drawn (the
// layout, or a collapsed statement's card: graph-view.js cardOf), without reading the page's
// layout at every step.

import { stepInterval } from "./player.js";
import { state, subscribe } from "./state.js";
import { playIndex, traceIndex } from "./timeline.js";

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

/**
 * Mount follow on the graph pane. `zoom`: the pane's view (zoom.js; a fit gives control back);
 * `button`: the Follow toggle; `metrics()`: the pane's measurements (real-size.js paneMetrics);
 * `avoid()`: a box (SVG-local px) the followed card must not sit under (the minimap), or null.
 * The zoom buttons and the legend are avoided too (metrics().overlays). `cardOf(id)`: the box
 * (graph units, centred) of the card drawn for node `id`, or null to read it from the layout.
 */
export function mountFollow({ svg, zoom, button, metrics, avoid = () => null, cardOf = () => null }) {
  let following = true;
  let glide = 0; // counter: a newer glide, or the reader's own move, retires the running one
  let destination = null; // the view a running glide is heading for
  // Boxes are reckoned in the view a running glide is heading for, not where it has got to.
  const view = () => destination ?? zoom.transform;

  const show = () => button.setAttribute("aria-pressed", String(following));

  /** Where a followed card may sit: the visible box less its margins and what covers its edges. */
  function zone() {
    const { box, covers } = metrics();
    const margin = Math.min(32, box.width * 0.04);
    return {
      left: box.x + margin,
      right: box.x + box.width - margin,
      top: box.y + Math.max(margin, covers.top),
      bottom: box.y + box.height - Math.max(margin, covers.bottom),
    };
  }

  /** A node's card on screen (SVG-local px), from where it is drawn and the view; null if none.
   * A node inside a collapsed statement is its statement's card. */
  function nodeBox(id) {
    const node = (id ? cardOf(id) : null) ?? traceIndex(state.trace).nodeById.get(id);
    if (!node) return null;
    const { x, y, k } = view();
    const top = node.y - node.height / 2 - 16; // the tags above the card (graph-view graphBounds)
    return { left: (node.x - node.width / 2) * k + x, right: (node.x + node.width / 2) * k + x, top: top * k + y, bottom: (node.y + node.height / 2) * k + y };
  }

  /** The card being visited on screen: a node's from the layout; any other card (a collapsed
   * statement's) from the page. */
  function currentBox() {
    const card = svg.querySelector('[data-current="true"]');
    if (!card) return null;
    const id = card.getAttribute("data-node-id");
    if (id) return nodeBox(id);
    const r = card.getBoundingClientRect();
    const origin = svg.getBoundingClientRect();
    const [dx, dy] = [view().x - zoom.transform.x, view().y - zoom.transform.y];
    return { left: r.left - origin.left + dx, right: r.right - origin.left + dx, top: r.top - origin.top + dy, bottom: r.bottom - origin.top + dy };
  }

  /** What to keep in view, most first: the card with every lit edge's input, with the latest
   * contribution's input, then the card alone. An edge lies between its two cards' boxes. */
  function wishes() {
    const own = currentBox();
    if (!own) return [];
    const lit = playIndex(state.trace).active[state.step]?.edges ?? [];
    const { edgeById } = traceIndex(state.trace);
    const inputs = lit.map((id) => nodeBox(edgeById.get(id)?.source));
    return [[own, ...inputs], [own, inputs[inputs.length - 1]], [own]].map(union);
  }

  function glideTo(target) {
    const token = ++glide;
    const from = zoom.transform;
    const ms = reducedMotion?.matches ? 0 : Math.min(MAX_GLIDE_MS, stepInterval(state.speed) * 0.5);
    if (ms < MIN_GLIDE_MS) {
      destination = null;
      zoom.set(target, "follow");
      return;
    }
    destination = target;
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
  }

  /** Move the view (if needed) so that the current card, and as much of its step as fits, shows. */
  function keepInView() {
    if (!following || !state.trace) return;
    const area = zone();
    const candidates = wishes().filter(Boolean);
    const box = candidates.find((c) => fits(c, area)) ?? candidates[candidates.length - 1];
    if (!box) return;
    // Seen whole (in the visible box, under none of what lies over the pane): the view stays, even
    // when the card is nearer an edge than a move would put it (a fitted view never moves).
    const { box: pane, overlays } = metrics();
    const covered = [...overlays, avoid()].some((over) => overlaps(box, over));
    const seen = { left: pane.x, right: pane.x + pane.width, top: pane.y, bottom: pane.y + pane.height };
    if (inside(box, seen) && !covered) return;
    // Centre it on each axis where it is out (on both when only something over the pane is in
    // the way).
    const outX = box.left < area.left || box.right > area.right || covered;
    const outY = box.top < area.top || box.bottom > area.bottom || covered;
    const dx = outX ? (area.left + area.right) / 2 - (box.left + box.right) / 2 : 0;
    const dy = outY ? (area.top + area.bottom) / 2 - (box.top + box.bottom) / 2 : 0;
    const { x, y, k } = view();
    glideTo({ x: x + dx, y: y + dy, k });
  }

  function setFollowing(on) {
    following = on;
    show();
    if (on) keepInView();
    else {
      glide += 1; // a glide on its way stops where it is
      destination = null;
    }
  }

  zoom.onChange((_transform, how) => {
    if (how === "follow") return;
    glide += 1; // any other move of the view retires a running glide
    destination = null;
    if (READER_MOVES.has(how)) {
      if (following) setFollowing(false);
    } else if (how === "fit") setFollowing(true); // Fit, a new program's fit, a fitted view kept fitted
  });
  button.addEventListener("click", () => setFollowing(!following));

  subscribe((s, changed) => {
    if (s.trace && (changed.has("step") || changed.has("trace"))) keepInView();
  });
  show();
  return {
    get following() {
      return following;
    },
  };
}
