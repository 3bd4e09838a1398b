// The `2D | 3D` switch and the 3D view's place in a graph pane: the switch (state.view3d, in share
// links as `3d=1`), the note that says why 3D is not shown or not advised, and the glue between
// the frame and the scene (view-3d/scene.js, loaded with three.js on first use). The 3D view is a mark
// (graph/marks.js): the player's pass draws it from the same frame as the SVG (core/frames.js viewAt), with
// the labs' decorations from the same data (labs/marks.js); clicks on it open the same
// explanations (controls/explain-view.js) and place the same visit order (labs/order.js).

import { countText } from "../core/format.js";
import { layoutKey } from "../graph/geometry.js";
import { t } from "../core/i18n.js";
import { labCards } from "../labs/marks.js";
import { placeNode } from "../labs/order.js";
import { isVariant } from "../labs/contributions.js";
import { stepInterval } from "../core/player.js";
import { changedBetween, viewAt } from "../core/frames.js";

/** Above this many nodes the 3D view still draws, with a note suggesting 2D (docs/3d.md). */
export const MAX_3D_NODES = 1500;

const reducedMotion = window.matchMedia?.("(prefers-reduced-motion: reduce)");
const darkScheme = window.matchMedia?.("(prefers-color-scheme: dark)");
const OPTION_KEYS = ["finalGrads", "foldConstants", "lab", "orderDraft"];

// The note's words, in the page's language (a count grouped as the language writes it).
const NOTES = {
  webgl: () => t("ui.view3d.no_webgl"),
  lost: () => t("ui.view3d.lost"),
  failed: () => t("ui.view3d.failed"),
  size: (n) => t("ui.view3d.too_big", { count: countText(n), limit: countText(MAX_3D_NODES) }),
};

/**
 * A WebGL2 context for `canvas`, or null when the browser has none (disabled, blocklisted).
 * No MSAA: the edges smooth themselves in their shader and the cards are textures; multisampling
 * would only cost (it halves the frame rate of software WebGL).
 */
function webglContext(canvas) {
  try {
    return canvas.getContext("webgl2", { alpha: true, antialias: false, depth: true, stencil: false, premultipliedAlpha: true });
  } catch {
    return null;
  }
}

function element(tag, className, attributes = {}) {
  const el = document.createElement(tag);
  el.className = className;
  for (const [name, value] of Object.entries(attributes)) el.setAttribute(name, value);
  return el;
}

/** The switch in `tools`, the 3D container under the pane's buttons and legend, and the note. */
function view3dElements(wrap, tools) {
  const button = element("button", "ghost view-switch", { type: "button", "data-testid": "view-3d", "aria-pressed": "false", "aria-label": t("ui.view3d.switch_label"), title: t("ui.view3d.switch_title") });
  for (const [className, text] of [["view-switch-2d", "2D"], ["view-switch-bar", "|"], ["view-switch-3d", "3D"]]) {
    const part = element("span", className, { "aria-hidden": "true" });
    part.textContent = text;
    button.append(part);
  }
  tools.prepend(button);
  const container = element("div", "graph-3d", { "data-testid": "graph-3d", "data-nodes": "0", "data-frame": "-1" });
  container.hidden = true;
  const note = element("p", "view-3d-note", { "data-testid": "view-3d-note", role: "status" });
  note.hidden = true;
  // Under the pane's buttons and legend, which stay usable in 3D: before the row of the pane's
  // tools when the zoom tools are in one (graph/group-view.js), never inside it.
  (tools.closest(".pane-tools") ?? tools).before(container);
  wrap.append(note);
  return { button, container, note };
}

/**
 * Clicks on the scene: the card under the pointer explains itself (or joins the visit order in
 * that lab), an edge explains its local derivative, empty space closes the explanation; the
 * pointer lights the card under it; Enter explains the step's node, + − 0 zoom.
 */
