// The elements of an embedded player (embed.js), built with createElement only: the page's
// graph pane, transport and panels (the same ids, classes and data-testid hooks as
// templates/index.html, each unique inside the player's shadow root), a title bar with the
// player's actions, and a sidebar with the program as text, the error box, the leaves and the
// display toggles.

import { lang, t } from "./core/i18n.js";
import { h } from "./core/dom.js";
import { svgElement } from "./core/svg.js";

function icon(d) {
  const svg = svgElement("svg", { class: "icon", viewBox: "0 0 16 16", "aria-hidden": "true", focusable: "false" });
  svg.append(svgElement("path", { d }));
  return svg;
}

function transportButton(props, ...children) {
  return h("button", { type: "button", ...props }, ...children);
}

function graphPane() {
  const graph = svgElement("svg", { id: "graph", class: "graph", "data-testid": "graph", role: "group", "aria-label": t("ui.graph.label") });
  const overlay = svgElement("svg", { id: "graph-overlay", class: "graph-overlay", "aria-hidden": "true" });
  const zoomOut = h("button", { type: "button", id: "zoom-out", class: "ghost", "aria-label": t("ui.graph.zoom_out"), text: "\u2212" });
  const zoomIn = h("button", { type: "button", id: "zoom-in", class: "ghost", "aria-label": t("ui.graph.zoom_in"), text: "+" });
  const fit = h("button", { type: "button", id: "fit", class: "ghost", text: t("ui.graph.fit") });
  const follow = h("button", { type: "button", id: "follow", class: "ghost", "data-testid": "follow", "aria-pressed": "true", title: t("ui.graph.follow_title"), text: t("ui.graph.follow") });
  const legend = h("ul", { class: "legend", "aria-label": t("ui.legend.label") },
    h("li", { class: "legend-forward", text: t("ui.legend.forward") }),
    h("li", { class: "legend-backward", text: t("ui.legend.backward") }));
  const wrap = h("div", { class: "graph-wrap", id: "graph-wrap" }, h("div", { class: "graph-tools" }, zoomOut, zoomIn, fit, follow), legend);
  const tensor = tensorParts();
  wrap.prepend(graph, overlay, tensor.pane, tensor.readout, tensor.fanIn);
  return { wrap, graph: { svg: graph, overlay, wrap, fitButton: fit, zoomIn, zoomOut, legend, follow }, tensor };
}

/** A tensor program's view (tensor/view.js) in the graph pane's place, as templates/index.html has it. */
function tensorParts() {
  const svg = svgElement("svg", { id: "tensor-graph", class: "tensor-graph", "data-testid": "tensor-graph", role: "group", "aria-label": t("ui.tensor.graph_label") });
  const fanInText = h("p", { id: "tensor-fan-in-text", class: "tensor-fan-in-text", "data-testid": "fan-in-sentence" });
  const fanInClose = h("button", { type: "button", id: "tensor-fan-in-close", class: "ghost", "aria-label": t("ui.tensor.fan_in_close"), text: "\u00d7" });
  return {
    pane: h("div", { id: "tensor-pane", class: "tensor-pane", hidden: true }, svg),
    svg,
    readout: h("p", { id: "tensor-readout", class: "tensor-readout", "data-testid": "tensor-readout", hidden: true }),
    fanIn: h("div", { id: "tensor-fan-in", class: "tensor-fan-in", "data-testid": "fan-in", role: "status", hidden: true }, fanInText, fanInClose),
    fanInText,
    fanInClose,
    cells: h("div", { id: "tensor-cells", class: "tensor-cells", hidden: true }),
  };
}

