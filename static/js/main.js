// Assembles the page: makes its scope, mounts the player's features on the page's elements
// (features.js, as every embedded player has them) and what only the page has (the editor, the
// lessons, the header's actions, the 3D view, the live class), and connects the state to the
// server (programs and slider values go out, traces and errors come back). `scope` is exported
// for tests and scripts (the page's store, and the 3D view's probes).

import { setAttr } from "./core/dom.js";
import { createGraphChannel, fetchLessons, fetchPresets, postDescend, postExpand, postFanIn, postLandscape, postTensorGraph } from "./core/api.js";
import { mountAutogradCheck } from "./sandbox/autograd-check.js";
import { challengeSection } from "./labs/challenges.js";
import { descend } from "./train/descend.js";
import { mountEditor } from "./controls/editor.js";
import { mountExportMenu } from "./io/export-menu.js";
import { mountForwardMode } from "./gradients/forward-mode.js";
import { mountGraphPane, mountLeaves, mountNotes, mountPanels, mountReading, mountTransport, predictSection } from "./features.js";
import { collapseThreshold } from "./graph/groups.js";
import { mountInstantNumbers, pageStructure } from "./compute/instant-numbers.js";
import { orderSection } from "./labs/order.js";
import { overwriteSection } from "./labs/overwrite.js";
import { tensorOverwriteSection, tensorPredictSection } from "./labs/tensor-labs.js";
import { trainSection } from "./train/lab.js";
import { mountLanguageMenu } from "./core/language.js";
import { mountLessonPanel } from "./lessons/panel.js";
import { fromUrlParams, unreadUrlParams } from "./core/links.js";
import { t } from "./core/i18n.js";
import { mountLiveClass } from "./live-class/mount.js";
import { mountModes } from "./core/mode-classes.js";
import { pathsMark, registerPathsPanel } from "./gradients/paths-panel.js";
import { mountPresentation } from "./controls/present.js";
import { mountSandbox, sandboxProgram, sandboxTrace, withRun } from "./sandbox/sandbox.js";
import { createScope } from "./core/scope.js";
import { requestBody as requestOf } from "./core/request.js";
import { keptProgram, mountLinkNote, mountMicrogradCopy, mountShareLink, mountUrlSync, pytorchCopy, saidOfLink } from "./io/share.js";
import { mountTargetPicker } from "./gradients/target.js";
import { mountTheme } from "./core/theme.js";
import { landscapeSection } from "./train/landscape-range.js";
import { view3dMark } from "./view-3d/view.js";
import { mountTensorView } from "./tensor/view.js";

const $ = (id) => document.getElementById(id);

/** The page's scope: the document's keys, its body, and the server's endpoints (descent the
 *  page's own where it can: descendSteps). */
export const scope = createScope({ root: document.body, keyTarget: document, server: { descend: (body) => descendSteps(body), landscape: postLandscape } });
const { store } = scope;
const { state, update } = store;

/**
 * The Train lab's steps (a POST /api/descend body): computed in the page (train/descend.js) on the
 * graph shown when it is the graph of the body's program as the server would build it (not
 * expanded: descent never expands derived operations) and the page can evaluate it, else the
 * server's. The server also answers a body the engine refuses, in its words.
 */
function descendSteps(body) {
  const { trace } = state;
  const shown = trace && !state.expandDerived && trace.source === requestBody().source;
  const structure = shown ? pageStructure(trace) : null;
  return (structure && descend(structure, body)) ?? postDescend(body);
}

function requestBody() {
  // Code that ran in the sandbox is traced as the straight-line program its run was read as.
  return requestOf(state, sandboxProgram(state) ?? state.source);
}

const channel = createGraphChannel({
  // A new program opens at its first step (or a shared link's step); new values of the same
  // program keep the learner where they were (same phase, same position in it).
  // New values: the page painted its own numbers already; the server's confirm them (compute/instant-numbers.js).
  onResult: (trace, meta) => {
    if (trace.kind === "tensor") { // a tensor program's reply: tensor/view.js draws it
      // New values asked before the page could compute them, answered after it did (and was
      // dragged on): the page's numbers are newer (tensor/page-numbers.js).
      const shown = state.tensor;
      if (meta.values && shown?.numbersFrom === "page" && shown.source === trace.source) return;
      store.setTensor(trace, meta.program ? { step: meta.step ?? 0 } : {});
      return;
    }
    const shown = meta.program ? trace : instant.result(trace, meta);
    if (shown) store.setTrace(withRun(shown, state), meta.program ? { step: meta.step ?? 0 } : {});
  },
  onError: (error) => {
    if (!sandbox?.rescue(error.detail)) store.setError(error.detail);
  },
  onBusy: (busy) => update({ busy }),
  current: () => state.trace, // new values of it are asked as numbers only (core/api.js postValues)
  // A graph too big to send, traced in the browser: its reply, at the slider's values.
  local: (body) => {
    const trace = sandboxTrace(state, body);
    return trace && body.values ? instant.painted(trace, body.values) ?? trace : trace;
  },
});

