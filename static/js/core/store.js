// A player's state: one plain object, changed only through the store's actions, and a
// subscription so that every view (graph, transport, editor, sliders, panels) redraws from it.
// The page has one store and each embedded player one of its own (core/scope.js createScope): a view
// is given its scope's store, never imports one.
//
//   scope.store.subscribe((s, changed) => { ... s.trace, s.step ... });
//   scope.store.setStep(3);
// `changed` is a Set of the top-level keys that changed ("trace", "step", "error", ...);
// a subscriber is also called once, at subscription, with every key marked as changed.

import { carryFrame, frameOfStep, framesOf, traceIndex } from "./frames.js";
import { requestDefaults } from "./request.js";

/** The state of a fresh view: every key the views read, at its default. */
function initialState() {
  return {
    presets: [],          // [{id, title, source, values, note}] from /api/presets
    lessons: [],          // [{id, title, summary, source, values, stops}] from /api/lessons
    lessonId: "",         // the lesson open (lessons/panel.js), "" for none
    lessonStop: 0,        // its stop shown (0-based)
    hide: [],             // parts a teacher's link hides (core/links.js HIDE_KEYS): not shown, not focusable
    panel: "",            // the tab shown in the panel area (core/panels.js), "" before any is registered
    presetId: "",         // the preset the program came from ("" once edited)
    source: "",           // the program text as typed
    values: {},           // slider overrides {leafName: number}; program edits reset it
    ranges: {},           // per-leaf slider range the user set {name: {min, max}}
    loads: 0,             // programs loaded whole (a preset, a lesson): each starts its sliders afresh
    finalGrads: false,    // show every final gradient at once (off by default)
    foldConstants: false, // draw constants inside their consumer's card
    gradMap: false,       // colour every card by |grad| at the frame shown (gradients/gradmap.js)
    // The request's options (core/request.js REQUEST_FIELDS), at the engine's defaults:
    //   expandDerived: build derived ops from primitives; target: the node whose gradients are
    //   asked (gradients/target.js), null: the root; pass: "reverse" | "forward"
    //   (gradients/forward-mode.js); mode: "correct" | "overwrite" (the = bug, labs/overwrite.js);
    //   order: null | [node ids] (the visit order that was run, labs/order.js).
    ...requestDefaults(),
    wrt: "",              // request field: forward mode's leaf (its name); "" until a trace names the first
    everyLeaf: null,      // the "forward for every leaf" run: null | {done: {leaf id: ∂root/∂leaf}, finished}
    litPath: null,        // the chain-rule path pointed at in the Paths panel, lit on the graph: {nodes, edges} ids
    presenting: false,    // presentation mode (controls/present.js): large type, editor hidden
    view3d: false,        // the 3D view (view-3d/view.js) instead of the SVG; without WebGL it stays off
    lang: "",             // the language a link asked for (?lang=, the header's menu: core/language.js);
                          // "" when the browser's Accept-Language chose it (core/i18n.js lang(): the page's)
    trace: null,          // the last good /api/graph response (positions included); null while a tensor program is shown
    tensor: null,         // the last good /api/graph reply of a tensor program (kind "tensor": tensor/view.js), else null
    tensorFanIn: null,    // the gradient element whose fan-in is shown: {tensor (id), index, reply (POST /api/fan-in)} or null
    tensorCell: null,     // the leaf element being edited: {tensor (id), index} or null
    error: null,          // {type, message, line, column, snippet, caret} or null
    step: 0,              // position on the timeline: a frame index (core/frames.js framesOf)
    playing: false,
    speed: 1,             // multiplier of the base step interval
    hoverNode: null,      // id of the node under the pointer (its span is lit in the editor)
    busy: false,          // a request is in flight
    classRole: "",        // this page in a live class (live-class/mount.js): "" | "teacher" | "student"
    // Labs (labs/panel.js): which lab owns the page, and the request options of the teaching variants.
    //   lab: null | "overwrite" (the = bug) | "order" (node clicks place a visit order; other
    //        node-click behaviour stays quiet) | "predict" (the learner guesses each gradient).
    //   orderDraft: the ids of a visit order placed so far, not yet run.
    lab: null,
    // The Train lab (train/lab.js), null while it is off: {lr, momentum, params (null: the default
    // leaves), steps (taken so far), start (the leaf values at step 0)}.
    train: null,
    orderDraft: [],
    // A run of the learner's code in the browser (sandbox/sandbox.js), null when the program is read as data.
    sandbox: null,
  };
}

/**
 * Rounds of notification one update() may run before the store gives up: a subscriber that sets
 * state on every round it sees (a loop between two views) would otherwise never let it return.
 */
export const MAX_ROUNDS = 100;

/**
 * Notifications come in rounds: an update() made by a subscriber is queued and applied after the
 * round in progress (queued changes merged into the next round), so every subscriber of a round
 * sees the same state and each change once, in order. At MAX_ROUNDS the rounds stop: what they
 * applied stays, the patches still queued are dropped, and update() throws an Error naming the
 * keys that kept changing (the page's console shows it; a browser test fails on it).
 */
