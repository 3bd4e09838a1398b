// "Expand": a tensor op's card opens its scalar graph (POST /api/expand with `graph`, laid out by
// the server as a scalar program is) in a panel over the tensor view, drawn by graph/draw.js as
// the scalar view draws a graph: cards with data and grad, op tags, edges. The numbers are the
// tensor cards' (the end of the backward pass); a cell's drag moves them too: from the page's own
// pass where it made the numbers shown (tensor/page-numbers.js), else asked of the server again.
// A click on a card (or Enter) says its numbers; Escape or × closes the panel. An op past the
// server's bound shows its message where the graph would be; a player with no server (a
// one-file HTML) says that Expand needs one.

import { h, setData, setHidden, setText } from "../core/dom.js";
import { countText } from "../core/format.js";
import { t } from "../core/i18n.js";
import { onPlainClick, svgElement } from "../core/svg.js";
import { drawGraph } from "../graph/draw.js";
import { graphBounds } from "../graph/geometry.js";
import { createZoom } from "../graph/zoom.js";
import { tensorIndex } from "./timeline.js";
import { cardNumbers, expandedTrace, expandedView, withNumbers, withReplyNumbers } from "./expand.js";

// The least scale the panel opens at: a card's numbers (14.5 units on a scalar card) at 11 px,
// the scalar pane's reading size on a laptop (graph/view.js READING_MIN_PX).
const READING_SCALE = 0.76;

/** Pan `zoom` to centre `card` when its centre is out of the view. */
function bringIntoView(zoom, card) {
  if (!card) return;
  const box = zoom.visibleBox();
  const { x, y, k } = zoom.transform;
  const [cx, cy] = [card.x * k + x, card.y * k + y];
  if (cx >= box.x && cx <= box.x + box.width && cy >= box.y && cy <= box.y + box.height) return;
  zoom.set({ x: box.x + box.width / 2 - card.x * k, y: box.y + box.height / 2 - card.y * k, k }, "follow");
}

/** The panel's elements, appended to `host` (hidden). */
function panelOf(host) {
  const title = h("h3", { class: "tensor-expand-title", id: "tensor-expand-title", "data-testid": "expand-title" });
  const close = h("button", { type: "button", class: "ghost", "data-testid": "expand-close", "aria-label": t("ui.tensor.expand_close") }, "\u00d7");
  const note = h("p", { class: "tensor-expand-note", "data-testid": "expand-note" });
  const svg = svgElement("svg", { "data-testid": "expand-graph", role: "group" }, "graph expand-graph");
  const readout = h("p", { class: "tensor-expand-readout", "data-testid": "expand-readout", role: "status" });
  const body = h("div", { class: "tensor-expand-body" }, svg);
  const panel = h("section", { class: "tensor-expand", role: "dialog", "aria-labelledby": "tensor-expand-title", "data-testid": "expand", hidden: true },
    h("header", { class: "tensor-expand-head" }, title, close), note, body, readout);
  host.append(panel);
  const viewport = svgElement("g", {}, "viewport");
  const layers = { edges: svgElement("g", {}, "layer-edges"), nodes: svgElement("g", {}, "layer-nodes"), labels: svgElement("g", {}, "layer-labels") };
  viewport.append(layers.edges, layers.nodes, layers.labels);
  svg.append(viewport);
  return { panel, title, close, note, body, svg, readout, layers, zoom: createZoom(svg, [viewport]) };
}

/**
 * Mount Expand on the tensor view: `host` (where the panel goes, over the tensor pane), `tensorSvg`
 * (the tensor cards', whose Expand buttons open it); `requestBody()` the page's /api/graph body;
 * `postExpand` core/api.js's (null: no server); `numbers` the page's (tensor/page-numbers.js).
 */