/**
 * Ask for a new trace of the current program. `{program: true, step}` marks a new program, shown
 * from frame `step` (default 0); `{values: true}` a change of leaf values alone; without either
 * options changed.
 */
function recompute(meta = {}) {
  if (meta.program && sandbox?.intercept(state.source, meta)) return; // it runs (or waits), then traces
  channel.send(requestBody(), meta.program ? { program: true, step: meta.step ?? 0 } : meta);
}

let sandbox = null;

/**
 * Show preset `id` (an unknown id: the first preset) at `step` (clamped once its trace arrives).
 * `link`: the rest of a link that names the preset and not its program
 * (`?preset=neuron&gradmap=1&values=x1:3`): its values over the preset's, its toggles, target
 * and pass.
 */
function loadPreset(id, step = 0, link = {}) {
  const preset = state.presets.find((p) => p.id === id) ?? state.presets[0];
  if (!preset) return;
  const { presetId: _id, source: _source, values = {}, ...shown } = link;
  update({
    presetId: preset.id, source: preset.source, values: { ...(preset.values ?? {}), ...values }, playing: false, target: null, wrt: "",
    everyLeaf: null, ranges: {}, loads: state.loads + 1, ...shown,
  });
  recompute({ program: true, step, asked: true }); // the app's own program: it may run
}

/** Show a program that is no preset (a lesson's), from its first step, in `pass` (by leaf `wrt`). */
function loadProgram({ source, values, pass = state.pass, wrt = "" }) {
  update({ presetId: "", source, values: { ...values }, playing: false, target: null, pass, wrt, everyLeaf: null, ranges: {}, loads: state.loads + 1 });
  recompute({ program: true });
}

/** An edited program: its node ids are new, so gradients are of its root again. The viewer's
 *  own: it runs without asking (code from anyone else waits for their Run: sandbox.js). */
function newProgram() {
  update({ target: null, wrt: "", everyLeaf: null });
  recompute({ program: true, asked: true });
}

let instant = null;
let tensorNumbers = null; // the tensor view's own numbers (tensor/page-numbers.js)

/** New leaf values: painted at once from the page's numbers, confirmed by the server's. */
const setValues = (values) => {
  update({ values });
  instant.setValues(values);
};

/** The graph pane, its marks (the 3D view's among them) and the transport. */
function mountStage() {
  const wrap = $("graph-wrap");
  const pane = {
    svg: $("graph"), overlay: $("graph-overlay"), wrap, fitButton: $("fit"), zoomIn: $("zoom-in"), zoomOut: $("zoom-out"),
    legend: wrap.querySelector(".legend"), follow: $("follow"),
  };
  const graph = mountGraphPane(pane, scope, { collapseAt: collapseThreshold(new URLSearchParams(window.location.search)) });
  // While a run or a trace request is in flight the drawing is the previous one: say so.
  scope.store.subscribe((s, changed) => {
    if (changed.has("busy")) setAttr(wrap, "aria-busy", String(Boolean(s.busy)));
  });
  graph.marks.register(pathsMark());
  mountTargetPicker(graph, scope);
  mountForwardMode({ leaves: document.querySelector(".leaves") }, scope);
  graph.marks.register(view3dMark({ graph, tools: wrap.querySelector(".graph-tools"), zoomIn: pane.zoomIn, zoomOut: pane.zoomOut, legend: pane.legend }, scope));
  mountTransport({
    toStart: $("to-start"), back: $("step-back"), play: $("play"), forward: $("step-forward"),
    toEnd: $("to-end"), scrub: $("scrub"), speed: $("speed"), phase: $("phase"), part: $("phase-part"),
    jumpForward: $("jump-forward"), jumpBackward: $("jump-backward"), narration: $("narration"),
  }, scope);
  return graph;
}

