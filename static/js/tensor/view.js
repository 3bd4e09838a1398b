// The tensor view: while the page shows a tensor program (state.tensor), its graph in the graph
// pane's place, stepped by the transport (the store's step), with a gradient cell's fan-in
// (POST /api/fan-in) and a leaf cell's editor. The scalar pane stays laid out underneath,
// hidden (`data-view="tensor"` on the page's root), and comes back with the next scalar program.

import { setData, setHidden, setText } from "../core/dom.js";
import { stepInterval } from "../core/player.js";
import { cellOfEvent, drawTensors, flushCellValues, tensorLayers } from "./draw.js";
import { fanInOf } from "./fan-in.js";
import { tensorLayout } from "./layout.js";
import { mountCellEditor } from "./cell-editor.js";
import { mountExpand } from "./expand-view.js";
import { createTensorNumbers } from "./page-numbers.js";
import { gradName, reusedTensorsOf, tensorIndex, tensorName, tensorViewAt } from "./timeline.js";
import { compactText, shortText } from "../core/format.js";
import { tensorLessonStop } from "../lessons/stops.js";

const MARGIN = 24; // graph units around the cards
// The graph fits the pane, but its numbers are never drawn smaller than MIN_SCALE of their
// size (11 units: 9.4 px; wider graphs scroll, following the step), a graph of colours alone
// not below MIN_COLOUR_SCALE (its names), nor is either blown up past MAX_SCALE.
const MIN_SCALE = 0.85;
const MIN_COLOUR_SCALE = 0.7;
const MAX_SCALE = 1.5;

/** Size `svg` (viewBox `box`: [width, height]) to fit `pane` within the scales. */
function fitTo(pane, svg, [width, height], numbers) {
  const least = numbers ? MIN_SCALE : MIN_COLOUR_SCALE;
  const scale = Math.min(MAX_SCALE, Math.max(least, Math.min(pane.clientWidth / width, (pane.clientHeight - 32) / height)));
  svg.style.width = `${Math.round(width * scale)}px`;
  svg.style.height = `${Math.round(height * scale)}px`;
}

/** The state keys a frame of the tensor view reads. */
const FRAME_KEYS = ["tensor", "trace", "step", "finalGrads", "tensorFanIn", "tensorCell", "lessonId", "lessonStop", "lessons", "lab"];

const FOLLOW_MARGIN = 16; // px around the cards the pane scrolls to

/** Scroll `pane` the least that brings `cards` in view (those that fit: the first ones). */
function follow(pane, cards) {
  if (!cards.length) return;
  const box = pane.getBoundingClientRect();
  const rects = cards.map((card) => card.getBoundingClientRect());
  for (const [start, end, scroll, size] of [["left", "right", "scrollLeft", "clientWidth"], ["top", "bottom", "scrollTop", "clientHeight"]]) {
    const from = Math.min(...rects.map((r) => r[start])) - box[start] + pane[scroll] - FOLLOW_MARGIN;
    const to = Math.max(...rects.map((r) => r[end])) - box[start] + pane[scroll] + FOLLOW_MARGIN;
    if (to - from > pane[size] || from < pane[scroll]) pane[scroll] = Math.max(0, from);
    else if (to > pane[scroll] + pane[size]) pane[scroll] = to - pane[size];
  }
}

/** A cell's name and number (`W[1,2] = −0.5`, `dW[1,2] = −0.02223`; `--` not yet known). */
function readoutText(node, { grid, index, value }) {
  const name = `${grid === "grad" ? gradName(node) : tensorName(node)}[${index}]`;
  // data-value holds the number's full text ("Infinity" and "NaN" too: Number reads them).
  return `${name} = ${value === "" ? shortText(undefined) : compactText(Number(value))}`;
}

/** What a layout depends on: the tensors, their shapes and inputs (not their numbers). */
const layoutKey = (reply) => JSON.stringify(reply.nodes.map((n) => [n.id, n.label, n.name, n.op, n.kind, n.shape, n.inputs, n.grad === null]));

/**
 * Ask for the fan-in of element `index` of tensor `id` of the reply shown: the page's own
 * (`local(id, index)`: tensor/page-numbers.js, when it computed the numbers shown) or the
 * server's (`postFanIn`: core/api.js's; null: none to ask). The latest ask wins.
 */
