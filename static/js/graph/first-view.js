// A big graph's first view in a notebook (issue 42): the overview's parts as the player opens on
// them, drawn from the kernel's first view (notebook/widget.py `first_view`) while the kernel
// makes the whole trace, 1.5-2 s of micrograd's demo; the player takes its place when the trace
// comes (embed.js). Its cards are the player's (graph/overview-view.js), opening nothing yet; a
// status line says what is coming.
//
// Hooks: the root `[data-testid=first-view]` (aria-busy), its status `[data-testid=first-view-status]`,
// the cards `[data-testid=overview-card]` with the player's data-* attributes.

import { h } from "../core/dom.js";
import { countText } from "../core/format.js";
import { lang, t } from "../core/i18n.js";
import { svgElement } from "../core/svg.js";
import { firstViewTrace } from "./overview.js";
import { drawOverviewParts } from "./overview-view.js";
import { arrowMarker } from "./view.js";

const PAD = 40; // graph units around the cards

/** The first view of `first` (the kernel's `first_view_reply`), titled `title`: a player-sized box. */
export function firstView(first, { title = "" } = {}) {
  const status = t("ui.first_view.status", { count: countText(first.count) });
  const svg = svgElement("svg", { role: "img", "aria-label": status, preserveAspectRatio: "xMidYMid meet" }, "graph first-view-graph");
  const defs = svgElement("defs");
  defs.append(arrowMarker("arrow-idle"));
  const layer = svgElement("g", {}, "viewport");
  svg.append(defs, layer);
  const box = drawOverviewParts(layer, firstViewTrace(first));
  svg.setAttribute("viewBox", [box.x - PAD, box.y - PAD, box.width + 2 * PAD, box.height + 2 * PAD].join(" "));
  return h("div", { class: "player first-view", "data-testid": "first-view", lang: lang(), "aria-busy": "true" },
    h("header", { class: "player-head" },
      h("span", { class: "brand-mark", "aria-hidden": "true", text: "\u2202" }),
      h("h2", { class: "player-title", text: title || "chainrule" }),
      h("span", { class: "player-brand", text: "chainrule" })),
    h("p", { class: "first-view-status", role: "status", "data-testid": "first-view-status", text: status }),
    h("div", { class: "graph-wrap" }, svg));
}
