// The embeddable player: the page's own features (features.js: graph with the pulse and its
// marks, the gradient map, minimap and Follow, transport and keys, narration, click-a-card
// explanations, tables, the predict lab, the Train lab, leaf sliders, "copy as micrograd") mounted
// on a scope of its own in a shadow root on any element: a Jupyter output (anywidget), a one-file
// HTML export (app/export/onefile.py). The Train lab descends in the player (train/descend.js: offline, from
// file://, with the kernel busy or gone); its landscape needs the server and is not shown. What
// needs the server (the other labs, the lessons, the editor, exports) and the 3D view (three.js:
// ~0.7 MB more in every output) stay the page's. Bundled
// with the player's CSS into static/embed/chainrule-embed.js (`make bundle`; static/vendor/README.md).
//
// mountPlayer(host, {trace, ops, ui, recompute = null, title = "", graph = null}) -> {setTrace, setError, destroy}
//   trace      a POST /api/graph reply (nodes with x/y/width/height, `layout`, `structure`; its
//              steps as columns, read by core/step-columns.js: so are setTrace's and recompute's),
//              or a tensor program's (`kind: "tensor"`: drawn by tensor/view.js).
//   graph      with a tensor program's trace, its scalar graph (POST /api/tensor-graph's reply):
//              a leaf cell's drag recomputes every tensor in the player (tensor/recompute.js).
//   ops        engine/ops.py page_table(): the table of operations the cards and formulas use.
//   ui         engine/i18n.py ui_catalogue(lang): the player's words, {lang, text: {key after
//              "ui." → template}} from locales/<lang>.json (core/i18n.js); the trace's narration and
//              notes are in the language it was traced in, so give both the same one. Without
//              it the player shows catalogue keys. One language per document: the last given.
//   recompute  optional, `(values) => Promise<trace> | undefined` with values = {leaf name:
//              number} for every leaf (the moved one changed). The sliders are live either way:
//              a move is painted at once from the page's own numbers (compute/instant-numbers.js, compute/evaluator.js:
//              offline, from file://, with the kernel busy or gone); with `recompute` the
//              engine's trace then follows and is shown (it is the authority) if no later move
//              was made (latest wins, one call at a time, the newest move waiting); a call that
//              returns nothing answers later through setTrace / setError.
//   title      shown in the player's title bar.
//   values     optional, {leaf name: number}: the values `trace` was traced with, where the
//              sliders and a tensor program's cells start (its `values` keys, `W[1,2]`).
//   fanIn      optional, `(body) => Promise<reply>`: a POST /api/fan-in body (docs/api.md) answered,
//              for a tensor program's gradient cell (tensor/view.js): the kernel in a notebook
//              (the anywidget below); without it a gradient cell's sum says it needs one.
// A tensor program's reply (`kind: "tensor"`, docs/tensors.md) is drawn by the page's tensor view
// (tensor/): its cards, the pulse op by op, a gradient cell's fan-in, a leaf cell's editor (its
// change is a `recompute` with values {"W[1,2]": number}).
//   setTrace(trace)  show a new trace (same program: the same phase and place in it is kept).
//   setError(error)  show {type, message, line?, column?, snippet?, caret?} in the error box
//                    (the API's error shape); the next trace clears it.
//   destroy()        stop playing, unbind the keys, empty the shadow root.
// The player root inside the shadow root (data-testid="player") carries data-step-index,
// data-phase and data-api-step; cards, transport and tables carry the page's data-testid hooks.
// Keys (Space, arrows, Home, End, Escape) act only while the focus is inside the player, and the
// wheel zooms the graph only then (or with Ctrl/⌘, a pinch): a page scrolls past a player.
//
// anywidget (the default export), the contract with chainrule.notebook's Widget. Traits:
//   trace_zlib bytes (kernel -> page) the trace shown, its JSON zlib-compressed (a binary buffer:
//                 a DataView), inflated here with DecompressionStream; each change is shown with
//                 setTrace, the newest one only. Empty while a big graph's first view is shown.
//   first_view bytes (kernel -> page) a big graph's first view (engine/reply.py
//                 `first_view_reply`, packed as trace_zlib) while the kernel makes its trace:
//                 drawn at render when there is no trace yet (graph/first-view.js), the player
//                 mounted in its place when `trace_zlib` comes. Emptied then.
//   ops    dict   (kernel -> page) page_table(), read at render.
//   title  str    (kernel -> page) read at render.
//   ui     dict   (kernel -> page) ui_catalogue(lang), read at render; English by default
//                 (chainrule.show(..., lang="ru") traces and speaks Russian).
//   values dict   (page -> kernel) {leaf name: number}, set and saved on every slider move;
//                 the kernel answers by setting `trace_zlib` (and `error` to None) or `error`.
//                 Read at render too: the values the kernel traced `trace` with.
//   error  dict | None  (kernel -> page) {type, message, line, column, snippet, caret}: shown in
//                 the player's error box; None shows nothing new.
//   drawing str   (kernel -> page) the id of the static drawing output shown before the player
//                 (`.chainrule-static[data-chainrule-drawing=id]`): hidden while the player lives.
// Messages (anywidget's custom messages), for a tensor program's fan-in, computed in the kernel:
//   page -> kernel  {fan_in: {id, tensor, index, values}}
//   kernel -> page  {fan_in: {id, reply}} (POST /api/fan-in's reply) or {fan_in: {id, error}}.
// In Jupyter this module is loaded by chainrule.notebook.widget's LOADER (the player's `_esm`),
// from the one `Library` widget that holds it, and its render is called with the player's model.
// render resolves to the cleanup function (listeners off, player destroyed).