function listenToScene(target, scene, scope) {
  const { state, update } = scope.store;
  const opener = (rect) => ({ isConnected: true, getBoundingClientRect: rect, cardRects: () => scene.cardRects(), focus: (o) => target.focus(o) });
  const explain = (kind, id, rect) => scope.explain?.open(kind, id, kind ? opener(rect) : null);
  target.addEventListener("click", (event) => {
    if (scene.dragged()) return;
    const picked = scene.pick(event.clientX, event.clientY);
    if (!picked) explain(null);
    else if (picked.kind === "node" && state.lab === "order") placeNode(scope.store, picked.id);
    else explain(picked.kind, picked.id, () => scene.targetRect(picked, event.clientX, event.clientY));
  });
  let hover = null;
  target.addEventListener("pointermove", (event) => {
    if (event.buttons || hover) return;
    hover = requestAnimationFrame(() => {
      hover = null;
      const picked = scene.pick(event.clientX, event.clientY);
      target.classList.toggle("over-target", Boolean(picked));
      const id = picked?.kind === "node" ? picked.id : null;
      if (state.hoverNode !== id) update({ hoverNode: id });
    });
  });
  target.addEventListener("pointerleave", () => state.hoverNode && update({ hoverNode: null }));
  target.addEventListener("keydown", (event) => {
    const keys = { "+": () => scene.zoomBy(1.25), "=": () => scene.zoomBy(1.25), "-": () => scene.zoomBy(0.8), 0: () => scene.fit() };
    if (event.key === "Enter" && state.trace) {
      const current = viewAt(state.trace, state.step).current ?? state.trace.root;
      explain("node", current, () => scene.targetRect({ kind: "node", id: current }, 0, 0));
    } else if (keys[event.key] && !event.ctrlKey && !event.metaKey && !event.altKey) keys[event.key]();
    else return;
    event.preventDefault();
  });
}

/** What a draw of state `s` repaints, given what the last draw showed (`last`): null for all. */
function touchedSince(s, last) {
  const sameOptions = s.trace === last.trace && OPTION_KEYS.every((k) => s[k] === last[k]);
  if (!sameOptions || isVariant(s.trace)) return null;
  const touched = s.step !== last.step ? changedBetween(s.trace, last.step, s.step) : [[], []];
  if (touched && s.hoverNode !== last.hoverNode) touched[0].push(...[last.hoverNode, s.hoverNode].filter(Boolean));
  return touched;
}

/**
 * The scene's life: made (with three.js, loaded now) on first use, dropped when WebGL is lost or
 * it fails to start. `onReady(scene)` once it is drawn into; `onFail(reason)`.
 */
function createSceneHolder(container, { onReady, onFail, onRender }) {
  const holder = { scene: null, loading: null };
  holder.discard = () => {
    holder.scene?.dispose();
    Object.assign(holder, { scene: null, loading: null });
    container.replaceChildren();
  };
  /** The scene, or a promise of it; null without WebGL. */
  holder.ensure = () => {
    if (holder.scene || holder.loading) return holder.loading ?? Promise.resolve(holder.scene);
    const canvas = element("canvas", "graph-3d-canvas", { tabindex: "0", role: "img", "aria-label": t("ui.view3d.canvas") });
    const context = webglContext(canvas);
    if (!context) return null;
    // The travelling dots have their own canvas over the WebGL one (view-3d/pulses.js).
    const overlay = element("canvas", "graph-3d-pulses", { "aria-hidden": "true" });
    container.append(canvas, overlay);
    canvas.addEventListener("webglcontextlost", (event) => {
      event.preventDefault();
      holder.discard();
      onFail("lost");
    });
    holder.loading = import("./scene.js").then(({ createGraph3d }) => {
      holder.scene = createGraph3d(canvas, context, overlay, { reducedMotion: () => Boolean(reducedMotion?.matches), onRender });
      holder.loading = null;
      onReady(holder.scene, canvas);
      return holder.scene;
    }).catch((error) => {
      // three.js did not load or the scene could not start: 2D, with the note (and the reason
      // in the console for whoever looks).
      console.error(error);
      holder.discard();
      onFail("failed");
      return null;
    });
    return holder.loading;
  };
  return holder;
}

/** The note under the pane: why 3D is not shown, or not advised. {show(reason, text), reason()}. */
function createNote(note) {
  let shownReason = null; // "webgl" | "lost" | "failed" | "size" | null
  return {
    show(reason, text = reason ? NOTES[reason]() : "") {
      shownReason = reason;
      note.textContent = reason ? text : "";
      note.hidden = !reason;
    },
    reason: () => shownReason,
  };
}

/** The scene's options to draw state `s` at `view`; `last`: what the last draw showed. */
function sceneOptions(s, view, last, changed) {
  const animate = s.trace === last.trace && s.step !== last.step && !changed?.has("view3d") && !reducedMotion?.matches;
  return {
    layout: layoutKey(s.trace), foldConstants: s.foldConstants, hovered: s.hoverNode, lab: labCards(s.trace, view, s),
    edgeMarks: isVariant(s.trace) ? { frame: view.frame, finalGrads: s.finalGrads } : null,
    pulseMs: animate ? Math.min(650, stepInterval(s.speed) * 0.75) : 0, changed: touchedSince(s, last),
  };
}

