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
import { mountLabs } from "./labs.js";
import { mountNotes } from "./notes.js";
import { mountPanelArea } from "./panels.js";
import { mountRealSize } from "./real-size.js";
import { mountSliders } from "./sliders.js";
import { fromUrlParams, setError, setTrace, state, subscribe, update } from "./state.js";
import { mountGradmapFlags } from "./gradmap-flags.js";
import { mountPaths } from "./paths-panel.js";
import { mountTarget } from "./target.js";
import { mountTheme } from "./theme.js";
import { mountTransport } from "./transport.js";
import { mountView3d } from "./view-3d.js";

const $ = (id) => document.getElementById(id);

function requestBody() {
  const body = { source: state.source };
  if (Object.keys(state.values).length) body.values = { ...state.values };
  if (state.expandDerived) body.expand_derived = true;
  if (state.mode === "overwrite") body.mode = "overwrite";
  if (state.order) body.order = [...state.order];
  if (state.target) body.target = state.target;
  return body;
}

const channel = createGraphChannel({
  // A new program opens at its first step (or a shared link's step); new values of the same
  // program keep the learner where they were (same phase, same position in it).
  onResult: (trace, meta) => setTrace(trace, meta.program ? { step: meta.step ?? 0 } : {}),
  onError: (error) => setError(error.detail),
  onBusy: (busy) => update({ busy }),
  current: () => state.trace, // new values of it are asked as numbers only (api.js postValues)
});

/**
 * Ask for a new trace of the current program. `{program: true, step}` marks a new program, shown
 * from frame `step` (default 0); `{values: true}` a change of leaf values alone; without either
 * options changed.
 */
function recompute(meta = {}) {
  channel.send(requestBody(), meta.program ? { program: true, step: meta.step ?? 0 } : meta);
}

/** Show preset `id` (an unknown id: the first preset) at `step` (clamped once its trace arrives). */
function loadPreset(id, step = 0) {
  const preset = state.presets.find((p) => p.id === id) ?? state.presets[0];
  if (!preset) return;
  update({ presetId: preset.id, source: preset.source, values: { ...(preset.values ?? {}) }, playing: false, target: null });
  recompute({ program: true, step });
}

/** Show a program that is no preset (a lesson's), from its first step. */
function loadProgram({ source, values }) {
  update({ presetId: "", source, values: { ...values }, playing: false, target: null });
  recompute({ program: true });
}

let lessons = null;

/** An edited program: its node ids are new, so gradients are of its root again. */
function newProgram() {
  update({ target: null });
  recompute({ program: true });
}

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
  }, { onProgram: () => newProgram(), onPreset: loadPreset });
  mountNotes($("program-notes"));
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
  mountTarget({ svg: $("graph"), wrap: $("graph-wrap"), graph });
  mountGradmapFlags({ svg: $("graph"), legend: $("graph-wrap").querySelector(".legend"), graph });
  mountPaths({ svg: $("graph"), requestBody });
  // A lab switching the variant (the = bug, a visit order) or another target asks for its trace.
  subscribe((s, changed) => {
    if (s.source && (changed.has("mode") || changed.has("order") || changed.has("target"))) recompute();
  });
  mountTheme($("theme-toggle"));
  mountLanguageMenu($("lang"));
  mountClassroom({ requestBody });

  $("toggle-expand").addEventListener("change", (event) => {
    update({ expandDerived: event.target.checked, target: null }); // node ids change
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
