// The one place where the teacher's view becomes this page's state (a following student's page).
// Everything goes through the scope's store: the program, values and toggles by update(), the
// trace of a new program by the page's own recompute (main.js: /api/graph), new values of the
// same program painted from the page's own numbers (`paint`: compute/instant-numbers.js
// paintOnly, no request: the teacher's page has the server confirm the same numbers), and only
// when the page cannot compute them (a program's own functions, `sq(x) = x * x`) by /api/values, asked once
// the teacher's moves pause; the step by setStep once the trace it belongs to is shown.
//
// While following, the timeline is the teacher's: a step guard (the store's, as the predict lab
// holds it) keeps every move of this page — its transport, keys, a lesson's arrows, the play
// loop — on the teacher's step. While a question is open that step stops before the frame that
// would show its answer (live-class/questions.js holdFrame), and "show final gradients" stays off.

import { CONFIRM_DELAY_MS } from "../compute/instant-numbers.js";
import { holdFrame } from "./questions.js";

// The view's keys that are plain state (the rest: source, values, expandDerived, step).
const SHOWN_KEYS = ["presetId", "finalGrads", "foldConstants", "gradMap", "view3d", "lessonId", "lessonStop"];

const sameValues = (a, b) => {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => Object.is(a[k], b[k]));
};

/** The view's value of a shown key (final gradients stay hidden while a question is open). */
const wantedOf = (view, question, key) => (key === "finalGrads" && question?.open ? false : view[key]);

/** The state patch that shows `view` (its trace and step come after: recompute, setStep). */
function viewPatch(view, question) {
  const patch = { playing: false, source: view.source, values: { ...view.values }, expandDerived: view.expandDerived };
  for (const key of SHOWN_KEYS) patch[key] = wantedOf(view, question, key);
  return patch;
}

/**
 * A follower on `store` (a scope's): `follow(view, question)` shows the teacher's view
 * (question: the open one, or null); `stop()` leaves the page as it is (the class is free, or
 * over). `recompute(meta)` is main.js's: `{program: true, step}` for a new program, `{values:
 * true}` for new values; `paint(values)` paints new values from the page's numbers, false when
 * the page cannot.
 */
export function createFollower(store, { recompute, paint = () => false }) {
  const { state, subscribe, update, setStep, addStepGuard } = store;
  let view = null;       // the view being followed, null when not following
  let question = null;
  let awaiting = false;  // a recompute for `view` is in flight: its trace places the step
  let asking = null;     // new values the page cannot compute: asked once the teacher's moves pause

  /** The teacher's step, or the frame before the open question's answer if that comes first. */
  const target = () => {
    const hold = holdFrame(state.trace ?? state.tensor, question); // a tensor program's reply too
    return hold === null ? view.step : Math.min(view.step, hold);
  };

  // Following, no move leaves the teacher's step; while the view's trace is on its way, none
  // moves at all (its step is a frame of that trace, not of the one shown).
  addStepGuard((from, to) => {
    if (!view) return to;
    return awaiting ? from : target();
  });

  function place() {
    if (view && !awaiting && (state.trace || state.tensor)) setStep(target());
  }

  function follow(next, open = null) {
    const shown = state.trace ?? state.tensor; // a tensor program's reply is shown by tensor/view.js
    const program = !shown || shown.source !== next.source || state.expandDerived !== next.expandDerived;
    const values = !sameValues(state.values, next.values);
    view = next;
    question = open;
    update(viewPatch(view, question));
    clearTimeout(asking);
    if (program) {
      awaiting = true;
      recompute({ program: true, step: next.step });
    } else if (values) {
      awaiting = true;
      // The page's own numbers (its trace placed at once), else the server's, asked once a
      // drag pauses rather than for every move of it.
      if (!paint(next.values)) asking = setTimeout(() => recompute({ values: true }), CONFIRM_DELAY_MS);
    } else {
      place();
    }
  }

  subscribe((s, changed) => {
    if (!view) return;
    const arrived = changed.has("trace") || changed.has("tensor");
    if (arrived || changed.has("error")) awaiting = false;
    // Keys and buttons of this page (Space, a lesson's arrows, a toggle) do not move it away.
    const drifted = SHOWN_KEYS.filter((key) => changed.has(key) && s[key] !== wantedOf(view, question, key));
    if (drifted.length || (changed.has("playing") && s.playing)) {
      update({ playing: false, ...Object.fromEntries(drifted.map((key) => [key, wantedOf(view, question, key)])) });
    }
    // The view's trace arrived (setTrace placed it at the view's step, or carried the step over
    // for new values): to the teacher's step, before an open question's answer.
    if (arrived) place();
  });

  function stop() {
    clearTimeout(asking);
    view = null;
    question = null;
    awaiting = false;
  }

  return { follow, stop, following: () => view !== null };
}