function createNotifier(state) {
  const subscribers = new Set();
  const queued = [];
  let notifying = false;

  function applyQueued() {
    const changed = new Set();
    for (const next of queued.splice(0)) {
      for (const [key, value] of Object.entries(next)) {
        if (state[key] !== value) {
          state[key] = value;
          changed.add(key);
        }
      }
    }
    return changed;
  }

  function runRounds() {
    for (let round = 1; queued.length; round += 1) {
      if (round > MAX_ROUNDS) {
        const keys = [...new Set(queued.flatMap(Object.keys))].join(", ");
        throw new Error(`state updates did not settle after ${MAX_ROUNDS} rounds; still changing: ${keys}`);
      }
      const changed = applyQueued();
      if (changed.size) for (const fn of [...subscribers]) fn(state, changed);
    }
  }

  return {
    /** Call `fn(state, changed)` now and after every change; returns an unsubscribe function. */
    subscribe(fn) {
      subscribers.add(fn);
      fn(state, new Set(Object.keys(state)));
      return () => subscribers.delete(fn);
    },
    /** Merge `patch` into the state and notify subscribers of the keys whose value changed. */
    update(patch) {
      queued.push(patch);
      if (notifying) return;
      notifying = true;
      try {
        runRounds();
      } finally {
        notifying = false;
        queued.length = 0;
      }
    },
    clear: () => subscribers.clear(),
  };
}

/** The store's moves on the timeline over `state`: go to a frame (held by the step guards), jump to a phase. */
function stepActions(state, update) {
  const stepGuards = [];

  /** Number of positions on the timeline (frames: see core/frames.js; a tensor program's: its steps). */
  const stepCount = () => (state.trace ? framesOf(state.trace).length : state.tensor ? state.tensor.steps.length : 0);
  const clamped = (i) => Math.min(Math.max(0, stepCount() - 1), Math.max(0, Math.round(Number(i) || 0)));

  /** Go to timeline position `i` (clamped), or where the step guards let the move end (playing stops there). */
  function setStep(i) {
    const wanted = clamped(i);
    const step = clamped(stepGuards.reduce((to, guard) => guard(state.step, to), wanted));
    update(step === wanted ? { step } : { step, playing: false });
  }

  /** The first frame of `phase` ("forward", "backward", ...) in the trace shown, or null. */
  function firstFrameOf(phase) {
    if (state.tensor) {
      const at = state.tensor.steps.findIndex((step) => step.phase === phase);
      return at < 0 ? null : at;
    }
    const first = state.trace ? traceIndex(state.trace).phases[phase]?.first : undefined;
    return first === undefined ? null : frameOfStep(state.trace, first);
  }

  return {
    stepCount,
    setStep,
    stepBy: (delta) => setStep(state.step + delta),
    toEnd: () => setStep(stepCount() - 1),
    /** Go to the first frame of the forward pass, or of the backward pass (its seed if no visit). */
    jumpTo(phase) {
      const first = phase === "backward" ? firstFrameOf("backward") ?? firstFrameOf("seed") : firstFrameOf(phase);
      if (first !== null) setStep(first);
    },
    /**
     * Let a feature hold the timeline: `guard(from, to)` returns the frame a move from `from`
     * towards `to` may end at (`to` lets it through). The predict lab stops a forward move before
     * an unanswered gradient; a live class's student stays on the teacher's step. Guards apply in
     * the order added, each to what the one before allowed. Returns a function that removes it.
     */
    addStepGuard(guard) {
      stepGuards.push(guard);
      return () => {
        const at = stepGuards.indexOf(guard);
        if (at >= 0) stepGuards.splice(at, 1);
      };
    },
  };
}

/** The store's actions on what is shown: a trace, an error, play and pause. */
function traceActions(state, update, { setStep, stepCount }) {
  return {
    /**
     * Show a new trace. `step` (a frame index, clamped) places it: 0 for a new program, a shared
     * link's step. Without it (new values of the same program) the step is carried over as the
     * same phase and position in that phase (core/frames.js carryFrame), not as a bare frame index.
     */
    setTrace(trace, { step } = {}) {
      const last = Math.max(0, framesOf(trace).length - 1);
      let next;
      if (step !== undefined) next = Math.min(last, Math.max(0, Math.round(Number(step) || 0)));
      else next = state.trace ? carryFrame(state.trace, state.step, trace) : Math.min(state.step, last);
      update({ trace, tensor: null, tensorFanIn: null, tensorCell: null, error: null, step: next });
    },
    /**
     * Show a tensor program's reply (tensor/view.js draws it; the scalar trace goes). `step`
     * places it (a new program: 0); without it (new values) the step stays where it was.
     */
    setTensor(tensor, { step } = {}) {
      const last = Math.max(0, tensor.steps.length - 1);
      const next = Math.min(last, Math.max(0, Math.round(Number(step ?? state.step) || 0)));
      const program = step !== undefined;
      update({
        tensor, trace: null, error: null, step: next,
        ...(program ? { tensorFanIn: null, tensorCell: null } : {}),
      });
    },
    setError: (error) => update({ error, playing: false }),
    /** Play from the current step (from the start when at the end); pause when playing. */
    togglePlay() {
      if (!state.trace && !state.tensor) return;
      if (state.playing) {
        update({ playing: false });
        return;
      }
      if (state.step >= stepCount() - 1) setStep(0);
      update({ playing: true });
    },
  };
}

/**
 * A store: one state object and the only functions that change it. Each scope (the page, each
 * embedded player) makes its own, so two players in one document share nothing.
 */
export function createStore() {
  const state = initialState();
  const notifier = createNotifier(state);
  const { subscribe, update } = notifier;
  const steps = stepActions(state, update);
  return {
    state,
    subscribe,
    update,
    ...steps,
    ...traceActions(state, update, steps),
    /** Stop: playing ends and no subscriber is called again (an embedded player taken down). */
    close() {
      update({ playing: false });
      notifier.clear();
    },
  };
}