/** The header's actions: share, export (and torch.py), micrograd.py, presentation, language, theme. */
function mountHeader() {
  const actions = $("header-actions");
  mountShareLink(actions, scope);
  mountExportMenu(actions, scope, { requestBody, extra: [pytorchCopy(scope)] });
  mountMicrogradCopy(actions, scope);
  mountPresentation(actions, scope);
  mountLanguageMenu($("lang"), scope);
  mountTheme($("theme-toggle"));
}

let lessons = null;
let liveClass = { joining: false };
let followUrl = () => {}; // the URL follows the state from this call on (io/share.js mountUrlSync)

function mount() {
  instant = mountInstantNumbers({ notice: $("numbers-notice"), body: document.body }, scope, { recompute });
  mountModes(scope);
  // First: while a lesson is open, its Space and arrows come before the transport's.
  lessons = mountLessonPanel({ after: $("narration"), menu: $("lessons") }, scope, { loadProgram });
  const graph = mountStage();
  mountEditor({
    textarea: $("source"), gutter: $("gutter"), backdrop: $("backdrop"), errorBox: $("error"),
    presetSelect: $("presets"), presetNote: $("preset-note"),
  }, scope, { onProgram: newProgram, onPreset: loadPreset });
  mountNotes($("program-notes"), scope);
  tensorNumbers = mountTensorView({
    pane: $("tensor-pane"), svg: $("tensor-graph"), fanIn: $("tensor-fan-in"), fanInText: $("tensor-fan-in-text"),
    fanInClose: $("tensor-fan-in-close"), readout: $("tensor-readout"), cells: $("tensor-cells"), root: document.body,
  }, scope, { requestBody, setValues, server: { postFanIn, postTensorGraph, postExpand } });
  sandbox = mountSandbox({ panel: $("sandbox"), send: (meta) => channel.send(requestBody(), meta) }, scope);
  mountAutogradCheck({ panel: $("sandbox"), graph }, scope);
  mountLeaves($("sliders"), scope, { onValue: (name, value) => setValues({ ...state.values, [name]: value }) });
  // The page's Train lab has the loss landscape (its grids are the server's).
  const trainLab = (on, setLab, options) => trainSection(on, setLab, { ...options, landscape: landscapeSection });
  const labs = [overwriteSection, orderSection, predictSection, trainLab, challengeSection, tensorOverwriteSection, tensorPredictSection];
  mountPanels({ section: $("panels"), tabs: $("panel-tabs"), bodies: $("panel-bodies") }, scope, { labs, labsFirst: true, setValues });
  registerPathsPanel(scope, { requestBody });
  // A lab switching the variant (the = bug, a visit order), or another target of the program
  // shown, asks for its trace (a new program resets the target and asks for itself).
  store.subscribe((s, changed) => {
    const variant = changed.has("mode") || changed.has("order");
    const shown = requestBody().source === s.trace?.source;
    const target = changed.has("target") && shown;
    if (s.source && (variant || target)) recompute();
    // The other pass, or forward mode by another leaf: another timeline, from its start.
    if (s.source && shown && (changed.has("pass") || changed.has("wrt"))) recompute({ program: true, step: 0 });
  });
  mountReading(graph, {
    finalGrads: $("toggle-final-grads"), expandDerived: $("toggle-expand"), foldConstants: $("toggle-fold"), gradMap: $("toggle-gradmap"),
  }, scope);
  mountHeader();
  followUrl = mountUrlSync(scope);
  liveClass = mountLiveClass({ actions: $("header-actions"), workspace: document.querySelector(".workspace"), pane: $("graph-wrap") }, scope, {
    // A tensor program's new values (the teacher's, a gathered student's) from the page's numbers.
    recompute, paint: (values) => (state.tensor && !state.trace ? tensorNumbers.paint(values) : instant.paintOnly(values)),
  });
  $("toggle-expand").addEventListener("change", (event) => {
    update({ expandDerived: event.target.checked, target: null }); // node ids change
    recompute({ program: true });
  });
}

