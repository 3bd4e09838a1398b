// The `2D | 3D` switch and the 3D view's place on the page: the switch (state.view3d, in share
// links as `3d=1`), the note that says why 3D is not shown or not advised, and the glue between
// the state and the scene (graph-3d.js, loaded with three.js on first use). The scene draws what
// the SVG draws, from the same lookups (timeline.js viewAt); clicks on it open the same
// explanations (explain-view.js) and place the same visit order (lab-order.js).

import { openExplanation } from "./explain-view.js";
import { countText } from "./format.js";
import { layoutKey } from "./graph.js";
import { t } from "./i18n.js";
import { placeNode } from "./lab-order.js";
import { isVariant } from "./lab-trace.js";
import { stepInterval } from "./player.js";
import { state, subscribe, update } from "./state.js";
import { changedBetween, viewAt } from "./timeline.js";

/** Above this many nodes the 3D view still draws, with a note suggesting 2D (docs/3d.md). */
export const MAX_3D_NODES = 1500;

const reducedMotion = window.matchMedia?.("(prefers-reduced-motion: reduce)");
const darkScheme = window.matchMedia?.("(prefers-color-scheme: dark)");
const REDRAW_KEYS = ["trace", "step", "finalGrads", "foldConstants", "hoverNode", "lab", "orderDraft", "view3d"];

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

/**
 * Mount the switch in `tools` (the graph pane's buttons) and the 3D container in `wrap` (the
 * graph pane); `fitButton`, `zoomIn`, `zoomOut` and `legend` are the pane's own controls, which
 * drive the 3D camera too while it is shown.
 */
