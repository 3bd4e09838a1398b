// The overview on the page (issue 42): a big model's graph opens on its parts (a card a sample, the
// parameters alone, what combines samples: graph/overview.js), one edge per pair of cards; one
// click (or Enter) on a card opens its next level, a part's layers and statements, then one
// statement's scalar graph (graph/draw.js, as the group view draws it); the path bar and Escape
// go back up. Only what is shown is built: 102 cards for micrograd's demo, not its 65,818 nodes.
// A slider move rewrites the cards' numbers and counts, and nothing else.
//
// Hooks: the path bar `[data-testid=overview-path]` (`data-level`: parts, part, statement) with a
// button a level; each card `[data-testid=overview-card]` with data-level, data-kind (part kind,
// "statement", "input"), data-part, data-group (a statement's name), data-root, data-data,
// data-grad and the counts data-statements, data-off, data-dead, data-vanishing.

import { drawGraph } from "./draw.js";
import { overviewCounts, overviewIndex, overviewPlaces, statementTrace } from "./overview.js";
import { fitLabel } from "./geometry.js";
import { countText, fullText, shortText } from "../core/format.js";
import { h } from "../core/dom.js";
import { lang, t } from "../core/i18n.js";
import { attr, join, joined, onPlainClick, svgElement, text } from "../core/svg.js";
import { TraceMemo } from "../core/trace-memo.js";
import { NUMBERS_REST_MS, copied, drawingOf, numberArrays } from "../compute/merge-numbers.js";

const COUNTS = ["statements", "off", "dead", "vanishing"];
const NOTHING = { nodes: [], edges: [] };
// What graph/draw.js draws when the level shows none of the graph's nodes (it removes what it drew).
const EMPTY_TRACE = { nodes: [], edges: [], steps: [], groups: [] };

const PART_WORDS = { parameters: "ui.overview.parameters", combined: "ui.overview.combined" };

/** A part's caption: "sample 3", "parameters alone", "across samples". */
function partCaption(part) {
  return part.kind === "sample" ? t("ui.overview.sample", { n: countText(part.index) }) : t(PART_WORDS[part.kind]);
}

function enterCard(card) {
  const g = svgElement("g", { "data-testid": "overview-card", role: "button", tabindex: "0" }, "node overview-card kind-op");
  const { width: w, height: hgt } = card;
  const pad = 12;
  g.append(
    svgElement("title"),
    svgElement("rect", { class: "card-behind", x: 5, y: 5, width: w, height: hgt, rx: 10 }),
    svgElement("rect", { class: "card", width: w, height: hgt, rx: 10 }),
    svgElement("text", { x: pad, y: hgt * 0.3, "font-size": hgt * 0.2 }, "label overview-name"),
    svgElement("text", { x: pad, y: hgt * 0.58, "font-size": hgt * 0.165 }, "overview-numbers"),
    svgElement("text", { x: pad, y: hgt * 0.84, "font-size": hgt * 0.15 }, "overview-counts"),
  );
  return g;
}

// What each card was last written from: {frame, own, countsText, data, grad}. A slider move changes a card's
// numbers alone, so its frame (place, names, counts) is not worked out again (micrograd's demo:
// 102 cards a move).
const cardWritten = new WeakMap();

/** A card's name, numbers and `counts` (overviewCounts') at `view`; `place` says where and what it is. */
function updateCard(g, place, trace, view, level, counts) {
  const index = overviewIndex(trace);
  const part = place.kind === "part" ? index.partById.get(place.id) : null;
  const group = part ? index.groupById.get(part.root) : index.groupById.get(place.id);
  const own = part ? counts.parts.get(part.id) : counts.groups.get(place.id);
  const name = part ? partCaption(part) : group.name;
  const data = view.data.get(group.root);
  const grad = view.grad.get(group.root);
  const frame = [lang(), level, place.key, place.kind, place.x, place.y, place.width, place.height, name, group.root].join("\n");
  const was = cardWritten.get(g);
  const framed = was?.frame === frame && was.own === own;
  if (framed && Object.is(was.data, data) && Object.is(was.grad, grad)) return;
  const countsText = framed ? was.countsText
    : own ? t(part ? "ui.overview.part_counts" : "ui.overview.statement_counts", Object.fromEntries(COUNTS.map((k) => [k, countText(own[k])]))) : "";
  if (!framed) {
    attr(g, "transform", `translate(${place.x - place.width / 2},${place.y - place.height / 2})`);
    attr(g, "data-level", level);
    attr(g, "data-card", place.key);
    attr(g, "data-kind", part ? part.kind : place.kind);
    attr(g, "data-part", part ? part.id : index.partOfGroup.get(place.id)?.id ?? null);
    attr(g, "data-group", group.name);
    attr(g, "data-root", group.root);
    for (const key of COUNTS) attr(g, `data-${key}`, own ? String(own[key]) : null);
    text(g.querySelector(".overview-name"), fitLabel(`${place.kind === "input" ? "" : "\u25b8 "}${name}`, place, "").shown);
    text(g.querySelector(".overview-counts"), countsText);
    attr(g, "class", `node overview-card kind-op${own?.dead ? " flagged-dead" : ""}${place.kind === "input" ? " overview-input" : ""}`);
    text(g.querySelector("title"), part ? `${name} (${part.name})\n${countsText}` : `${group.name}\n${countsText}`);
  }
  attr(g, "data-data", fullText(data));
  attr(g, "data-grad", fullText(grad));
  const numbers = t("ui.overview.numbers", { data: shortText(data), grad: shortText(grad) });
  text(g.querySelector(".overview-numbers"), numbers);
  const said = { name, numbers, counts: countsText };
  attr(g, "aria-label", t(place.kind === "input" ? "ui.overview.input_aria" : "ui.overview.card_aria", said));
  cardWritten.set(g, { frame, own, countsText, data, grad });
}