function transportBar() {
  const parts = {
    toStart: transportButton({ id: "to-start", class: "ghost", "aria-label": t("ui.transport.first"), title: t("ui.transport.first_title") },
      icon("M2 3h2v10H2zM9 3v10L4.5 8zM15 3v10l-4.5-5z")),
    back: transportButton({ "data-testid": "step-back", id: "step-back", "aria-label": t("ui.transport.back"), title: t("ui.transport.back_title") },
      icon("M11.5 3v10L5 8zM12.5 3h2v10h-2z")),
    play: transportButton({ "data-testid": "play", id: "play", class: "primary", "aria-label": t("ui.transport.play"), title: t("ui.transport.play_title") },
      h("span", { class: "icon-play" }, icon("M4 2.5v11L13.5 8z")),
      h("span", { class: "icon-pause" }, icon("M3.5 3h3.2v10H3.5zM9.3 3h3.2v10H9.3z"))),
    forward: transportButton({ "data-testid": "step-forward", id: "step-forward", "aria-label": t("ui.transport.forward"), title: t("ui.transport.forward_title") },
      icon("M4.5 3v10L11 8zM1.5 3h2v10h-2z")),
    toEnd: transportButton({ id: "to-end", class: "ghost", "aria-label": t("ui.transport.last"), title: t("ui.transport.last_title") },
      icon("M1 3v10l4.5-5zM7 3v10l4.5-5zM12 3h2v10h-2z")),
    scrub: h("input", { type: "range", id: "scrub", "data-testid": "scrub", min: "0", max: "0", value: "0", step: "1", "aria-label": t("ui.transport.scrub") }),
    phase: h("output", { id: "phase", "data-testid": "phase", class: "phase", "aria-live": "off" }),
    part: h("span", { id: "phase-part", class: "phase-part" }),
    speed: h("select", { id: "speed", "aria-label": t("ui.transport.speed_label") },
      ...["0.25", "0.5", "1", "2", "4", "16"].map((x) => h("option", { value: x, selected: x === "1", text: `${x}\u00d7` }))),
    jumpForward: h("button", { type: "button", id: "jump-forward", "data-testid": "jump-forward", "aria-pressed": "false", text: t("ui.transport.jump_forward") }),
    jumpBackward: h("button", { type: "button", id: "jump-backward", "data-testid": "jump-backward", "aria-pressed": "false", text: t("ui.transport.jump_backward") }),
    narration: h("p", { id: "narration", class: "narration", "data-testid": "narration", "aria-live": "polite" }),
    sortNote: h("span", { class: "sort-note", "data-testid": "sort-note", hidden: true }),
  };
  const bar = h("div", { class: "transport", id: "transport", "aria-label": t("ui.transport.label") },
    h("div", { class: "transport-buttons" }, parts.toStart, parts.back, parts.play, parts.forward, parts.toEnd),
    parts.scrub,
    h("span", { class: "phase-box" }, parts.phase, parts.part),
    parts.sortNote,
    h("label", { class: "speed" }, t("ui.transport.speed"), parts.speed),
    h("div", { class: "phase-switch", role: "group", "aria-label": t("ui.transport.jump") }, parts.jumpForward, parts.jumpBackward));
  return { bar, transport: parts };
}

function toggle(id, text) {
  const box = h("input", { type: "checkbox", id });
  return { box, label: h("label", { class: "toggle" }, box, ` ${text}`) };
}

/**
 * The player's elements (its sliders recompute in the page: compute/instant-numbers.js). Returns the root and,
 * by part, what the views are mounted on.
 */
export function playerLayout({ title }) {
  const { wrap, graph, tensor } = graphPane();
  const { bar, transport } = transportBar();
  const source = h("pre", { class: "player-source", "data-testid": "program", tabindex: "0" }); // it scrolls sideways: by keys too
  const errorBox = h("div", { id: "error", class: "error-box", "data-testid": "error", role: "alert", hidden: true });
  const notes = h("ul", { id: "program-notes", class: "program-notes", "data-testid": "program-notes", "aria-label": t("ui.notes.label"), hidden: true });
  const sliders = h("div", { id: "sliders", class: "sliders" });
  const finalGrads = toggle("toggle-final-grads", t("ui.toggles.final_grads"));
  const fold = toggle("toggle-fold", t("ui.toggles.fold"));
  const gradMap = toggle("toggle-gradmap", t("ui.toggles.gradmap"));
  gradMap.box.dataset.testid = "gradmap";
  const actions = h("div", { class: "player-actions" });
  const program = h("section", { class: "program" }, h("h2", { class: "section-title", text: t("ui.program.title") }), source, errorBox, notes);
  const tabs = h("div", { class: "panel-tabs", role: "tablist", id: "panel-tabs" });
  const bodies = h("div", { class: "panel-bodies", id: "panel-bodies" });
  const panels = h("section", { id: "panels", class: "panels", "aria-label": t("ui.panels.label"), hidden: true }, tabs, bodies);
  const heading = h("h2", { class: "player-title", "data-testid": "title", text: title || "chainrule" });

  const root = h("div", { class: "player", "data-testid": "player", lang: lang(), tabindex: "-1", "data-step-index": "0", "data-phase": "" },
    h("header", { class: "player-head" },
      h("span", { class: "brand-mark", "aria-hidden": "true", text: "\u2202" }), heading, actions,
      h("span", { class: "player-brand", text: "chainrule" })),
    h("div", { class: "workspace" },
      h("aside", { class: "sidebar", "aria-label": t("ui.sidebar.label") },
        program,
        h("section", { class: "leaves" }, h("h2", { class: "section-title", text: t("ui.leaves.title") }), sliders, tensor.cells),
        h("section", { class: "toggles", "aria-label": t("ui.toggles.label") }, finalGrads.label, fold.label, gradMap.label)),
      h("section", { class: "stage", "aria-label": t("ui.graph.label") }, wrap, bar, transport.narration)),
    panels);

  return {
    root,
    program,
    source,
    errorBox,
    notes,
    sliders,
    graph,
    tensor,
    transport,
    panels: { section: panels, tabs, bodies },
    toggles: { finalGrads: finalGrads.box, foldConstants: fold.box, gradMap: gradMap.box },
    actions,
  };
}