export function mountView3d({ wrap, tools, fitButton, zoomIn, zoomOut, legend }) {
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
  tools.before(container); // under the pane's buttons and legend, which stay usable in 3D
  wrap.append(note);

  let scene = null;
  let loading = null;
  let canvas = null;
  let drawnFrame = -1;
  let last = { trace: null, step: -1, finalGrads: null, foldConstants: null, lab: null, orderDraft: null, hoverNode: null };

  let noteReason = null; // why the note shows: "webgl" | "lost" | "failed" | "size" | null

  function showNote(reason, text = reason ? NOTES[reason]() : "") {
    noteReason = reason;
    note.textContent = reason ? text : "";
    note.hidden = !reason;
  }

  function fallBack(reason) {
    showNote(reason);
    if (state.view3d) update({ view3d: false });
  }

  function insets() {
    const rem = parseFloat(getComputedStyle(document.documentElement).fontSize) || 16;
    return { top: tools.offsetHeight + rem, bottom: (legend?.offsetHeight ?? 0) + rem, side: rem };
  }

  function resize() {
    scene?.resize({ width: container.clientWidth, height: container.clientHeight, insets: insets() });
  }

  /** Make the canvas and the scene (three.js is loaded now, once); null without WebGL. */
  function ensureScene() {
    if (scene || loading) return loading ?? Promise.resolve(scene);
    canvas = element("canvas", "graph-3d-canvas", {
      tabindex: "0", role: "img",
      "aria-label": t("ui.view3d.canvas"),
    });
    const context = webglContext(canvas);
    if (!context) {
      canvas = null;
      return null;
    }
    // The travelling dots have their own canvas over the WebGL one (pulses-3d.js).
    const overlay = element("canvas", "graph-3d-pulses", { "aria-hidden": "true" });
    container.append(canvas, overlay);
    canvas.addEventListener("webglcontextlost", (event) => {
      event.preventDefault();
      discard();
      fallBack("lost");
    });
    loading = import("./graph-3d.js").then(({ createGraph3d }) => {
      scene = createGraph3d(canvas, context, overlay, {
        reducedMotion: () => Boolean(reducedMotion?.matches),
        onRender: () => {
          if (container.dataset.frame !== String(drawnFrame)) container.dataset.frame = String(drawnFrame);
        },
      });
      listen(canvas);
      loading = null;
      resize();
      redraw(state, new Set(REDRAW_KEYS));
      return scene;
    }).catch((error) => {
      // three.js did not load or the scene could not start: 2D, with the note (and the reason
      // in the console for whoever looks).
      console.error(error);
      discard();
      fallBack("failed");
      return null;
    });
    return loading;
  }

  function discard() {
    scene?.dispose();
    scene = null;
    loading = null;
    container.replaceChildren();
    canvas = null;
    last = { ...last, trace: null };
  }

  /** What explain-view.js needs of the thing explained: its box, the cards', focus to go back to. */
  function opener(rect) {
    return { isConnected: true, getBoundingClientRect: rect, cardRects: () => scene?.cardRects() ?? [], focus: (o) => canvas?.focus(o) };
  }

  function listen(target) {
    // Clicks: the card under the pointer explains itself (or joins the visit order in that lab),
    // an edge explains its local derivative, empty space closes the explanation.
    target.addEventListener("click", (event) => {
      if (!scene || scene.dragged()) return;
      const picked = scene.pick(event.clientX, event.clientY);
      if (!picked) {
        openExplanation(null);
        return;
      }
      if (picked.kind === "node" && state.lab === "order") {
        placeNode(picked.id);
        return;
      }
      const [x, y] = [event.clientX, event.clientY];
      openExplanation(picked.kind, picked.id, opener(() => scene.targetRect(picked, x, y)));
    });
    let hover = null;
    target.addEventListener("pointermove", (event) => {
      if (event.buttons || hover) return;
      hover = requestAnimationFrame(() => {
        hover = null;
        const picked = scene?.pick(event.clientX, event.clientY);
        target.classList.toggle("over-target", Boolean(picked));
        const id = picked?.kind === "node" ? picked.id : null;
        if (state.hoverNode !== id) update({ hoverNode: id });
      });
    });
    target.addEventListener("pointerleave", () => {
      if (state.hoverNode) update({ hoverNode: null });
    });
    target.addEventListener("keydown", (event) => {
      const keys = { "+": () => scene.zoomBy(1.25), "=": () => scene.zoomBy(1.25), "-": () => scene.zoomBy(0.8), 0: () => scene.fit() };
      if (event.key === "Enter" && state.trace) {
        const current = viewAt(state.trace, state.step).current ?? state.trace.root;
        openExplanation("node", current, opener(() => scene.targetRect({ kind: "node", id: current }, 0, 0)));
      } else if (keys[event.key] && !event.ctrlKey && !event.metaKey && !event.altKey) keys[event.key]();
      else return;
      event.preventDefault();
    });
  }

  /** Draw the state's frame in 3D, repainting only what changed since the last draw. */
  function redraw(s, changed) {
    if (!scene || !s.trace) return;
    const sameTrace = s.trace === last.trace;
    const sameOptions = sameTrace && ["finalGrads", "foldConstants", "lab", "orderDraft"].every((k) => s[k] === last[k]);
    const stepMoved = s.step !== last.step;
    const variant = isVariant(s.trace);
    let touched = null;
    if (sameOptions && !variant) {
      touched = stepMoved ? changedBetween(s.trace, last.step, s.step) : [[], []];
      if (touched && s.hoverNode !== last.hoverNode) touched[0].push(...[last.hoverNode, s.hoverNode].filter(Boolean));
    }
    const view = viewAt(s.trace, s.step, { finalGrads: s.finalGrads });
    const animate = sameTrace && stepMoved && !changed.has("view3d") && !reducedMotion?.matches;
    drawnFrame = view.frame;
    scene.draw(s.trace, view, {
      layout: layoutKey(s.trace), foldConstants: s.foldConstants, hovered: s.hoverNode, variant, frame: view.frame,
      finalGrads: s.finalGrads, orderDraft: s.lab === "order" ? s.orderDraft : [],
      pulseMs: animate ? Math.min(650, stepInterval(s.speed) * 0.75) : 0, changed: touched,
    });
    container.dataset.nodes = String(scene.drawnNodes());
    last = { trace: s.trace, step: s.step, finalGrads: s.finalGrads, foldConstants: s.foldConstants, lab: s.lab, orderDraft: s.orderDraft, hoverNode: s.hoverNode };
    const count = s.trace.nodes.length;
    if (count > MAX_3D_NODES) showNote("size", NOTES.size(count));
    else if (noteReason === "size") showNote(null);
  }

  function applySwitch(on) {
    button.setAttribute("aria-pressed", String(on));
    wrap.classList.toggle("view-3d", on);
    container.hidden = !on;
    if (!on) {
      container.dataset.frame = "-1";
      last = { ...last, trace: null };
      if (noteReason === "size") showNote(null);
      return;
    }
    showNote(null);
    const ready = ensureScene();
    if (ready === null) fallBack("webgl");
  }

  button.addEventListener("click", () => update({ view3d: !state.view3d }));
  fitButton.addEventListener("click", () => state.view3d && scene?.fit());
  zoomIn.addEventListener("click", () => state.view3d && scene?.zoomBy(1.25));
  zoomOut.addEventListener("click", () => state.view3d && scene?.zoomBy(0.8));
  new ResizeObserver(resize).observe(container);
  // The theme (the page's toggle or the system's scheme) repaints the scene in its colours.
  new MutationObserver(() => scene?.repaintAll()).observe(document.documentElement, { attributes: true, attributeFilter: ["data-theme"] });
  darkScheme?.addEventListener?.("change", () => scene?.repaintAll());

  subscribe((s, changed) => {
    if (changed.has("view3d")) applySwitch(s.view3d);
    if (s.view3d && REDRAW_KEYS.some((key) => changed.has(key))) redraw(s, changed);
  });

  // Test and benchmark hooks: where a card or an edge is on screen, how many frames were drawn.
  container.screenPoint = (id) => scene?.screenPoint(id) ?? null;
  container.edgePoint = (id) => scene?.edgePoint(id) ?? null;
  container.renderCount = () => scene?.renders() ?? 0;
  container.pulseFrameCount = () => scene?.pulseFrames() ?? 0;
}