/** An aggregated edge: a curve from the right of one card to the left of the other. */
function edgePath(from, to) {
  const [x0, y0] = [from.x + from.width / 2, from.y];
  const [x1, y1] = [to.x - to.width / 2, to.y];
  const bend = Math.max(30, (x1 - x0) / 2);
  return `M${x0},${y0} C${x0 + bend},${y0} ${x1 - bend},${y1} ${x1},${y1}`;
}

/** The path bar: a button a level opened, the last one the level shown. */
function pathBar(row) {
  const bar = h("nav", { class: "overview-path", "data-testid": "overview-path", "aria-label": t("ui.overview.path_label"), hidden: true });
  row.prepend(bar);
  return bar;
}

/** The boxes of what `path` shows (graph coordinates): the cards, or the statement's nodes. */
function extentOf(boxes) {
  let [x0, y0, x1, y1] = [Infinity, Infinity, -Infinity, -Infinity];
  for (const b of boxes) {
    x0 = Math.min(x0, b.x - b.width / 2);
    x1 = Math.max(x1, b.x + b.width / 2);
    y0 = Math.min(y0, b.y - b.height / 2 - 40);
    y1 = Math.max(y1, b.y + b.height / 2);
  }
  return Number.isFinite(x0) ? { x: x0, y: y0, width: x1 - x0, height: y1 - y0 } : { x: 0, y: 0, width: 1, height: 1 };
}

/**
 * The overview on `svg`: its cards and edges in `layer` (inside the graph's viewport), its path
 * bar in the pane's tools `row`; Escape in the graph's `pane` goes back up. `redraw()` draws the frame again, `refit()` fits the pane.
 * Returns {draw, clear, bounds, cardOf, open, up, path}.
 */
