// Drawing the statements' groups (issue 11): the card of each collapsed statement (its root's
// numbers, over the edges) and the labelled box of each expanded one (under them), as keyed joins
// refreshed from the frame; graph/group-view.js decides which groups are collapsed and wires the tools.
//
// Hooks: every box or card is `[data-testid=group]` with `data-group` (the statement's name) and
// `data-collapsed`; a collapsed card holding the step shown has `data-current="true"`, and
// `data-root`, the id of the node whose numbers it shows.

import { spaceWords } from "./draw.js";
import { compactLabel, fitLabel, fontSize } from "./geometry.js";
import { traceIndex } from "../core/frames.js";
import { groupIndex } from "./groups.js";
import { fullText, opGlyph, preciseText, shortText } from "../core/format.js";
import { t } from "../core/i18n.js";
import { attr, join, joined, svgElement, text } from "../core/svg.js";

const placedFor = new WeakMap(); // card → the placing it was last written for ({arrangement, root, …})
const tooltips = new WeakMap(); // card → its tooltip's text, written when the pointer reaches it

const TAB_FONT = 15; // the name on a box's top band (layout.py FRAME_LABEL: 26 px)
const TAB_HEIGHT = 21;

/** The statement a group stands for, as written: `h1 = tanh(w11*x1 + w12*x2 + b1)`. */
function statementText(trace, group, nodeById) {
  const root = nodeById.get(group.root);
  const [start, end] = root?.span ?? [0, 0];
  const written = (trace.source ?? "").slice(start, end).replace(/\s+/g, " ").trim();
  if (!written) return group.name;
  return root.label && root.label !== written ? `${root.label} = ${written}` : written;
}

function enterCard(group) {
  const { width: w, height: h } = group.card;
  const probe = { width: w, height: h };
  const fs = fontSize(probe);
  const pad = Math.max(6, fs * 0.55);
  const g = svgElement("g", { "data-testid": "group", role: "button", tabindex: "0" }, "node group-card");
  const rows = [h * 0.34, h * 0.64, h * 0.88];
  const label = svgElement("text", { x: pad, y: rows[0], "font-size": fs * 1.05 }, "label");
  label.append(svgElement("tspan", {}, "label-name"), svgElement("tspan", { "aria-hidden": "true" }, "label-more"));
  const compact = compactLabel("", probe);
  g.append(
    svgElement("title"),
    // A second card peeking out behind: this card holds several.
    svgElement("rect", { class: "card-behind", x: 4, y: 4, width: w, height: h, rx: Math.min(10, h / 5) }),
    svgElement("rect", { class: "card", width: w, height: h, rx: Math.min(10, h / 5) }),
    label,
    svgElement("text", { x: w - pad, y: rows[0], "font-size": fs, "text-anchor": "end" }, "op"),
    Object.assign(svgElement("text", { x: pad, y: rows[1], "font-size": fs * 0.75 }, "row-name"), { textContent: "data" }),
    svgElement("text", { x: w - pad, y: rows[1], "font-size": fs, "text-anchor": "end" }, "value data"),
    Object.assign(svgElement("text", { x: pad, y: rows[2], "font-size": fs * 0.75 }, "row-name grad-name"), { textContent: "grad" }),
    svgElement("text", { x: w - pad, y: rows[2], "font-size": fs, "text-anchor": "end" }, "value grad"),
    svgElement("text", { x: w / 2, y: h / 2, "font-size": compact.size, "text-anchor": "middle", "dominant-baseline": "central" }, "label-compact"),
  );
  return spaceWords(g);
}

/**
 * Refresh a collapsed group's card: its root's numbers, lit while the step is inside it. Its name
 * starts with ▸ (as an open box's starts with ▾): it opens.
 */
function updateCard(g, group, place, view, inside, placed) {
  const data = view.data.get(group.root);
  const grad = view.grad.get(group.root);
  const current = inside === group.id;
  if (placedFor.get(g) !== placed) {
    placedFor.set(g, placed);
    const { root } = placed;
    attr(g, "transform", `translate(${place.x - place.width / 2},${place.y - place.height / 2})`);
    attr(g, "data-group", group.name);
    attr(g, "data-collapsed", "true");
    attr(g, "data-root", group.root);
    const glyph = opGlyph(root);
    const name = fitLabel(`\u25b8 ${group.name}`, place, glyph);
    text(g.querySelector(".label-name"), name.shown);
    text(g.querySelector(".label-more"), name.more);
    text(g.querySelector(".op"), name.glyph);
    text(g.querySelector(".label-compact"), compactLabel(group.name, place).text);
  }
  const classes = ["node", "group-card", "kind-op"];
  if (placed.isRoot) classes.push("root");
  if (view.computed.has(group.root)) classes.push("computed");
  if (view.visited.has(group.root)) classes.push("visited");
  if (current) classes.push("current");
  if (grad !== undefined) classes.push("has-grad");
  attr(g, "class", classes.join(" "));
  attr(g, "data-current", current ? "true" : "false");
  attr(g, "data-data", fullText(data));
  attr(g, "data-grad", fullText(grad));
  const [dataText, gradText] = [shortText(data), shortText(grad)];
  text(g.querySelector(".value.data"), dataText);
  text(g.querySelector(".value.grad"), gradText);
  // Its name and op first, then its numbers: the order the card shows them in (spaceWords).
  const said = { name: `${group.name} ${g.querySelector(".op").textContent}`.trim(), count: group.nodes.length, data: dataText, grad: gradText };
  attr(g, "aria-label", current ? t("ui.groups.card_aria_inside", said) : t("ui.groups.card_aria", said));
  tooltips.set(g, () => [
    placed.statement, t("ui.groups.card_tooltip", { count: group.nodes.length }),
    `data = ${preciseText(data)}`, `grad = ${preciseText(grad)}`,
  ].join("\n"));
}

