// What a player shows, mounted on its scope (core/scope.js): the graph pane and its marks, the
// transport, the leaves, the notes, the tables and the labs, the explanations and the toggles.
// The page (main.js) and every embedded player (embed.js) mount them here, so that both show the
// same features; the page adds what needs its editor, its header or its server.
//
// The marks are registered below, one line each, in the order they draw (each over the one
// before): adding a mark to every player is a module and a line here (docs/architecture.md).

import { mountExplanations } from "./controls/explain-view.js";
import { followMark } from "./graph/follow.js";
import { registerGradTable } from "./controls/grad-table.js";
import { gradmapMark, mountGradmapToggle } from "./gradients/gradmap.js";
import { gradFlagsMark } from "./gradients/gradmap-flags.js";
import { mountGraph } from "./graph/view.js";
import { labMark } from "./labs/marks.js";
import { mountLabs } from "./labs/panel.js";
import { leafLinkMark, mountLeafRows } from "./controls/leaf-link.js";
import { lessonRingsMark } from "./lessons/rings.js";
import { minimapMark } from "./graph/minimap.js";
import { mountNotes } from "./controls/program-notes.js";
import { mountPaneMetrics } from "./graph/pane-metrics.js";
import { mountSliders } from "./controls/sliders.js";
import { mountToggles } from "./controls/toggles.js";
import { targetMark } from "./gradients/target.js";
import { registerTraceTables } from "./controls/trace-tables.js";
import { mountTransport } from "./controls/transport.js";

/**
 * The graph pane on `scope` with every mark. `pane`: {svg, overlay, wrap, fitButton, zoomIn,
 * zoomOut, legend, follow (the Follow button)}; `options`: {wheelZooms, collapseAt}.
 */
export function mountGraphPane(pane, scope, options = {}) {
  const graph = mountGraph({ ...pane, ...options }, scope);
  const metrics = mountPaneMetrics(graph, pane.legend);
  const minimap = minimapMark({ graph, metrics }, scope);
  graph.marks.register(gradmapMark({ legend: pane.legend }));
  graph.marks.register(gradFlagsMark({ legend: pane.legend }));
  graph.marks.register(targetMark({ legend: pane.legend }, scope));
  graph.marks.register(labMark());
  graph.marks.register(leafLinkMark());
  graph.marks.register(lessonRingsMark());
  graph.marks.register(minimap.mark);
  graph.marks.register(followMark({ graph, button: pane.follow, metrics, avoid: minimap.box }, scope));
  return graph;
}

/** The leaves: a slider per leaf (`onValue(name, value)`; `readOnly`: shown, not moved), linked to its card. */
export function mountLeaves(container, scope, { onValue, readOnly = false }) {
  mountSliders(container, { onValue, readOnly }, scope);
  mountLeafRows(container, scope);
}

/**
 * The panel area's tabs: the trace tables, the gradients and the labs (`labs`: the lab cards'
 * makers, labs/panel.js; `labsFirst`: as the page orders the tabs).
 */
export function mountPanels(panels, scope, { labs, labsFirst = false, setValues }) {
  if (labsFirst) mountLabs(scope, { labs, setValues });
  scope.panels.mount(panels);
  registerTraceTables(scope);
  registerGradTable(scope);
  if (!labsFirst) mountLabs(scope, { labs, setValues });
}

/** The explanations on the graph, and the display toggles ({finalGrads, expandDerived, foldConstants, gradMap} boxes). */
export function mountReading(graph, toggles, scope) {
  scope.explain = mountExplanations({ svg: graph.svg, wrap: graph.wrap }, scope);
  mountToggles({ boxes: { finalGrads: toggles.finalGrads, expandDerived: toggles.expandDerived, foldConstants: toggles.foldConstants } }, scope);
  if (toggles.gradMap) mountGradmapToggle(toggles.gradMap, scope);
}

export { predictSection } from "./labs/predict.js";
export { mountNotes, mountTransport };