export function mountOverview({ svg, pane, layer, row, redraw, refit }) {
  const frameLayer = svgElement("g", {}, "overview-frames");
  const edgeLayer = svgElement("g", {}, "overview-edges");
  const headLayer = svgElement("g", {}, "overview-heads");
  const cardLayer = svgElement("g", {}, "overview-cards");
  layer.append(frameLayer, edgeLayer, headLayer, cardLayer);
  const bar = pathBar(row);
  let path = [];
  let key = null; // the structure the path is for
  let last = null; // {trace, places (or null: a statement's graph), shown, boxes: Map card key → box}
  let graphDrawn = true; // whether graph/draw.js may have cards in the layers (a statement's, the group view's)

  function go(to) {
    path = to;
    redraw();
    refit();
    // The focus stays in the graph (Escape goes back up from there): a card, else a node's card.
    const first = cardLayer.querySelector("[data-testid=overview-card]") ?? svg.querySelector("[data-testid=node][tabindex]") ?? svg;
    first.focus?.({ preventScroll: true });
  }

  function clearLayers() {
    for (const each of [frameLayer, edgeLayer, headLayer, cardLayer]) join(each, [], (x) => x.key, () => null, () => {});
  }

  let barWritten = null; // the levels (texts and paths) the bar shows
  function writeBar(trace) {
    const index = overviewIndex(trace);
    const levels = [{ text: t("ui.overview.top"), to: [] }];
    if (path[0]) levels.push({ text: partCaption(index.partById.get(path[0])), to: path.slice(0, 1) });
    if (path[1]) levels.push({ text: index.groupById.get(path[1]).name, to: path.slice(0, 2) });
    bar.hidden = false;
    // The same levels as written (every slider move draws the frame again): nothing to rewrite.
    const written = JSON.stringify(levels.map((level) => [level.text, level.to]));
    if (barWritten === written) return;
    barWritten = written;
    bar.dataset.level = ["parts", "part", "statement"][path.length];
    bar.replaceChildren(...levels.map((level, k) => {
      const last = k === levels.length - 1;
      const button = h("button", { type: "button", class: "ghost", text: level.text, "data-depth": String(k), disabled: last, "aria-current": last ? "location" : null });
      button.addEventListener("click", () => go(level.to));
      return k ? [h("span", { class: "overview-sep", text: " \u203a ", "aria-hidden": "true" }), button] : [button];
    }).flat());
  }

  let shownCounts = null; // {structure, counts}: the counts the cards show
  let countsTimer = 0;
  /**
   * The counts for `trace`'s cards: its own when counted, or a new structure's (counted now);
   * else (a slider move's numbers) the ones shown, its own counted once the numbers have rested
   * NUMBERS_REST_MS and written by `rewrite()` if the trace is still the one shown.
   */
  function countsFor(trace, rewrite) {
    const ready = overviewCounts(trace, { ready: true });
    if (ready || shownCounts?.structure !== key) {
      shownCounts = { structure: key, counts: ready ?? overviewCounts(trace) };
      return shownCounts.counts;
    }
    // Once the numbers rest (a drag pauses): counting the flags of 65,818 nodes takes a frame's time.
    clearTimeout(countsTimer);
    countsTimer = setTimeout(() => {
      if (last?.trace !== trace || !last.places) return;
      shownCounts = { structure: key, counts: overviewCounts(trace) };
      rewrite();
    }, NUMBERS_REST_MS);
    return shownCounts.counts;
  }

  /** The path for `trace`: the one opened, unless the graph's structure changed (then the top). */
  function pathFor(trace) {
    const structure = trace.structure ?? trace.overview;
    if (key !== structure) [key, path] = [structure, []];
    if (path[0] && !overviewIndex(trace).partById.has(path[0])) path = [];
    return path;
  }

  /** The player's frame drawing while the overview is shown. */
  function draw(graphLayers, trace, view) {
    pathFor(trace);
    const index = overviewIndex(trace);
    if (path.length === 2) {
      const shown = statementTrace(trace, path[1]);
      clearLayers();
      const drawn = drawGraph(graphLayers, shown, view, null);
      graphDrawn = true;
      writeBar(trace);
      const root = index.groupById.get(path[1]).root;
      last = { trace, places: null, shown, boxes: new Map(shown.nodes.map((n) => [n.id, n])), extent: extentOf(shown.nodes), root };
      return { refreshed: drawn.refreshed, labels: drawn.labels, shown, cardsOf: (id) => [joined(graphLayers.nodes, id)].filter(Boolean), arranged: true };
    }
    if (graphDrawn) drawGraph(graphLayers, EMPTY_TRACE, view, null);
    graphDrawn = false;
    const places = overviewPlaces(trace, path);
    const boxes = new Map(places.cards.map((c) => [c.key, c]));
    const ends = new Map([...boxes, ...places.frames.map((f) => [f.key, f])]);
    joinEdges(edgeLayer, places.edges, ends);
    join(frameLayer, places.frames, (f) => f.key, () => svgElement("rect", { rx: 14 }, "overview-frame"), (el, f) => {
      attr(el, "x", f.x - f.width / 2 - 14);
      attr(el, "y", f.y - f.height / 2 - 14);
      attr(el, "width", f.width + 28);
      attr(el, "height", f.height + 28);
    });
    join(headLayer, places.heads, (x) => x.key, () => svgElement("text", { "font-size": 18, "text-anchor": "middle" }, "overview-head"), (el, x) => {
      attr(el, "x", x.x);
      attr(el, "y", x.y);
      text(el, x.text);
    });
    const counts = countsFor(trace, () => {
      for (const place of places.cards) updateCard(joined(cardLayer, place.key), place, trace, view, places.level, overviewCounts(trace));
    });
    joinCards(cardLayer, places, trace, view, counts);
    writeBar(trace);
    // The gradient map colours a card as the node whose numbers it shows (its part's or its
    // statement's value): cardsOf answers for those nodes.
    const byRoot = new Map();
    for (const card of places.cards) {
      const part = card.kind === "part" ? index.partById.get(card.id) : null;
      const group = index.groupById.get(part ? part.root : card.id);
      byRoot.set(group.root, joined(cardLayer, card.key));
    }
    last = { trace, places, shown: nothingShown(trace), boxes, byRoot, extent: extentOf(places.cards) };
    return { refreshed: places.cards.length, labels: [], shown: last.shown, cardsOf: (id) => (byRoot.has(id) ? [byRoot.get(id)] : []), arranged: true };
  }

  /** The box of the card that shows node `id` at the level shown (its part's, its statement's, its own), or undefined. */
  function shownBox(id) {
    if (!last.places) return last.boxes.get(id);
    const index = overviewIndex(last.trace);
    const i = Number(id.slice(1));
    if (path.length === 0) return index.partOfNode[i] < 0 ? undefined : last.boxes.get(index.parts[index.partOfNode[i]].id);
    return last.boxes.get(last.trace.groups[index.groupOfNode[i]].id);
  }

  function open(cardKey) {
    if (!last?.places) return;
    const place = last.places.cards.find((c) => c.key === cardKey);
    if (!place || place.kind === "input") return;
    go(place.kind === "part" ? [place.id] : [path[0], place.id]);
  }

  onPlainClick(svg, (pressed) => {
    const card = pressed?.closest?.("[data-testid=overview-card]");
    if (card && cardLayer.contains(card)) open(keyOf(card));
  });
  // Escape anywhere in the pane (a card, a node's card, the zoom buttons) goes back up.
  pane.addEventListener("keydown", (event) => {
    if (!last || !layer.isConnected || bar.hidden) return;
    const card = event.target.closest?.("[data-testid=overview-card]");
    if ((event.key === "Enter" || event.key === " ") && card) {
      event.preventDefault();
      open(keyOf(card));
    } else if ((event.key === "Escape" || event.key === "Backspace") && path.length) {
      event.preventDefault();
      go(path.slice(0, -1));
    }
  });
  const keyOf = (card) => card.getAttribute("data-card");

  return {
    draw,
    /** Leave the overview: its cards and path bar go (the group view draws the graph). */
    clear() {
      clearLayers();
      graphDrawn = true;
      bar.hidden = true;
      barWritten = null;
      last = null;
    },
    /** The extent of what the overview shows of `trace` now. */
    bounds(trace) {
      const shownPath = pathFor(trace);
      return extentOf(shownPath.length === 2 ? statementTrace(trace, shownPath[1]).nodes : overviewPlaces(trace, shownPath).cards);
    },
    /** The box of the card that shows node `id` now, or null. */
    cardOf(id) {
      if (!last || !id) return null;
      // A node the level does not show: the statement's value (its graph), else the middle.
      return shownBox(id) ?? (last.places ? middleOf(last.extent) : last.boxes.get(last.root)) ?? null;
    },
    path: () => path,
  };
}