export function mountExpand({ host, tensorSvg }, scope, { requestBody, postExpand, numbers }) {
  const ui = panelOf(host);
  const { store } = scope;
  let shown = null; // {tensor (id), name, source, trace, opener}: the expansion open
  let asked = 0; // the latest request wins

  function draw() {
    const { trace } = shown;
    drawGraph(ui.layers, trace, expandedView(trace));
    setData(ui.svg, { ready: "true", nodes: String(trace.nodes.length), tensorId: trace.tensor });
  }

  function say(text, { error = false } = {}) {
    setText(ui.note, text);
    setData(ui.panel, { state: error ? "error" : "ok" });
  }

  function show(trace) {
    shown.trace = trace;
    setText(ui.title, t("ui.tensor.expand_title", { name: shown.name, count: countText(trace.count), limit: countText(trace.limit) }));
    say(t("ui.tensor.expand_hint"));
    setHidden(ui.body, false);
    draw();
    // Fitted, but never below the reading size of a card's numbers: a big op opens at its top
    // left (its inputs' first elements), and the reader pans (or zooms) to the rest.
    const bounds = graphBounds(trace);
    ui.zoom.fit(bounds, 1.5, {}, { minScale: READING_SCALE, focus: { x: bounds.x, y: bounds.y } });
  }

  async function ask(body, then) {
    const token = ++asked;
    try {
      const reply = await postExpand(body);
      if (token === asked && shown) then(reply);
    } catch (err) {
      if (token !== asked || !shown) return;
      // Where the graph would be: the server's message (the bound, named), readable.
      shown.trace = null;
      setHidden(ui.body, true);
      setText(ui.readout, "");
      say(err.detail?.message ?? String(err), { error: true });
      setData(ui.panel, { errorType: err.detail?.type ?? "Error" });
    }
  }

  function open(id, opener) {
    const reply = store.state.tensor;
    const node = reply && tensorIndex(reply).nodeById.get(id);
    if (!node) return;
    shown = { tensor: id, name: node.label, source: reply.source, trace: null, opener };
    setHidden(ui.panel, false);
    setData(ui.panel, { tensorId: id, errorType: null });
    setText(ui.title, t("ui.tensor.expand_dialog", { name: node.label }));
    setText(ui.readout, "");
    ui.svg.setAttribute("aria-label", t("ui.tensor.expand_dialog", { name: node.label }));
    setHidden(ui.body, true);
    ui.close.focus({ preventScroll: true });
    if (!postExpand) {
      say(t("ui.tensor.expand_needs_server", { name: node.label }), { error: true });
      setData(ui.panel, { errorType: "NoServer" });
      return;
    }
    say(t("ui.tensor.expand_asking", { name: node.label }));
    ask({ ...requestBody(), tensor: id }, (expanded) => show(expandedTrace(expanded, reply.source)));
  }

  function close() {
    if (!shown) return;
    const { opener } = shown;
    shown = null;
    asked += 1;
    setHidden(ui.panel, true);
    if (opener?.isConnected) opener.focus({ preventScroll: true });
  }

  // New numbers of the program shown (a cell's drag): the expansion's follow; another program closes it.
  store.subscribe((s, changed) => {
    if (!shown || (!changed.has("tensor") && !changed.has("trace"))) return;
    if (!s.tensor || s.trace || s.tensor.source !== shown.source) {
      close();
      return;
    }
    if (!shown.trace) { // still asked (or refused): asked again, for these numbers
      if (postExpand) ask({ ...requestBody(), tensor: shown.tensor }, (expanded) => show(expandedTrace(expanded, s.tensor.source)));
      return;
    }
    const own = numbers.nodeNumbers();
    if (own) {
      shown.trace = withNumbers(shown.trace, own);
      draw();
    } else if (postExpand) {
      ask({ ...requestBody(), tensor: shown.tensor }, (expanded) => {
        shown.trace = withReplyNumbers(shown.trace, expanded);
        draw();
      });
    }
  });

  const press = (event) => {
    const button = event.target.closest?.("[data-testid=tensor-expand]");
    if (!button) return;
    event.preventDefault();
    event.stopPropagation();
    open(button.dataset.tensorId, button);
  };
  tensorSvg.addEventListener("click", press);
  tensorSvg.addEventListener("keydown", (event) => {
    if (event.key === "Enter" || event.key === " ") press(event);
  });
  ui.close.addEventListener("click", close);
  scope.keys.bindKeys({ Escape: () => close() }, { when: () => Boolean(shown) });
  // A card's numbers, on a click or Enter.
  const tell = (element) => {
    const card = element.closest?.("[data-node-id]");
    if (card && shown?.trace) setText(ui.readout, cardNumbers(shown.trace, card.dataset.nodeId));
  };
  onPlainClick(ui.svg, tell); // panning captures the pointer: the click lands on the SVG
  // A card the keyboard reaches (Tab) is brought into the panel's view.
  ui.layers.nodes.addEventListener("focusin", (event) => {
    const id = event.target.closest?.("[data-node-id]")?.dataset.nodeId;
    if (id && shown?.trace) bringIntoView(ui.zoom, shown.trace.nodes.find((n) => n.id === id));
  });
  ui.layers.nodes.addEventListener("keydown", (event) => {
    if (event.key === "Enter") tell(event.target);
  });
  return { open, close };
}