import { setPreText, setText } from "./core/dom.js";
import PLAYER_CSS from "../embed/chainrule-embed.css";
import { ApiError } from "./core/api-error.js";
import { descend } from "./train/descend.js";
import { renderError } from "./controls/editor.js";
import { mountGraphPane, mountLeaves, mountNotes, mountPanels, mountReading, mountTransport, predictSection } from "./features.js";
import { t, useCatalogue } from "./core/i18n.js";
import { createInstantNumbers, pageStructure } from "./compute/instant-numbers.js";
import { playerLayout } from "./embed-layout.js";
import { trainSection } from "./train/lab.js";
import { mountModes } from "./core/mode-classes.js";
import { useOpTable } from "./compute/ops.js";
import { createScope } from "./core/scope.js";
import { mountMicrogradCopy } from "./io/share.js";
import { withStepObjects } from "./core/step-columns.js";
import { frameOfStep, traceIndex } from "./core/frames.js";
import { mountTensorView } from "./tensor/view.js";
import { bytesOfBase64, inflatedJson } from "./io/packed-json.js";
import { expandTrace } from "./io/onefile-trace.js";
import { firstView } from "./graph/first-view.js";

// A one-file HTML's trace, as the file holds it, written back as its reply (app/export/onefile.py's boot).
export { expandTrace };

/** A one-file HTML's data block (app/export/onefile.py `packed_block`: base64 of zlib-compressed
 *  JSON) as the value it holds. */
export const unpackedBlock = (text) => inflatedJson(bytesOfBase64(text.trim()));

/** Show `reply` in `store`: a tensor program's with the tensor view, a scalar trace as the page does. */
function showReply(store, reply, options) {
  if (reply?.kind === "tensor") store.setTensor(reply, options);
  else store.setTrace(withStepObjects(reply), options);
}

// A sort this long opens the player where the backward pass starts (the seed, root.grad = 1;
// Home goes back to the sort, Forward to the forward pass): a big graph's sort is hundreds of
// steps (the lecture's MLP loss: 967, 16 minutes at 1×) before anything flows, and a learner who
// called loss.backward() came for the gradients, which start at the root, where the first view
// is (graph/view.js fits on the step's node).
const LONG_SORT_STEPS = 100;

/** Where the player opens on `trace`: the first step, or past a long sort. */
function openingFrame(trace) {
  const { topo, seed } = traceIndex(trace).phases;
  if (!topo || !seed || topo.last - topo.first + 1 < LONG_SORT_STEPS) return 0;
  return Math.max(0, frameOfStep(trace, seed.first));
}