/** A point-sized box in the middle of `box`: where a node the level does not show is (Follow keeps still). */
/** The edges between the cards (or frames) `ends` holds by key, in `layer` (a keyed join). */
function joinEdges(layer, edges, ends) {
  join(layer, edges, (e) => e.key, () => svgElement("path", { "marker-end": "url(#arrow-idle)" }, "edge overview-edge"), (el, e) => {
    attr(el, "d", edgePath(ends.get(e.from), ends.get(e.to)));
    attr(el, "data-count", String(e.count));
  });
}

/** The cards of `places` in `layer` (a keyed join), their numbers `view`'s and their counts `counts`. */
function joinCards(layer, places, trace, view, counts) {
  join(layer, places.cards, (c) => c.key, enterCard, (g, place) => updateCard(g, place, trace, view, places.level, counts));
}

function middleOf(box) {
  return { x: box.x + box.width / 2, y: box.y + box.height / 2, width: 1, height: 1 };
}

/**
 * The overview's parts as the player opens on them (its frame at the backward pass's seed: every
 * value computed, no gradient yet but the root's, 1), drawn in `layer` from `trace` (a notebook's
 * first view: graph/first-view.js) as `draw` draws them, and opening nothing: no card is a button.
 * Returns the box they fill (graph coordinates).
 */
export function drawOverviewParts(layer, trace) {
  const places = overviewPlaces(trace, []);
  const counts = overviewCounts(trace);
  const { data } = numberArrays(trace);
  const view = { data: { get: (id) => data[Number(id.slice(1))] }, grad: { get: (id) => (id === trace.root ? 1 : undefined) } };
  const edges = svgElement("g", {}, "overview-edges");
  const cards = svgElement("g", {}, "overview-cards");
  joinEdges(edges, places.edges, new Map(places.cards.map((c) => [c.key, c])));
  joinCards(cards, places, trace, view, counts);
  for (const g of cards.children) {
    g.removeAttribute("role");
    g.removeAttribute("tabindex");
  }
  layer.append(edges, cards);
  return extentOf(places.cards);
}

const nothingMemo = new TraceMemo("overview nothing shown");

/** What the frame shows as a trace at the parts' and a part's levels: no node of the graph (one
 *  object for every trace of a drawing: its lookups are made once, not at every slider move). */
function nothingShown(trace) {
  const drawing = drawingOf(trace);
  let shown = nothingMemo.get(drawing);
  if (!shown) nothingMemo.set(drawing, (shown = Object.assign(copied(drawing), NOTHING)));
  return shown;
}
