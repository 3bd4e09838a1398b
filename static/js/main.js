// Assembles the page: finds the layout's elements, mounts each view, and connects the state to
// the server (programs and slider values go out, traces and errors come back).

import { createGraphChannel, fetchLessons, fetchPresets } from "./api.js";
import { mountClassroom } from "./classroom.js";
import { mountEditor } from "./editor.js";
import { mountGraph } from "./graph-view.js";
import { collapseThreshold } from "./groups.js";
import { mountHiding } from "./hide.js";
import { mountLanguageMenu } from "./language.js";
import { mountLesson } from "./lesson.js";
import { mountLiveClass } from "./live-class.js";
import { mountLabs } from "./labs.js";
import { mountNotes } from "./notes.js";
import { mountPanelArea } from "./panels.js";
import { mountRealSize } from "./real-size.js";
import { mountAutogradCheck } from "./autograd-check.js";
import { mountSandbox, sandboxProgram, withRun } from "./sandbox.js";
import { mountSliders } from "./sliders.js";
import { fromUrlParams, setError, setTrace, state, subscribe, update } from "./state.js";
import { mountTheme } from "./theme.js";
import { mountTransport } from "./transport.js";
import { mountView3d } from "./view-3d.js";

const $ = (id) => document.getElementById(id);

function requestBody() {
  // Code that ran in the sandbox is traced as the straight-line program its run was read as.
  const body = { source: sandboxProgram(state) ?? state.source };
  if (Object.keys(state.values).length) body.values = { ...state.values };
  if (state.expandDerived) body.expand_derived = true;
  if (state.mode === "overwrite") body.mode = "overwrite";
  if (state.order) body.order = [...state.order];
  return body;
}

const channel = createGraphChannel({
  // A new program opens at its first step (or a shared link's step); new values of the same
  // program keep the learner where they were (same phase, same position in it).
  onResult: (trace, meta) => setTrace(withRun(trace, state), meta.program ? { step: meta.step ?? 0 } : {}),
  onError: (error) => {
    if (!sandbox?.rescue(error.detail)) setError(error.detail);
  },
  onBusy: (busy) => update({ busy }),
  current: () => state.trace, // new values of it are asked as numbers only (api.js postValues)
});

/**
 * Ask for a new trace of the current program. `{program: true, step}` marks a new program, shown
 * from frame `step` (default 0); `{values: true}` a change of leaf values alone; without either
 * options changed.
 */
function recompute(meta = {}) {
  if (meta.program && sandbox?.intercept(state.source, meta)) return; // it runs, then traces
  channel.send(requestBody(), meta.program ? { program: true, step: meta.step ?? 0 } : meta);
}

let sandbox = null;

/** Show preset `id` (an unknown id: the first preset) at `step` (clamped once its trace arrives). */
function loadPreset(id, step = 0) {
  const preset = state.presets.find((p) => p.id === id) ?? state.presets[0];
  if (!preset) return;
  update({ presetId: preset.id, source: preset.source, values: { ...(preset.values ?? {}) }, playing: false });
  recompute({ program: true, step });
}

/** Show a program that is no preset (a lesson's), from its first step. */
function loadProgram({ source, values }) {
  update({ presetId: "", source, values: { ...values }, playing: false });
  recompute({ program: true });
}

let lessons = null;
let liveClass = { joining: false };