/** The pane's Fit and zoom buttons drive the camera too while 3D is shown; the theme repaints it. */
function listenToPane({ graph, zoomIn, zoomOut, container }, holder, { state, resize }) {
  graph.onFit(() => state.view3d && holder.scene?.fit());
  zoomIn.addEventListener("click", () => state.view3d && holder.scene?.zoomBy(1.25));
  zoomOut.addEventListener("click", () => state.view3d && holder.scene?.zoomBy(0.8));
  new ResizeObserver(resize).observe(container);
  // The theme (the page's toggle or the system's scheme) repaints the scene in its colours.
  new MutationObserver(() => holder.scene?.repaintAll()).observe(document.documentElement, { attributes: true, attributeFilter: ["data-theme"] });
  darkScheme?.addEventListener?.("change", () => holder.scene?.repaintAll());
}

/** The 3D view's state: its switch, its scene and what it last drew (see view3dMark). */
class View3d {
  constructor({ graph, tools, legend }, scope) {
    Object.assign(this, { tools, legend, scope, drawnFrame: -1, last: { trace: null }, switched: null });
    Object.assign(this, view3dElements(graph.wrap, tools));
    this.notes = createNote(this.note);
    this.holder = createSceneHolder(this.container, {
      onReady: (scene, canvas) => {
        listenToScene(canvas, scene, scope);
        this.resize();
        this.last = { trace: null };
        this.draw(scope.store.state, null);
      },
      onFail: (reason) => {
        this.last = { trace: null };
        this.fallBack(reason);
      },
      onRender: () => {
        if (this.container.dataset.frame !== String(this.drawnFrame)) this.container.dataset.frame = String(this.drawnFrame);
      },
    });
  }

  fallBack(reason) {
    this.notes.show(reason);
    if (this.scope.store.state.view3d) this.scope.store.update({ view3d: false });
  }

  resize() {
    const rem = parseFloat(getComputedStyle(document.documentElement).fontSize) || 16;
    const insets = { top: this.tools.offsetHeight + rem, bottom: (this.legend?.offsetHeight ?? 0) + rem, side: rem };
    this.holder.scene?.resize({ width: this.container.clientWidth, height: this.container.clientHeight, insets });
  }

  /** Draw the state's frame in 3D, repainting only what changed since the last draw. */
  draw(s, changed) {
    const { scene } = this.holder;
    if (!scene || !s.trace) return;
    const view = viewAt(s.trace, s.step, { finalGrads: s.finalGrads });
    this.drawnFrame = view.frame;
    scene.draw(s.trace, view, sceneOptions(s, view, this.last, changed));
    this.container.dataset.nodes = String(scene.drawnNodes());
    this.last = { trace: s.trace, step: s.step, hoverNode: s.hoverNode, ...Object.fromEntries(OPTION_KEYS.map((k) => [k, s[k]])) };
    if (s.trace.nodes.length > MAX_3D_NODES) this.notes.show("size", NOTES.size(s.trace.nodes.length));
    else if (this.notes.reason() === "size") this.notes.show(null);
  }

  applySwitch(on) {
    this.button.setAttribute("aria-pressed", String(on));
    this.container.hidden = !on;
    if (!on) {
      this.container.dataset.frame = "-1";
      this.last = { trace: null };
      if (this.notes.reason() === "size") this.notes.show(null);
      return;
    }
    this.notes.show(null);
    if (this.holder.ensure() === null) this.fallBack("webgl");
  }

  /** The frame drawn (a mark's render): the switch as the state says, and the scene if it is on. */
  render({ state: s, changedKeys }) {
    if (s.view3d !== this.switched) this.applySwitch((this.switched = s.view3d));
    if (s.view3d) this.draw(s, changedKeys);
    return null;
  }

  /** Where a card or an edge is on screen, frames drawn: tests and the benchmark read them. */
  probes() {
    const { holder } = this;
    return {
      screenPoint: (id) => holder.scene?.screenPoint(id) ?? null,
      edgePoint: (id) => holder.scene?.edgePoint(id) ?? null,
      renderCount: () => holder.scene?.renders() ?? 0,
      pulseFrameCount: () => holder.scene?.pulseFrames() ?? 0,
    };
  }
}

/**
 * The 3D view on `graph`'s pane (graph/view.js), as a mark: its switch goes in `tools` (the pane's
 * buttons), and the pane's Fit and zoom buttons and `legend` drive its camera too while it is
 * shown. Sets `scope.view3d` (View3d probes).
 */
export function view3dMark({ graph, tools, zoomIn, zoomOut, legend }, scope) {
  const { state, update } = scope.store;
  const view3d = new View3d({ graph, tools, legend }, scope);
  view3d.button.addEventListener("click", () => update({ view3d: !state.view3d }));
  listenToPane({ graph, zoomIn, zoomOut, container: view3d.container }, view3d.holder, { state, resize: () => view3d.resize() });
  scope.view3d = view3d.probes();
  return {
    name: "3d",
    keys: ["view3d", "foldConstants", "hoverNode", "orderDraft"],
    render: (frame) => view3d.render(frame),
  };
}