function createFanInAsker(scope, requestBody, postFanIn, local) {
  let asked = 0;
  return async function ask(id, index) {
    const token = ++asked;
    const { store } = scope;
    const of = store.state.tensor;
    const own = local(id, index);
    if (own || !postFanIn) {
      if (own) store.update({ tensorFanIn: { tensor: id, index, reply: own, of } });
      return;
    }
    try {
      const reply = await postFanIn({ ...requestBody(), tensor: id, index });
      if (token === asked && store.state.tensor === of) store.update({ tensorFanIn: { tensor: id, index, reply, of } });
    } catch (err) {
      if (token === asked) store.setError(err.detail ?? { type: "Error", message: String(err) });
    }
  };
}

/** The play loop while a tensor program plays (the scalar player's loop draws scalar traces). */
function createTensorPlay(store) {
  let tick = 0;
  return function schedule() {
    const token = ++tick;
    setTimeout(() => {
      const { state } = store;
      if (token !== tick || !state.playing || !state.tensor || state.trace) return;
      if (state.step >= store.stepCount() - 1) store.update({ playing: false });
      else store.setStep(state.step + 1);
    }, stepInterval(store.state.speed));
  };
}

/** A click on a cell (or Enter on it): a gradient's opens its fan-in, a named leaf's data opens its editor. */
function wireClicks(svg, scope, ask) {
  const act = (event) => {
    const cell = cellOfEvent(event);
    const { state, update } = scope.store;
    if (!cell || !state.tensor) return;
    const id = cell.dataset.tensorId;
    const index = cell.dataset.index ? cell.dataset.index.split(",").map(Number) : [];
    const node = tensorIndex(state.tensor).nodeById.get(id);
    if (cell.dataset.grid === "grad" && cell.dataset.value !== "") ask(id, index);
    else if (cell.dataset.grid === "data" && node?.kind === "leaf" && node.name) update({ tensorCell: { tensor: id, index } });
  };
  svg.addEventListener("click", act);
  svg.addEventListener("keydown", (event) => {
    if (event.key === "Enter") act(event);
  });
}

/**
 * Mount the tensor view: `elements` {pane (in the graph pane), svg (the tensor graph's, in it), fanIn (the
 * sentence's element), fanInText, fanInClose, readout (a hovered cell's number), cells (the
 * sidebar's place for the cell editor),
 * root (gets data-view)}; `requestBody()` the page's /api/graph body; `setValues(values)` asks the
 * server for new values (a drag the page cannot compute yet); `server` the calls of it
 * ({postFanIn, postTensorGraph, postExpand}: core/api.js's), null where there is none (a one-file
 * HTML: every drag and every gradient's sum is the page's; Expand says it needs a server). Returns the page's numbers
 * (tensor/page-numbers.js: `use(graph)` gives it the scalar graph).
 */
