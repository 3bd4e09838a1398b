// The timeline player: renders the graph at step i (derived from steps[0..i], never mutated step
// by step) and plays the steps on a timer. A generation counter retires stale ticks and pulses.

import { drawGraph, drawPulses } from "./graph.js";
import { setStep, state, stepCount, subscribe, update } from "./state.js";
import { viewAt } from "./timeline.js";

const BASE_INTERVAL_MS = 900;

export function stepInterval(speed) {
  return BASE_INTERVAL_MS / Math.max(0.01, speed);
}

const reducedMotion = window.matchMedia?.("(prefers-reduced-motion: reduce)");

/**
 * `layers` = {edges, labels, nodes, pulses} SVG groups. Subscribes to the state; redraws when the
 * trace, step or display options change, and runs the play loop while `state.playing`.
 */
export function createPlayer(layers) {
  let generation = 0;
  let lastDrawn = { trace: null, step: -1, finalGrads: null };

  function renderAt(trace, i, { animate }) {
    generation += 1;
    const view = viewAt(trace, i, { finalGrads: state.finalGrads });
    drawGraph(layers, trace, view);
    const motion = animate && !reducedMotion?.matches;
    if (motion) drawPulses(layers.pulses, trace, view, Math.min(650, stepInterval(state.speed) * 0.75));
    else layers.pulses.replaceChildren();
    return view;
  }

  function schedule() {
    const token = generation;
    setTimeout(() => {
      if (token !== generation || !state.playing || !state.trace) return;
      if (state.step >= stepCount() - 1) update({ playing: false });
      else setStep(state.step + 1);
    }, stepInterval(state.speed));
  }

  subscribe((s, changed) => {
    if (!s.trace) return;
    const redraw = s.trace !== lastDrawn.trace || s.step !== lastDrawn.step
      || s.finalGrads !== lastDrawn.finalGrads;
    if (redraw) {
      // Pulses travel only when the step moved, not when values or options changed under it.
      const animate = s.step !== lastDrawn.step && s.trace === lastDrawn.trace;
      renderAt(s.trace, s.step, { animate });
      lastDrawn = { trace: s.trace, step: s.step, finalGrads: s.finalGrads };
    }
    if (s.playing && (redraw || changed.has("playing") || changed.has("speed"))) {
      if (!redraw) generation += 1; // a new speed or a fresh play retires the pending tick
      schedule();
    }
  });

  return {
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
