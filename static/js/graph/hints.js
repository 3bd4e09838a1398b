// What a card says beyond its numbers: the "dead" relu tag, a warning badge in words, the op line
// with constants folded in, and the keyboard/screen-reader handles of nodes and edges.
// Called by graph/draw.js for every drawn node and edge; reads nothing but its arguments.

import { setText } from "../core/dom.js";
import { attr, join, svgElement } from "../core/svg.js";
import { deadShown, edgeAriaLabel, warningWords } from "../controls/explain.js";
import { compactText, opGlyph } from "../core/format.js";
import { t } from "../core/i18n.js";
import { traceIndex } from "../core/frames.js";
import { nodeName } from "../core/names.js";
import { canDie } from "../compute/ops.js";
import { cardCorner } from "./geometry.js";

/** The op line of a card whose constant inputs are folded into it: `× 3`, `+ 1`, `2 **`. */
export function foldedOpText(node, nodeById) {
  const inputs = node.inputs.map((id) => nodeById.get(id));
  if (!inputs.some((n) => n.kind === "const")) return null;
  const glyph = opGlyph(node);
  const consts = inputs.map((n) => (n.kind === "const" ? compactText(n.data) : null));
  if (inputs.length === 1) return `${glyph} ${consts[0]}`;
  return [consts[0], glyph, consts[1]].filter((t) => t !== null).join(" ");
}

function fontSizeOf(g) {
  return Number(g.querySelector(".op, .value")?.getAttribute("font-size")) || 12;
}

const hintsOf = new WeakMap(); // card → its hint elements, made once

function hintParts(g, node) {
  if (hintsOf.has(g)) return hintsOf.get(g);
  const fs = fontSizeOf(g);
  // A card's parts are drawn where the card is (graph/draw.js places cards by their parts' x and y,
  // and has just placed this one at its node's corner); the folded op copies the op's place.
  const [x0, y0] = cardCorner(node);
  const op = g.querySelector(".op");
  const hints = {};
  if (op) {
    hints.folded = svgElement("text", { x: op.getAttribute("x"), y: op.getAttribute("y"), "font-size": fs, "text-anchor": "end" }, "op op-folded");
    op.after(" ", hints.folded); // read after the op it stands for (see spaceWords in graph.js)
  }
  if (canDie(node)) {
    hints.dead = svgElement("text", { x: x0 + 2, y: y0 - fs * 0.35, "font-size": fs * 0.72 }, "tag tag-dead");
    hints.dead.textContent = t("ui.card.dead");
    g.append(" ", hints.dead);
  }
  // Under the card: above it sit the derived/const/dead tags, which a warning would overlap.
  hints.warning = svgElement("text", { x: x0 + node.width - 2, y: y0 + node.height + fs * 0.85, "font-size": fs * 0.72, "text-anchor": "end" }, "tag tag-warning");
  g.append(" ", hints.warning);
  hintsOf.set(g, hints);
  return hints;
}

/** Add the hints to a node's card `g` (after graph/draw.js drew its numbers; `shown`: their short
 *  texts, and `said`: what the card shows of its name, {name, op, cut}, as graph/draw.js placed it). */
export function decorateNode(g, node, trace, view, shown) {
  const { nodeById } = traceIndex(trace);
  const hints = hintParts(g, node);
  // The card's class list and title are graph/draw.js's (updateNode); hints add elements only.
  const dead = deadShown(node, view);
  // The constants folded in are the same for a node's new numbers (a slider moves leaves, and a
  // merge keeps the inputs array): written again only for other inputs.
  if (hints.folded && hints.foldedFor !== node.inputs) {
    hints.foldedFor = node.inputs;
    const folded = foldedOpText(node, nodeById) ?? "";
    setText(hints.folded, folded);
  }
  const warning = (node.warnings ?? []).map(warningWords).join(", ");
  const badge = warning ? `\u26a0 ${warning}` : "";
  setText(hints.warning, badge);
  // Focusable for the node explanation (Enter), named for screen readers.
  // Named by what it shows, in the order it shows it (its name, its op, data, grad, its tags):
  // the visible words are a part of the accessible name.
  // A constant shows its tag and its value alone. A name cut to fit ("x1*w1 + x2*…") is said as
  // shown, in its place among the numbers, and whole at the end (axe-core's label-in-name wants
  // the visible words in the accessible name in the order they show).
  // Read from what graph/draw.js wrote as it placed the card, not from the card's elements (a
  // slider move redraws every card: three queries a card were a millisecond at 1,000 cards).
  const { name: drawnName = nodeName(node), op, cut } = shown.said ?? {};
  const shownName = node.kind === "const" ? `${t("ui.card.const")} ${shown.data}` : drawnName;
  const name = [shownName, op].filter(Boolean).join(" ");
  attr(g, "tabindex", "0");
  attr(g, "role", "button");
  const label = [t("ui.card.aria", { name, data: shown.data, grad: shown.grad }), dead && t("ui.card.aria_dead"), badge && warning,
    cut && node.kind !== "const" && t("ui.card.aria_full_name", { name: nodeName(node) })];
  attr(g, "aria-label", label.filter(Boolean).join(", "));
}

const drawnLayouts = new WeakMap(); // layer → layoutKey of the trace its handles were drawn for

/** Wide transparent twins of the edges: easy to click, focusable (Enter explains the edge). */
export function drawEdgeHits(layer, trace, geometry, key) {
  if (drawnLayouts.get(layer) === key) return; // handles depend on the layout alone, not on values
  drawnLayouts.set(layer, key);
  const { nodeById } = traceIndex(trace);
  join(layer, trace.edges, (e) => e.id, () => svgElement("path", { tabindex: "0", role: "button" }, "edge-hit"), (path, edge) => {
    attr(path, "d", geometry.get(edge.id).d);
    attr(path, "data-edge-id", edge.id);
    attr(path, "data-testid", "edge");
    attr(path, "data-source-kind", nodeById.get(edge.source).kind);
    attr(path, "aria-label", edgeAriaLabel(trace, edge));
  });
}
