// The timeline player: draws the frame the state shows, in one pass, and plays the steps on a
// timer. The pass: the cards, edges and labels (graph/draw.js; graph/group-view.js draws what collapsed
// statements leave), then every mark (graph/marks.js) from the same frame, then the travelling dots.
// Moving from one frame to another of the same trace refreshes only the cards and edges the
// frames between them touch (core/frames.js changedBetween). Each draw leaves its cost on the graph:
// data-last-draw-refreshed (cards and edges refreshed) and data-last-draw-writes (attributes and
// texts written, the marks' included).

import { drawGraph, drawPulses, cardElement, edgeElement } from "../graph/draw.js";
import { takeWrites } from "./svg.js";
import { changedBetween, numbersChanged, viewAt } from "./frames.js";
import { sameDrawing } from "../compute/merge-numbers.js";

const BASE_INTERVAL_MS = 900;

export function stepInterval(speed) {
  return BASE_INTERVAL_MS / Math.max(0.01, speed);
}

const reducedMotion = window.matchMedia?.("(prefers-reduced-motion: reduce)");

/** Draw the whole trace: every node has its own card. */
function drawWhole(layers, trace, view, changed) {
  const { refreshed, labels } = drawGraph(layers, trace, view, changed);
  const own = (id) => [cardElement(layers, id)].filter(Boolean);
  return { refreshed, labels, shown: trace, cardsOf: own, arranged: false };
}

/** Cards written at a time when the off-screen ones catch up after a slider move. */
const LATER_CARDS_PER_TASK = 50;
// Off-screen cards wait until the moves pause this long (ms): while a drag goes on, writing them
// between its frames would fill the time the next frame needs (each written text is laid out again
// in that frame, on screen or not).
const LATER_CARDS_QUIET_MS = 120;
// Then they wait for idle time, but not longer than this (ms).
const LATER_CARDS_WAIT_MS = 200;
// Batches written by a callback that waited that long: the page had no idle time to give (headless
// Chromium gave none for seconds after a drag), so 1,000 cards took 4 s at one batch a wait.
const LATER_BATCHES_WHEN_LATE = 4;

/** `fn(deadline)` when the page is idle (requestIdleCallback; a timer where there is none). */
const whenIdle = (fn) => (typeof requestIdleCallback === "function"
  ? requestIdleCallback(fn, { timeout: LATER_CARDS_WAIT_MS })
  : setTimeout(() => fn({ timeRemaining: () => 8, didTimeout: true }), 16));

/** The state keys a change of which draws the frame again (with those `draw` names). */
const FRAME_KEYS = ["trace", "step", "finalGrads"];

/** The draw's cost, on the graph (`layers`' SVG): cards and edges refreshed, attributes and texts written. */
function countWrites(layers, refreshed) {
  const svg = layers.nodes.ownerSVGElement;
  if (!svg) return;
  svg.dataset.lastDrawWrites = String(takeWrites());
  svg.dataset.lastDrawRefreshed = String(refreshed);
}

/**
 * The cards a slider move leaves for after its frame: those out of view (`inView(id)`, the
 * pane's; the root's card always shows its new number at once), written once the moves pause
 * (LATER_CARDS_QUIET_MS), in the page's idle time (LATER_CARDS_PER_TASK at a time while it lasts,
 * at most LATER_CARDS_WAIT_MS later), from the frame the store shows then. Any draw that redraws every card settles them; a
 * draw by difference takes along those still waiting. The graph's `data-cards-waiting` counts
 * them (0: every card shows the numbers of the frame shown).
 */
function createLaterCards(layers, redraw) {
  const waiting = new Set();
  let token = 0;
  const svg = () => layers.nodes.ownerSVGElement;
  const mark = () => {
    if (svg()) svg().dataset.cardsWaiting = String(waiting.size);
  };
  function write(at, deadline) {
    if (at !== token || !waiting.size) return; // a later move, or a draw of every card, took them
    let batches = deadline.didTimeout ? LATER_BATCHES_WHEN_LATE : Infinity;
    do {
      const ids = [];
      for (const id of waiting) {
        ids.push(id);
        waiting.delete(id);
        if (ids.length === LATER_CARDS_PER_TASK) break;
      }
      redraw(ids);
      batches -= 1;
    } while (waiting.size && (deadline.didTimeout ? batches > 0 : deadline.timeRemaining() > 2));
    mark();
    if (waiting.size) whenIdle((next) => write(at, next));
  }
  return {
    /** `changed` ([node ids, edge ids], or null: every card) with the cards still waiting. */
    including(changed) {
      const out = changed && waiting.size ? [[...changed[0], ...waiting], changed[1]] : changed;
      waiting.clear();
      mark();
      return out;
    },
    /** Write the cards `later` (node ids) when the page is idle. */
    defer(later) {
      if (!later.length) return;
      for (const id of later) waiting.add(id);
      mark();
      const at = ++token;
      setTimeout(() => {
        if (at === token) whenIdle((deadline) => write(at, deadline)); // else a later move came
      }, LATER_CARDS_QUIET_MS);
    },
  };
}