/** A collapsed group's card: write its tooltip (the pointer has reached it). */
export function showCardTooltip(g) {
  const tooltip = tooltips.get(g);
  if (tooltip) text(g.querySelector("title"), tooltip());
}

function enterFrame() {
  const g = svgElement("g", { "data-testid": "group", role: "button", tabindex: "0", "data-collapsed": "false" }, "group-frame");
  const tab = svgElement("g", {}, "frame-tab");
  tab.append(svgElement("rect", { class: "frame-tab-back", rx: 4 }), svgElement("text", { "font-size": TAB_FONT, "dominant-baseline": "central" }, "frame-name"));
  g.append(svgElement("title"), svgElement("rect", { class: "frame", rx: 12 }), tab);
  return g;
}

function updateFrame(g, group, box, statement) {
  const [x0, y0] = [box.x - box.width / 2, box.y - box.height / 2];
  attr(g, "transform", `translate(${x0},${y0})`);
  attr(g, "data-group", group.name);
  const [frame, tab] = [g.querySelector(".frame"), g.querySelector(".frame-tab")];
  attr(frame, "width", box.width);
  attr(frame, "height", box.height);
  const fits = Math.max(4, Math.floor((box.width - 24) / (TAB_FONT * 0.6)));
  const words = `\u25be ${statement}`;
  const shown = words.length <= fits ? words : `${words.slice(0, fits - 1)}\u2026`;
  const [back, name] = tab.children;
  attr(name, "x", 10);
  attr(name, "y", 2 + TAB_HEIGHT / 2);
  text(name, shown);
  attr(back, "x", 3);
  attr(back, "y", 2);
  attr(back, "width", Math.min(box.width - 6, shown.length * TAB_FONT * 0.6 + 16));
  attr(back, "height", TAB_HEIGHT);
  const count = group.nodes.length;
  attr(g, "aria-label", t("ui.groups.frame_aria", { name: group.name, statement, count }));
  text(g.querySelector("title"), `${statement}\n${t("ui.groups.frame_tooltip", { count })}`);
}

/** Where and how a collapsed group's card is placed in `arrangement`: {arrangement, root, isRoot, statement, place}. */
function placing(trace, arrangement, group, place) {
  const { nodeById } = traceIndex(trace);
  return { arrangement, root: nodeById.get(group.root), isRoot: group.root === trace.root, statement: statementText(trace, group, nodeById), place };
}

/**
 * Draw the cards of the collapsed groups of `arrangement` in `layer` at `view`: all of them, or
 * (`touched`, group ids a step may change) those alone. Returns how many it refreshed.
 */
export function drawGroupCards(layer, trace, arrangement, view, touched) {
  const { byId } = groupIndex(trace);
  const inside = view.current ? arrangement.hiddenIn.get(view.current) ?? null : null;
  if (touched) {
    let refreshed = 0;
    for (const id of touched) {
      const g = joined(layer, id);
      if (!g) continue;
      updateCard(g, byId.get(id), arrangement.cards.get(id), view, inside, placedFor.get(g));
      refreshed += 1;
    }
    return refreshed;
  }
  const shut = [...arrangement.cards.keys()].filter((id) => byId.has(id));
  join(layer, shut, (id) => id, (id) => enterCard(byId.get(id)), (g, id) => {
    const place = arrangement.cards.get(id);
    const placed = placedFor.get(g)?.arrangement === arrangement ? placedFor.get(g) : placing(trace, arrangement, byId.get(id), place);
    updateCard(g, byId.get(id), place, view, inside, placed);
  });
  return shut.length;
}

/** Draw the labelled box of every expanded group of `arrangement` in `layer`. */
export function drawGroupFrames(layer, trace, arrangement) {
  const { byId } = groupIndex(trace);
  const { nodeById } = traceIndex(trace);
  join(layer, [...arrangement.frames.keys()], (id) => id, enterFrame, (g, id) => {
    updateFrame(g, byId.get(id), arrangement.frames.get(id), statementText(trace, byId.get(id), nodeById));
  });
}

/** The card of a collapsed group in `layer` that shows node `id` (the group's root), or undefined. */
export function groupCardShowing(layer, arrangement, id) {
  const group = arrangement.shutRoots.get(id);
  return group === undefined ? undefined : joined(layer, group);
}