let sheet = null;

/** The player's styles in `shadow`: one constructed sheet for every player of the document. */
function adoptStyles(shadow) {
  if ("adoptedStyleSheets" in shadow && typeof CSSStyleSheet.prototype.replaceSync === "function") {
    if (!sheet) {
      sheet = new CSSStyleSheet();
      sheet.replaceSync(PLAYER_CSS);
    }
    shadow.adoptedStyleSheets = [sheet];
    return null;
  }
  const style = document.createElement("style"); // browsers before constructable sheets
  style.textContent = PLAYER_CSS;
  return style;
}

/** Every leaf's value in `trace` ({name: number}, finite ones), with `overrides` on top. */
function leafValues(trace, overrides) {
  const values = {};
  for (const leaf of trace?.leaves ?? []) {
    const value = Number(leaf.value);
    if (Number.isFinite(value)) values[leaf.name] = value;
  }
  return { ...values, ...overrides };
}

/**
 * Calls `recompute(values)` one at a time: a move made while one is running waits, replaced by
 * any newer move; only the newest move's reply (or failure) is shown.
 */
function createRecomputer(recompute, store) {
  let running = false;
  let waiting = null;
  async function run(values) {
    running = true;
    try {
      const trace = await recompute(values);
      if (!waiting && trace) showReply(store, trace);
    } catch (err) {
      if (!waiting) store.setError(err?.detail ?? { type: err?.name ?? "Error", message: String(err?.message ?? err) });
    }
    running = false;
    if (waiting) {
      const next = waiting;
      waiting = null;
      run(next);
    }
  }
  return (values) => {
    if (running) waiting = values;
    else run(values);
  };
}

/**
 * The Train lab's steps (a POST /api/descend body) on the graph shown, computed by the player
 * (train/descend.js): there is no server to ask. A graph the page cannot evaluate (a program's own
 * function) or a body the engine would refuse is said as a BadTraining error.
 */
function descendHere(store, body) {
  const structure = pageStructure(store.state.trace);
  const reply = structure ? descend(structure, body) : null;
  if (reply === null) throw new ApiError({ type: "BadTraining", message: t("ui.train.cannot_here") });
  return reply;
}

/** The player's features on `view` (embed-layout.js), as the page mounts them (features.js);
 *  returns the tensor view's numbers (tensor/view.js). */
function mountFeatures(view, scope, recompute, fanIn) {
  const { store } = scope;
  const focused = () => view.root.getRootNode().activeElement !== null;
  mountModes(scope);
  const graph = mountGraphPane(view.graph, scope, { wheelZooms: (event) => event.ctrlKey || event.metaKey || focused() });
  mountTransport(view.transport, scope);
  const send = recompute ? createRecomputer(recompute, store) : null;
  const instant = createInstantNumbers();
  /** New leaf values (a slider, a step of the Train lab): painted from the page's numbers, then
   *  the engine's asked for where there is one (`recompute`). */
  const setValues = (overrides) => {
    store.update({ values: overrides });
    const shown = store.state.trace;
    // The page's numbers take the leaves not moved from the trace (compute/instant-numbers.js);
    // the engine is sent every leaf's value.
    const painted = shown ? instant.paint(shown, overrides) : null;
    if (painted) store.setTrace(painted);
    if (send) send(leafValues(shown, overrides));
  };
  mountLeaves(view.sliders, scope, { onValue: (name, value) => setValues({ ...store.state.values, [name]: value }) });
  mountNotes(view.notes, scope);
  // The labs that need no server: predicting, and training (the player descends on its own).
  mountPanels(view.panels, scope, { labs: [predictSection, trainSection], setValues });
  mountReading(graph, view.toggles, scope);
  mountMicrogradCopy(view.actions, scope);
  const requestBody = () => ({ source: store.state.tensor?.source ?? "", values: store.state.values });
  const noFanIn = async () => {
    throw new ApiError({ type: "NoKernel", message: t("ui.tensor.fan_in_needs_kernel") });
  };
  // A tensor program's view: its cells' drags computed in the player from the scalar graph when it
  // is given (a one-file HTML: tensor/page-numbers.js), else by `recompute` (the notebook's kernel);
  // a gradient's sum the player's own, else the kernel's (`fanIn`), else none.
  return mountTensorView({ ...view.tensor, root: view.root }, scope, {
    requestBody, setValues, server: { postFanIn: fanIn ?? noFanIn, postTensorGraph: null },
  });
}