/**
 * The play loop on `store`: schedule() steps once, after the step interval at the current speed.
 * Its own counter retires the pending tick: a new trace under the same step (a slider dragged
 * while playing) redraws but must not restart it, or a drag starves the loop and play stalls.
 */
function createPlayLoop({ state, setStep, stepCount, update }) {
  let tick = 0;
  return function schedule() {
    const token = ++tick;
    setTimeout(() => {
      if (token !== tick || !state.playing || !state.trace) return;
      if (state.step >= stepCount() - 1) update({ playing: false });
      else setStep(state.step + 1);
    }, stepInterval(state.speed));
  };
}

/**
 * The player on `layers` ({edges, labels, nodes, pulses} SVG groups) and `marks` (graph/marks.js).
 * Subscribes to the scope's state; draws the frame when the trace, step or display options change,
 * the marks alone when only what they read changed, and runs the play loop while `state.playing`.
 * `draw(layers, trace, view, changed)` draws the cards (default: every node; graph/group-view.js draws
 * what the collapsed groups leave) and returns {refreshed, labels, shown, cardsOf}; `drawKeys`:
 * other state keys it reads. `inView()` gives a test of node ids, whether the card showing one is
 * in view now (default: all are): a slider move writes the others after its frame.
 * `drawsWhole(trace)`: whether `draw` redraws all it shows whatever changed (no list is made).
 */
/** A slider move's changed cards: those in view (and the root's) now, the others deferred to
 * `later` (written after the frame). */
function deferOutOfView([nodes, edges], trace, shown, later) {
  const [now, rest] = [[], []];
  for (const id of nodes) (id === trace.root || shown(id) ? now : rest).push(id);
  later.defer(rest);
  return [now, edges];
}

/**
 * What may be drawn otherwise than in the `last` frame ([node ids, edge ids]), or null (all):
 * another step of the same trace costs the frames between them; new numbers of the same
 * drawing at the same step (a slider move) cost the cards whose numbers changed.
 */
function changedSince(last, s, changed, drawKeys) {
  if (s.finalGrads !== last.finalGrads || drawKeys.some((key) => changed.has(key))) return null;
  if (s.trace === last.trace) return changedBetween(s.trace, last.step, s.step);
  if (s.step !== last.step || !sameDrawing(last.trace, s.trace)) return null;
  return numbersChanged(last.trace, s.trace, s.step, { finalGrads: s.finalGrads });
}

/** Whether the frame drawn for `s` is new numbers of the drawing `last` shows (a slider move). */
const numbersOnly = (last, s) => s.trace !== last.trace && s.step === last.step && sameDrawing(last.trace, s.trace);

export function createPlayer(layers, marks, { draw = drawWhole, drawKeys = [], inView = () => () => true, drawsWhole = () => false } = {}, scope) {
  const { state, subscribe } = scope.store;
  const frameKeys = [...FRAME_KEYS, ...drawKeys];
  let last = { trace: null, step: -1, finalGrads: null, frame: null };
  const later = createLaterCards(layers, (ids) => {
    if (last.frame) draw(layers, last.trace, last.frame.view, [ids, []]);
  });

  function renderAt(trace, i, { animate, changed: asked, changedKeys, deferrable = false }) {
    const view = viewAt(trace, i, { finalGrads: state.finalGrads });
    takeWrites();
    let changed = later.including(asked);
    if (deferrable && changed) changed = deferOutOfView(changed, trace, inView(), later);
    const drawn = draw(layers, trace, view, changed);
    const frame = { ...drawn, trace, view, state, changed, changedKeys, edgeOf: (id) => edgeElement(layers, id) };
    marks.render(frame);
    countWrites(layers, drawn.refreshed);
    const motion = animate && !reducedMotion?.matches;
    if (motion) drawPulses(layers.pulses, drawn.shown, view, Math.min(650, stepInterval(state.speed) * 0.75));
    else layers.pulses.replaceChildren();
    last = { trace, step: i, finalGrads: state.finalGrads, frame };
  }

  const schedule = createPlayLoop(scope.store);

  function onChange(s, changed) {
    const stepMoved = s.step !== last.step;
    if (frameKeys.some((key) => changed.has(key))) {
      // Pulses travel only when the step moved, not when values or options changed under it.
      renderAt(s.trace, s.step, {
        animate: stepMoved && s.trace === last.trace,
        // A frame that draws all it shows anyway (the overview's few cards) needs no list of what changed.
        changed: drawsWhole(s.trace) ? null : changedSince(last, s, changed, drawKeys), changedKeys: changed,
        deferrable: numbersOnly(last, s),
      });
    } else if (last.frame && [...changed].some((key) => marks.keys.has(key))) {
      marks.render({ ...last.frame, changed: [[], []], changedKeys: changed, arranged: false }, { only: changed });
    }
    if (s.playing && (stepMoved || changed.has("playing") || changed.has("speed"))) {
      schedule(); // a moved step, a new speed or a fresh play retires the pending tick
    }
  }

  subscribe((s, changed) => {
    if (s.trace) onChange(s, changed);
  });

  return {
    /** Draw the current frame again in full (what is drawn changed: a group collapsed). */
    redraw() {
      if (state.trace) renderAt(state.trace, state.step, { animate: false, changed: null, changedKeys: null });
    },
  };
}