async function start() {
  mount();
  const params = new URLSearchParams(window.location.search);
  const fromUrl = fromUrlParams(params);
  // A program too long for a link (`kept=1`): kept in the tab that made it (io/share.js).
  const kept = params.get("kept") === "1" ? keptProgram() : null;
  if (kept) Object.assign(fromUrl, kept);
  const keptLost = params.get("kept") === "1" && !kept;
  try {
    const [presets, lessonList] = await Promise.all([fetchPresets(), fetchLessons()]);
    update({ presets, lessons: lessonList });
  } catch (err) {
    store.setError(err.detail ?? { type: "Error", message: String(err) });
  }
  const { lessonId, lessonStop = 0, hide = [], presenting = false, view3d = false, lang = "" } = fromUrl;
  update({ hide, presenting, view3d, lang });
  if (liveClass.joining) { // a student's page opens on the teacher's view; refused, on a preset
    followUrl(); // its link is the class's: no note on the rest of it
    liveClass.refused.then(() => { if (!state.trace) loadPreset(state.presets[0]?.id); });
    return;
  }
  const note = mountLinkNote($("link-note"), scope);
  if (lessonId && state.lessons.some((lesson) => lesson.id === lessonId)) {
    lessons.open(lessonId, lessonStop); // `?lesson=<id>&stop=<k>` opens that stop
    followUrl();
    note.say(linkNotes(params, fromUrl, keptLost));
    return;
  }
  const known = (id) => state.presets.some((p) => p.id === id);
  // `?preset=<unknown>` (an old link, a typo) opens the first preset, not a blank page.
  const presetId = [fromUrl.presetId, document.body.dataset.presetId].find(known) ?? state.presets[0]?.id;
  const { step = 0, lessonId: _lesson, lessonStop: _stop, ...patch } = fromUrl;
  if (fromUrl.source) {
    update({ ...patch, presetId: known(fromUrl.presetId) ? fromUrl.presetId : "" });
    recompute({ program: true, step });
  } else if (presetId) {
    loadPreset(presetId, step, patch);
  }
  followUrl();
  note.say(linkNotes(params, fromUrl, keptLost));
  watchLink(fromUrl, step, note);
}

/** What the page says of its link (`params`, read as `fromUrl`) once it has opened it: a preset
 *  or lesson it names that is not here, a program kept in another tab (`keptLost`), and what it
 *  could not read. */
function linkNotes(params, fromUrl, keptLost = false) {
  const notes = [];
  if (keptLost) notes.push(t("ui.link.kept_elsewhere"));
  const { presetId, lessonId, source } = fromUrl;
  if (lessonId && !state.lessons.some((lesson) => lesson.id === lessonId)) notes.push(t("ui.link.unknown_lesson", { id: saidOfLink(lessonId) }));
  const shown = state.presets.find((p) => p.id === state.presetId);
  if (presetId && !source && presetId !== state.presetId && shown) notes.push(t("ui.link.unknown_preset", { id: saidOfLink(presetId), title: shown.title }));
  const unread = unreadUrlParams(params).map(saidOfLink);
  if (unread.length) notes.push(t("ui.link.unread", { fields: unread.join(", ") }));
  return notes;
}

/**
 * The rest of the link (`fromUrl`, opened at `step`) against its program, when the program's first
 * trace or refusal comes: a target that names no node, or a leaf of forward mode that is no leaf,
 * is left out (the root's gradients; forward mode by the first leaf) instead of a page that shows
 * nothing, and said in the link's `note`. (A value for a name that is no leaf is the trace's own
 * warning, among the program's notes.)
 */
function watchLink(fromUrl, step, note) {
  const { target, wrt } = fromUrl;
  const refused = new Set(); // the refusals answered here: the state holds each until the next trace
  let forwardRefused = false;
  let done = false;
  let stop = null;
  const finish = () => {
    done = true;
    stop?.();
  };
  const retry = (error, patch) => {
    refused.add(error);
    update(patch); // applied once this notice is over (the store queues it): then asked for
    queueMicrotask(() => recompute({ program: true, step }));
  };
  stop = store.subscribe((s) => {
    if (done || (!s.trace && !s.tensor && !s.error) || refused.has(s.error)) return;
    if (s.error?.type === "BadTarget" && target && s.target === target) {
      note.say([t("ui.link.unknown_target", { target: saidOfLink(target) })]);
      retry(s.error, { target: null });
    } else if (s.error?.type === "BadWrt" && wrt && s.pass === "forward" && s.wrt === wrt) {
      forwardRefused = true;
      retry(s.error, { pass: "reverse", wrt: "" }); // for the program's leaves, then forward mode by the first
    } else if (s.error) {
      finish(); // the program's own error: the error box says it
    } else {
      const leaf = s.trace?.leaves[0]?.name;
      finish();
      if (forwardRefused && leaf) {
        note.say([t("ui.link.unknown_wrt", { wrt: saidOfLink(wrt), leaf })]);
        update({ pass: "forward", wrt: leaf }); // its trace is asked for (mount: the pass changed)
      }
    }
  });
  if (done) stop();
}

start();
