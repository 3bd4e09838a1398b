// The one place where the teacher's view becomes this page's state (a following student's page).
// Everything goes through the store: the program, values and toggles by update(), the trace by
// the page's own recompute (main.js: /api/graph for a new program, /api/values — numbers only —
// for new values of the same one), the step by setStep once the trace it belongs to is shown.
// A page-side evaluator, when there is one, slots in here: `recompute` is the only way a view
// turns into numbers.
//
// While a question is open the timeline waits before the frame that would show its answer
// (live-class-questions.js holdFrame), and "show final gradients" stays off.

import { holdFrame } from "./live-class-questions.js";
import { setStep, state, subscribe, update } from "./state.js";

// The view's keys that are plain state (the rest: source, values, expandDerived, step).
const SHOWN_KEYS = ["presetId", "finalGrads", "foldConstants", "gradMap", "view3d", "lessonId", "lessonStop"];

const sameValues = (a, b) => {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => Object.is(a[k], b[k]));
};

/**
 * A follower: `follow(view, question)` shows the teacher's view (question: the open one, or
 * null); `stop()` leaves the page as it is (the class is free, or over). `recompute(meta)` is
 * main.js's: `{program: true, step}` for a new program, `{values: true}` for new values.
 */
export function createFollower({ recompute }) {
  let view = null;       // the view being followed, null when not following
  let question = null;
  let awaiting = false;  // a recompute for `view` is in flight: its trace places the step

  const target = () => {
    const hold = holdFrame(state.trace, question);
    return hold === null ? view.step : Math.min(view.step, hold);
  };

  function place() {
    if (view && !awaiting && state.trace) setStep(target());
  }

  function follow(next, open = null) {
    const program = !state.trace || state.trace.source !== next.source || state.expandDerived !== next.expandDerived;
    const values = !sameValues(state.values, next.values);
    view = next;
    question = open;
    const patch = { playing: false, source: next.source, values: { ...next.values }, expandDerived: next.expandDerived };
    for (const key of SHOWN_KEYS) patch[key] = next[key];
    if (question?.open) patch.finalGrads = false; // the answer would be on screen
    update(patch);
    if (program || values) {
      awaiting = true;
      recompute(program ? { program: true, step: next.step } : { values: true });
    } else {
      place();
    }
  }

  function stop() {
    view = null;
    question = null;
    awaiting = false;
  }

  /** The view's value of a shown key (final gradients stay hidden while a question is open). */
  const wanted = (key) => (key === "finalGrads" && question?.open ? false : view[key]);

  subscribe((s, changed) => {
    if (!view) return;
    if (changed.has("trace") || changed.has("error")) awaiting = false;
    // Keys and buttons of this page (Space, a lesson's arrows, a toggle) do not move it away.
    const drifted = SHOWN_KEYS.filter((key) => changed.has(key) && s[key] !== wanted(key));
    if (drifted.length || (changed.has("playing") && s.playing)) {
      update({ playing: false, ...Object.fromEntries(drifted.map((key) => [key, wanted(key)])) });
    }
    // The trace of the view arrived, or this page moved on its own: back to the teacher's step.
    if (changed.has("trace") || (changed.has("step") && !awaiting && s.step !== target())) place();
  });

  return { follow, stop, following: () => view !== null };
}