function mount() {
  // First: while a lesson is open, its Space and arrows come before the transport's.
  lessons = mountLesson({ panel: $("lesson"), menu: $("lessons"), loadProgram });
  mountHiding();
  const graph = mountGraph({ svg: $("graph"), overlay: $("graph-overlay"), wrap: $("graph-wrap"), fitButton: $("fit"), zoomIn: $("zoom-in"), zoomOut: $("zoom-out"),
    collapseAt: collapseThreshold(new URLSearchParams(window.location.search)) });
  mountView3d({
    wrap: $("graph-wrap"), tools: $("graph-wrap").querySelector(".graph-tools"), legend: $("graph-wrap").querySelector(".legend"),
    fitButton: $("fit"), zoomIn: $("zoom-in"), zoomOut: $("zoom-out"),
  });
  mountTransport({
    toStart: $("to-start"), back: $("step-back"), play: $("play"), forward: $("step-forward"),
    toEnd: $("to-end"), scrub: $("scrub"), speed: $("speed"), phase: $("phase"), part: $("phase-part"),
    jumpForward: $("jump-forward"), jumpBackward: $("jump-backward"), narration: $("narration"),
  }, graph.player);
  mountEditor({
    textarea: $("source"), gutter: $("gutter"), backdrop: $("backdrop"), errorBox: $("error"),
    presetSelect: $("presets"), presetNote: $("preset-note"),
  }, { onProgram: () => recompute({ program: true }), onPreset: loadPreset });
  mountNotes($("program-notes"));
  sandbox = mountSandbox({ panel: $("sandbox"), send: (meta) => channel.send(requestBody(), meta) });
  mountAutogradCheck({ panel: $("sandbox"), svg: $("graph") });
  mountSliders($("sliders"), {
    onValue: (name, value) => {
      update({ values: { ...state.values, [name]: value } });
      recompute({ values: true });
    },
  });
  mountRealSize({
    svg: $("graph"), wrap: $("graph-wrap"), graph, followButton: $("follow"), gradmapToggle: $("toggle-gradmap"),
    legend: $("graph-wrap").querySelector(".legend"), sliders: $("sliders"),
  });
  mountPanelArea({ section: $("panels"), tabs: $("panel-tabs"), bodies: $("panel-bodies") });
  mountLabs({
    svg: $("graph"),
    setValues: (values) => {
      update({ values });
      recompute({ values: true });
    },
  });
  // A lab switching the variant (the = bug, a visit order) asks for the variant's trace.
  subscribe((s, changed) => {
    if (s.source && (changed.has("mode") || changed.has("order"))) recompute();
  });
  mountTheme($("theme-toggle"));
  mountLanguageMenu($("lang"));
  mountClassroom({ requestBody });
  liveClass = mountLiveClass({ recompute, actions: $("header-actions") });

  $("toggle-expand").addEventListener("change", (event) => {
    update({ expandDerived: event.target.checked });
    recompute({ program: true });
  });
}

async function start() {
  mount();
  const fromUrl = fromUrlParams(new URLSearchParams(window.location.search));
  try {
    const [presets, lessonList] = await Promise.all([fetchPresets(), fetchLessons()]);
    update({ presets, lessons: lessonList });
  } catch (err) {
    setError(err.detail ?? { type: "Error", message: String(err) });
  }
  const { lessonId, lessonStop = 0, hide = [], presenting = false, view3d = false, lang = "" } = fromUrl;
  update({ hide, presenting, view3d, lang });
  if (liveClass.joining) return; // a student's page opens on the teacher's view
  if (lessonId && state.lessons.some((lesson) => lesson.id === lessonId)) {
    lessons.open(lessonId, lessonStop); // `?lesson=<id>&stop=<k>` opens that stop
    return;
  }
  const known = (id) => state.presets.some((p) => p.id === id);
  // `?preset=<unknown>` (an old link, a typo) opens the first preset, not a blank page.
  const presetId = [fromUrl.presetId, document.body.dataset.presetId].find(known) ?? state.presets[0]?.id;
  const { step = 0, lessonId: _lesson, lessonStop: _stop, ...patch } = fromUrl;
  if (fromUrl.source) {
    update({ ...patch, presetId: known(fromUrl.presetId) ? fromUrl.presetId : "" });
    $("toggle-expand").checked = state.expandDerived;
    recompute({ program: true, step });
  } else if (presetId) {
    loadPreset(presetId, step);
  }
}

start();
