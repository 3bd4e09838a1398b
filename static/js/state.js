// The page's state: one plain object, changed only through the functions below, and a
// subscription so that every view (graph, transport, editor, sliders, panels) redraws from it.
//
// A panel module plugs in with:
//   import { state, subscribe, setStep } from "./state.js";
//   subscribe((s, changed) => { ... s.trace, s.step ... });
// `changed` is a Set of the top-level keys that changed ("trace", "step", "error", ...);
// a subscriber is also called once, at subscription, with every key marked as changed.
// Those exports are the page's store; a view that an embedded player reuses takes a scope
// (scope.js) instead, whose `store` has the same functions (createStore).

import { carryFrame, framesOf } from "./timeline.js";

/** The state of a fresh view: every key the views read, at its default. */
function initialState() {
  return {
    presets: [],          // [{id, title, source, values, note}] from /api/presets
    lessons: [],          // [{id, title, summary, source, values, stops}] from /api/lessons
    lessonId: "",         // the lesson open (lesson.js), "" for none
    lessonStop: 0,        // its stop shown (0-based)
    hide: [],             // parts a teacher's link hides (HIDE_KEYS): not shown, not focusable
    presetId: "",         // the preset the program came from ("" once edited)
    source: "",           // the program text as typed
    values: {},           // slider overrides {leafName: number}; program edits reset it
    ranges: {},           // per-leaf slider range the user set {name: {min, max}}
    expandDerived: false, // request option: build derived ops from primitives
    finalGrads: false,    // show every final gradient at once (off by default)
    foldConstants: false, // draw constants inside their consumer's card
    gradMap: false,       // colour every card by |grad| at the frame shown (gradmap.js)
    target: null,         // the node whose gradients are asked (target.js), null: the root
    presenting: false,    // presentation mode (classroom.js): large type, editor hidden
    view3d: false,        // the 3D view (view-3d.js) instead of the SVG; without WebGL it stays off
    lang: "",             // the language a link asked for (?lang=, the header's menu: language.js);
                          // "" when the browser's Accept-Language chose it (i18n.js lang(): the page's)
    trace: null,          // the last good /api/graph response (positions included)
    error: null,          // {type, message, line, column, snippet, caret} or null
    step: 0,              // position on the timeline: a frame index (timeline.js framesOf)
    playing: false,
    speed: 1,             // multiplier of the base step interval
    hoverNode: null,      // id of the node under the pointer (its span is lit in the editor)
    busy: false,          // a request is in flight
    // Labs (labs.js): which lab owns the page, and the request options of the teaching variants.
    //   lab: null | "overwrite" (the = bug) | "order" (node clicks place a visit order; other
    //        node-click behaviour stays quiet) | "predict" (the learner guesses each gradient).
    //   mode: request field, "correct" | "overwrite"; order: request field, null | [node ids]
    //   (the visit order that was run); orderDraft: the ids placed so far, not yet run.
    lab: null,
    mode: "correct",
    // The Train lab (lab-train.js), null while it is off: {lr, momentum, params (null: the default
    // leaves), steps (taken so far), start (the leaf values at step 0)}.
    train: null,
    order: null,
    orderDraft: [],
  };
}

/**
 * A store: one state object and the only functions that change it. The page has one (its
 * functions are this module's exports below); each embedded player (embed.js) makes its own, so
 * two players in one document share nothing.
 */
export function createStore() {
  const state = initialState();
  const subscribers = new Set();

  /** Call `fn(state, changed)` now and after every change; returns an unsubscribe function. */
  function subscribe(fn) {
    subscribers.add(fn);
    fn(state, new Set(Object.keys(state)));
    return () => subscribers.delete(fn);
  }

  // Notifications come in rounds: an update() made by a subscriber is queued and applied after
  // the round in progress (queued changes merged into the next round), so every subscriber of a
  // round sees the same state and each change once, in order.
  let notifying = false;
  const queued = [];

  /** Merge `patch` into the state and notify subscribers of the keys whose value changed. */
  function update(patch) {
    queued.push(patch);
    if (notifying) return;
    notifying = true;
    try {
      while (queued.length) {
        const changed = new Set();
        for (const next of queued.splice(0)) {
          for (const [key, value] of Object.entries(next)) {
            if (state[key] !== value) {
              state[key] = value;
              changed.add(key);
            }
          }
        }
        if (changed.size === 0) continue;
        for (const fn of [...subscribers]) fn(state, changed);
      }
    } finally {
      notifying = false;
      queued.length = 0;
    }
  }

  /** Number of positions on the timeline (frames: see timeline.js). */
  function stepCount() {
    return state.trace ? framesOf(state.trace).length : 0;
  }

  let stepGuard = null;

  /**
   * Let a lab hold the timeline (predict mode: no reveal before an answer): `guard(from, to)`
   * returns the furthest frame allowed when moving forward from `from` towards `to`. null
   * removes it.
   */
  function setStepGuard(guard) {
    stepGuard = guard;
  }

  /** Go to timeline position `i` (clamped; a forward move stops where the step guard says). */
  function setStep(i) {
    const last = Math.max(0, stepCount() - 1);
    let step = Math.min(last, Math.max(0, Math.round(Number(i) || 0)));
    if (stepGuard && step > state.step) {
      const allowed = Math.max(state.step, Math.min(step, stepGuard(state.step, step)));
      if (allowed < step) {
        update({ step: allowed, playing: false });
        return;
      }
    }
    update({ step });
  }

  function stepBy(delta) {
    setStep(state.step + delta);
  }

  /**
   * Show a new trace. `step` (a frame index, clamped) places it: 0 for a new program, a shared
   * link's step. Without it (new values of the same program) the step is carried over as the
   * same phase and position in that phase (timeline.js carryFrame), not as a bare frame index.
   */
  function setTrace(trace, { step, resetStep = false } = {}) {
    const last = Math.max(0, framesOf(trace).length - 1);
    let next;
    if (resetStep) next = 0;
    else if (step !== undefined) next = Math.min(last, Math.max(0, Math.round(Number(step) || 0)));
    else next = state.trace ? carryFrame(state.trace, state.step, trace) : Math.min(state.step, last);
    update({ trace, error: null, step: next });
  }

  function setError(error) {
    update({ error, playing: false });
  }

  /** Stop: playing ends and no subscriber is called again (an embedded player taken down). */
  function close() {
    update({ playing: false });
    subscribers.clear();
  }

  return { state, subscribe, update, stepCount, setStepGuard, setStep, stepBy, setTrace, setError, close };
}