export function mountPlayer(host, { trace, ops, ui, recompute = null, title = "", fanIn = null, values = null, graph = null }) {
  if (ops) useOpTable(ops);
  if (ui) useCatalogue(ui);
  const shadow = host.shadowRoot ?? host.attachShadow({ mode: "open" });
  const view = playerLayout({ title });
  const style = adoptStyles(shadow);
  shadow.replaceChildren(...(style ? [style] : []), view.root);

  // The page's mounting order (main.js): its key bindings are tried in this order.
  const scope = createScope({
    root: view.root, keyTarget: shadow, contain: true, server: { descend: (body) => descendHere(scope.store, body) },
  });
  const { store } = scope;
  const tensorNumbers = mountFeatures(view, scope, recompute, fanIn);
  if (values && Object.keys(values).length) store.update({ values: { ...values } });
  let shownSource = null;
  store.subscribe((s, changed) => {
    if (changed.has("error")) renderError(view.errorBox, s.error);
    const shown = s.trace ?? s.tensor;
    // A slider's new numbers keep their drawing's source (the same string): read once.
    if ((changed.has("trace") || changed.has("tensor")) && shown?.source !== shownSource) {
      shownSource = shown?.source;
      const source = typeof shownSource === "string" ? shownSource.trim() : "";
      setPreText(view.source, source);
      view.source.hidden = !source;
    }
  });
  if (trace?.kind === "tensor") {
    store.setTensor(trace, { step: 0 });
    // No server: the numbers are the player's from the start (a gradient's sum is then its own).
    if (graph) {
      tensorNumbers.use(graph);
      tensorNumbers.paint(store.state.values);
    }
  } else if (trace) {
    const shown = withStepObjects(trace);
    const opening = openingFrame(shown);
    store.setTrace(shown, { step: opening });
    if (opening > 0) {
      // Said once, beside the phase: how long the sort is, and the key that shows it.
      const { topo } = traceIndex(shown).phases;
      setText(view.transport.sortNote, t("ui.transport.sort_skipped", { count: topo.last - topo.first + 1 }));
      view.transport.sortNote.hidden = false;
    }
  }

  return {
    setTrace(next) {
      showReply(store, next);
    },
    setError(error) {
      store.setError(error);
    },
    destroy() {
      store.close();
      scope.keys.close();
      shadow.replaceChildren();
      if ("adoptedStyleSheets" in shadow) shadow.adoptedStyleSheets = [];
    },
  };
}

/** Follow Jupyter's theme (light or dark) where the notebook says which it is. */
function jupyterTheme() {
  const light = document.body?.dataset.jpThemeLight;
  return light === undefined ? null : light === "true" ? "light" : "dark";
}

/** The static drawing a notebook shows before this player (chainrule.notebook.widget): one copy
 *  of the graph for viewers without widgets, in the same document in JupyterLab, Notebook 7 and
 *  VS Code (a front end that puts each output in a frame of its own keeps it out of reach). */
function staticDrawings(id) {
  if (!id || typeof document === "undefined") return [];
  return [...document.querySelectorAll(`.chainrule-static[data-chainrule-drawing="${CSS.escape(id)}"]`)];
}

/**
 * A tensor cell's fan-in asked of the kernel (chainrule.notebook's Widget computes it with the
 * engine: there is no server): {fanIn(body) → Promise<reply>, onMessage (the model's custom
 * messages), close()}; each ask has its id, and a player gone leaves no ask waiting.
 */
