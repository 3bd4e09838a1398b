// The timeline player: renders the graph at step i (timeline.js's lookups, never mutated step by
// step) and plays the steps on a timer. Moving from one frame to another of the same trace
// refreshes only the cards and edges the frames between them touch (timeline.js changedBetween).
// Each draw leaves its cost on the graph: data-last-draw-refreshed (cards and edges refreshed)
// and data-last-draw-writes (attributes and texts written).

import { drawGraph, drawPulses } from "./graph.js";
import { pageScope } from "./scope.js";
import { takeWrites } from "./svg.js";
import { changedBetween, viewAt } from "./timeline.js";

const BASE_INTERVAL_MS = 900;

export function stepInterval(speed) {
  return BASE_INTERVAL_MS / Math.max(0.01, speed);
}

const reducedMotion = window.matchMedia?.("(prefers-reduced-motion: reduce)");

/** Draw the whole trace: `{refreshed, shown}`, the cards and edges refreshed and the trace drawn. */
function drawWhole(layers, trace, view, changed) {
  return { refreshed: drawGraph(layers, trace, view, changed), shown: trace };
}

/**
 * `layers` = {edges, labels, nodes, pulses} SVG groups. Subscribes to the scope's state; redraws
 * when the trace, step or display options change, and runs the play loop while `state.playing`.
 * `draw(layers, trace, view, changed)` draws a frame (default: every node; group-view.js draws
 * what the collapsed groups leave) and returns `{refreshed, shown}` (the trace it drew).
 */
export function createPlayer(layers, { draw = drawWhole } = {}, scope = pageScope) {
  const { setStep, state, stepCount, subscribe, update } = scope.store;
  let lastDrawn = { trace: null, step: -1, finalGrads: null };

  function renderAt(trace, i, { animate, changed }) {
    const view = viewAt(trace, i, { finalGrads: state.finalGrads });
    takeWrites();
    const { refreshed, shown } = draw(layers, trace, view, changed);
    const svg = layers.nodes.ownerSVGElement;
    if (svg) {
      svg.dataset.lastDrawWrites = String(takeWrites());
      svg.dataset.lastDrawRefreshed = String(refreshed);
    }
    const motion = animate && !reducedMotion?.matches;
    if (motion) drawPulses(layers.pulses, shown, view, Math.min(650, stepInterval(state.speed) * 0.75));
    else layers.pulses.replaceChildren();
    return view;
  }

  // The play loop's own counter: a new trace under the same step (a slider dragged while playing)
  // redraws but must not restart the pending tick, or a drag starves the loop and play stalls.
  let tick = 0;
  function schedule() {
    const token = ++tick;
    setTimeout(() => {
      if (token !== tick || !state.playing || !state.trace) return;
      if (state.step >= stepCount() - 1) update({ playing: false });
      else setStep(state.step + 1);
    }, stepInterval(state.speed));
  }

  subscribe((s, changed) => {
    if (!s.trace) return;
    const redraw = s.trace !== lastDrawn.trace || s.step !== lastDrawn.step
      || s.finalGrads !== lastDrawn.finalGrads;
    const stepMoved = s.step !== lastDrawn.step;
    if (redraw) {
      // Pulses travel only when the step moved, not when values or options changed under it.
      const animate = s.step !== lastDrawn.step && s.trace === lastDrawn.trace;
      const sameTrace = s.trace === lastDrawn.trace && s.finalGrads === lastDrawn.finalGrads;
      const changed = sameTrace ? changedBetween(s.trace, lastDrawn.step, s.step) : null;
      renderAt(s.trace, s.step, { animate, changed });
      lastDrawn = { trace: s.trace, step: s.step, finalGrads: s.finalGrads };
    }
    if (s.playing && (stepMoved || changed.has("playing") || changed.has("speed"))) {
      schedule(); // a moved step, a new speed or a fresh play retires the pending tick
    }
  });

  return {
    /** Draw the current frame again in full (what is drawn changed: a group collapsed). */
    redraw() {
      if (!state.trace) return;
      renderAt(state.trace, state.step, { animate: false, changed: null });
      lastDrawn = { trace: state.trace, step: state.step, finalGrads: state.finalGrads };
    },
    /** Play from the current step (from the start when at the end); pause when playing. */
    toggle() {
      if (!state.trace) return;
      if (state.playing) {
        update({ playing: false });
        return;
      }
      if (state.step >= stepCount() - 1) setStep(0);
      update({ playing: true });
    },
  };
}