/** The page's store. */
export const pageStore = createStore();
export const { state, subscribe, update, stepCount, setStepGuard, setStep, stepBy, setTrace, setError } = pageStore;

// What goes into the URL (share links): name → type. Everything else is derived or transient.
export const URL_FIELDS = {
  preset: { key: "presetId", type: "string" },
  source: { key: "source", type: "string" },
  values: { key: "values", type: "numbers" },
  step: { key: "step", type: "int" },
  expand: { key: "expandDerived", type: "bool" },
  final: { key: "finalGrads", type: "bool" },
  fold: { key: "foldConstants", type: "bool" },
  gradmap: { key: "gradMap", type: "bool" },
  target: { key: "target", type: "string" },
  train: { key: "train", type: "train" },
  lesson: { key: "lessonId", type: "string" },
  stop: { key: "lessonStop", type: "int", when: (s) => Boolean(s.lessonId) },
  hide: { key: "hide", type: "hide" },
  present: { key: "presenting", type: "bool" },
  "3d": { key: "view3d", type: "bool" },
  lang: { key: "lang", type: "lang" },
};

/** The languages of the page (engine/i18n.py LANGS); another `?lang=` is left out of links. */
const LANGS = ["en", "ru", "et"];

/** The parts of the page a teacher's link can hide (`hide=editor,sliders`), in menu order. */
export const HIDE_KEYS = ["editor", "sliders", "toggles", "labs", "tables", "narration"];

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** `name:number,…` → {name: number}, leaving out malformed pairs. */
function decodeNumbers(s) {
  const out = {};
  for (const pair of s.split(",")) {
    const [name, text] = pair.split(":");
    const x = Number(text);
    if (NAME.test(name || "") && text !== "" && Number.isFinite(x)) out[name] = x;
  }
  return out;
}

const encodeNumbers = (v) => Object.entries(v).map(([k, x]) => `${k}:${x}`).join(",");

/**
 * The Train lab in a link: `lr=0.01;m=0;n=20;p=w,b;from=w:0,b:0` (learning rate, momentum,
 * steps taken, parameters (left out: the default ones), the values at step 0).
 */
const trainCodec = {
  encode: (t) => [`lr=${t.lr}`, `m=${t.momentum}`, `n=${t.steps}`, ...(t.params ? [`p=${t.params.join(",")}`] : []),
    `from=${encodeNumbers(t.start ?? {})}`].join(";"),
  decode: (s) => {
    const fields = Object.fromEntries(s.split(";").map((part) => [part.slice(0, part.indexOf("=")), part.slice(part.indexOf("=") + 1)]));
    const lr = Number(fields.lr);
    const momentum = Number(fields.m ?? 0);
    const steps = /^\d+$/.test(fields.n ?? "") ? Number(fields.n) : 0;
    if (!(lr > 0 && Number.isFinite(lr)) || !(momentum >= 0 && momentum < 1)) return undefined;
    const params = fields.p === undefined ? null : fields.p.split(",").filter((name) => NAME.test(name));
    return { lr, momentum, steps, params, start: decodeNumbers(fields.from ?? "") };
  },
};

const codecs = {
  string: { encode: (v) => v, decode: (s) => s },
  int: { encode: (v) => String(v), decode: (s) => (/^\d+$/.test(s) ? Number(s) : undefined) },
  bool: { encode: (v) => (v ? "1" : "0"), decode: (s) => s === "1" },
  numbers: { encode: encodeNumbers, decode: decodeNumbers },
  lang: { encode: (v) => v, decode: (s) => (LANGS.includes(s) ? s : undefined) },
  train: trainCodec,
  hide: {
    encode: (keys) => keys.join(","),
    decode: (s) => HIDE_KEYS.filter((key) => s.split(",").includes(key)),
  },
};

/** The URL query parameters describing `s` (only non-default fields). */
export function toUrlParams(s) {
  const params = new URLSearchParams();
  for (const [name, { key, type, when = () => true }] of Object.entries(URL_FIELDS)) {
    const value = s[key];
    if (value === "" || value === false || value == null || !when(s)) continue;
    if (type === "numbers" && Object.keys(value).length === 0) continue;
    if (type === "hide" && value.length === 0) continue;
    params.set(name, codecs[type].encode(value));
  }
  return params;
}

/** A state patch read from URL query parameters; unknown or malformed fields are ignored. */
export function fromUrlParams(params) {
  const patch = {};
  for (const [name, { key, type }] of Object.entries(URL_FIELDS)) {
    if (!params.has(name)) continue;
    const value = codecs[type].decode(params.get(name));
    if (value !== undefined) patch[key] = value;
  }
  return patch;
}