export function mountTensorView(elements, scope, { requestBody, setValues, server = null }) {
  const { pane, svg, fanIn, fanInText, fanInClose, readout, root } = elements;
  const layers = tensorLayers(svg);
  const numbers = createTensorNumbers(svg, scope, { requestBody, fetchGraph: server?.postTensorGraph ?? null });
  const ask = createFanInAsker(scope, requestBody, server?.postFanIn ?? null, numbers.fanIn);
  scope.tensorFanIn = ask; // open an element's sum, as a click on its cell does (the tensor predict lab)
  const schedule = createTensorPlay(scope.store);
  let laid = { key: null, layout: null };
  wireClicks(svg, scope, ask);
  // The card under the pointer: its expression is lit in the editor (controls/editor.js); the
  // cell under it: its name and number in the readout (a colour grid's cells show none).
  const hover = (event) => {
    const card = event.target.closest?.("[data-testid=tensor]");
    scope.store.update({ hoverNode: card?.dataset.tensorId ?? null });
    const shown = scope.store.state.tensor;
    if (event.target.classList?.contains("grid-hit")) flushCellValues(); // the numbers it reads
    const cell = cellOfEvent(event);
    const node = cell && shown ? tensorIndex(shown).nodeById.get(cell.dataset.tensorId) : null;
    hovered = node ? cell : null;
    setHidden(readout, !node);
    if (node) setText(readout, readoutText(node, cell.dataset));
  };
  let hovered = null; // the cell the readout reads: read again when the numbers change
  layers.cards.addEventListener("pointerover", hover);
  // A colour grid is one box: the cell under the pointer changes as it moves over it.
  layers.cards.addEventListener("pointermove", (event) => {
    if (event.target.classList?.contains("grid-hit")) hover(event);
  });
  layers.cards.addEventListener("pointerleave", () => {
    scope.store.update({ hoverNode: null });
    hovered = null;
    setHidden(readout, true);
  });
  fanInClose.addEventListener("click", () => scope.store.update({ tensorFanIn: null }));
  mountCellEditor(elements.cells, scope, { setValues, paint: numbers.paint });
  // An op card's Expand: its scalar graph in a panel over the pane (the server lays it out).
  mountExpand({ host: pane.parentElement, tensorSvg: svg }, scope, { requestBody, postExpand: server?.postExpand ?? null, numbers });
  new ResizeObserver(() => {
    if (laid.box && !pane.hidden) fitTo(pane, svg, laid.box, laid.layout.numbers);
  }).observe(pane);

  /** Draw the frame `s` shows (laid out once per program). */
  function drawFrame(s, changed) {
    const key = layoutKey(s.tensor);
    if (key !== laid.key) {
      laid = { key, layout: tensorLayout(s.tensor) };
      const box = [laid.layout.width + 2 * MARGIN, laid.layout.height + 2 * MARGIN];
      svg.setAttribute("viewBox", `${-MARGIN} ${-MARGIN} ${box[0]} ${box[1]}`);
      laid.box = box;
      fitTo(pane, svg, box, laid.layout.numbers);
    }
    // New numbers of the element shown: its fan-in again, with them.
    const open = s.tensorFanIn;
    if (open && open.of !== s.tensor && changed.has("tensor")) ask(open.tensor, open.index);
    const view = tensorViewAt(s.tensor, s.step, { finalGrads: s.finalGrads });
    // Its sum shows while its gradient does (stepping back before the pass reaches it hides it).
    const fan = open && view.grad(open.tensor) !== undefined ? fanInOf(s.tensor, open.reply) : null;
    const editing = s.tensorCell ? [{ ...s.tensorCell, grid: "data", role: "edit" }] : [];
    // The = lab (labs/tensor-labs.js) marks the tensors whose gradient two ops add.
    const reused = s.lab === "tensor-overwrite" ? new Set(reusedTensorsOf(s.tensor).map((r) => r.tensor.id)) : undefined;
    drawTensors(layers, laid.layout, s.tensor, view, [...editing, ...(fan?.lit ?? [])], tensorLessonStop(s)?.highlight ?? [], reused);
    if (hovered?.isConnected && changed.has("tensor")) {
      flushCellValues(); // a colour cell's number, written now
      setText(readout, readoutText(tensorIndex(s.tensor).nodeById.get(hovered.dataset.tensorId), hovered.dataset));
    }
    setData(svg, { ready: "true", step: String(s.step), tensors: String(s.tensor.nodes.length) });
    setHidden(fanIn, !fan);
    if (fan) {
      setText(fanInText, fan.sentence);
      setData(fanIn, {
        cell: fan.cell, tensorId: open.tensor, index: open.index.join(","), terms: String(fan.count),
        sum: String(open.reply.sum), grad: String(open.reply.grad),
      });
    }
    // The step's cards in view: its tensor and those it passes gradient to.
    if (changed.has("step")) follow(pane, [...layers.cards.querySelectorAll(".tensor-card.current, .tensor-card.arriving")]);
  }

  // A tensor lesson's stop with a fan-in opens it (as a click on its cell would), once the
  // stop's program is shown; the next stop without one closes it.
  let lessonFan = null;
  scope.store.subscribe((s, changed) => {
    if (!["lessonId", "lessonStop", "tensor"].some((key) => changed.has(key))) return;
    const stop = tensorLessonStop(s);
    const wanted = stop?.fan_in ?? null;
    if (wanted === lessonFan && !(wanted && changed.has("tensor") && !s.tensorFanIn)) return;
    lessonFan = wanted;
    if (wanted) {
      const [tensor, , index] = wanted.split("|");
      ask(tensor, index.split(",").map(Number));
    } else if (stop && s.tensorFanIn) scope.store.update({ tensorFanIn: null });
  });

  scope.store.subscribe((s, changed) => {
    const shown = Boolean(s.tensor) && !s.trace;
    setData(root, { view: shown ? "tensor" : "scalar" });
    setHidden(pane, !shown);
    if (!shown) {
      setHidden(fanIn, true);
      return;
    }
    // Only what the frame reads draws it again (not a hovered card: 35,000 cells at makemore's size).
    if (FRAME_KEYS.some((key) => changed.has(key))) drawFrame(s, changed);
    if (s.playing && (changed.has("step") || changed.has("playing") || changed.has("speed"))) schedule();
  });
  return numbers;
}