function createKernelFanIn(model) {
  const waiting = new Map(); // id -> {resolve, reject}
  let asked = 0;
  return {
    fanIn({ tensor, index, values }) {
      const id = ++asked;
      return new Promise((resolve, reject) => {
        waiting.set(id, { resolve, reject });
        model.send({ fan_in: { id, tensor, index, values: values ?? {} } });
      });
    },
    onMessage(message) {
      const answer = message?.fan_in;
      const ask = answer ? waiting.get(answer.id) : undefined;
      if (!ask) return;
      waiting.delete(answer.id);
      if (answer.error) ask.reject(new ApiError(answer.error));
      else ask.resolve(answer.reply);
    },
    close() {
      waiting.clear();
    },
  };
}

/** The trace a notebook's widget sends (`trace_zlib`: zlib-compressed JSON in a DataView), held
 *  as a one-file HTML holds it (notebook/widget.py `packed_trace`), written back as its reply. */
async function unpackedTrace(packed) {
  if (!packed?.byteLength) return null;
  return expandTrace(await inflatedJson(packed));
}

/** The first view `packed` (zlib-compressed JSON, as `trace_zlib`) in `host`'s shadow root, in
 *  the words of `ui` (graph/first-view.js). */
async function showFirstView(host, packed, ui, title) {
  if (ui) useCatalogue(ui);
  const shadow = host.shadowRoot ?? host.attachShadow({ mode: "open" });
  const style = adoptStyles(shadow);
  shadow.replaceChildren(...(style ? [style] : []), firstView(await inflatedJson(packed), { title }));
}

export default {
  async render({ model, el }) {
    const theme = jupyterTheme();
    if (theme) el.dataset.theme = theme;
    // JupyterLab and Notebook 7 (Lumino) run their shortcuts for keys typed in an output unless
    // an element on the way up says not to: the player's keys (Space, arrows on a slider) are its own.
    el.setAttribute("data-lm-suppress-shortcuts", "true");
    // A notebook's output: the player's own frame (embed.css: about 700 px, resizable), and a
    // mark the drawing shown before the player reads (chainrule.notebook.widget FALLBACK_STYLE).
    el.setAttribute("data-chainrule-player", "notebook");
    const asking = createKernelFanIn(model);
    let player = null;
    const mount = (trace) => {
      player = mountPlayer(el, {
        fanIn: asking.fanIn,
        trace,
        ops: model.get("ops"),
        ui: model.get("ui"),
        title: model.get("title"),
        values: model.get("values"),
        recompute: (values) => {
          model.set("values", values);
          model.save_changes(); // the kernel answers by setting `trace_zlib` or `error`
        },
      });
    };
    // A big graph's first view while the kernel makes its trace (notebook/widget.py
    // `first_view`): the player is mounted when the trace comes.
    const first = model.get("trace_zlib")?.byteLength ? null : model.get("first_view");
    if (first?.byteLength) await showFirstView(el, first, model.get("ui"), model.get("title"));
    else mount(await unpackedTrace(model.get("trace_zlib")));
    let traces = 0; // the newest trace's number: an older one inflated later is not shown
    const onTrace = async () => {
      const number = ++traces;
      const trace = await unpackedTrace(model.get("trace_zlib"));
      if (!trace || number !== traces) return;
      if (player) player.setTrace(trace);
      else mount(trace);
    };
    const onError = () => {
      const error = model.get("error");
      if (!error) return;
      if (!player) mount(null);
      player.setError(error);
    };
    model.on("change:trace_zlib", onTrace);
    model.on("change:error", onError);
    model.on("msg:custom", asking.onMessage);
    onError();
    // A trace that came while the first view was drawn (before the listener above).
    if (!player && model.get("trace_zlib")?.byteLength) onTrace();
    const drawings = staticDrawings(model.get("drawing"));
    for (const drawing of drawings) drawing.hidden = true;
    return () => {
      traces += 1; // a trace still inflating is shown by no player
      model.off("change:trace_zlib", onTrace);
      model.off("change:error", onError);
      model.off("msg:custom", asking.onMessage);
      asking.close();
      if (player) player.destroy();
      else if (el.shadowRoot) {
        el.shadowRoot.replaceChildren();
        if ("adoptedStyleSheets" in el.shadowRoot) el.shadowRoot.adoptedStyleSheets = [];
      }
      for (const drawing of drawings) drawing.hidden = false;
    };
  },
};
