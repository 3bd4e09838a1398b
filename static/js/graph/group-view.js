// Statements as groups on the page (issue 11): which statements are collapsed (the reader's
// choice, kept while the graph's structure is the same), the group tools (collapse all, expand
// all, follow inside), clicks and Enter on a box or card, and the frame drawing the player runs:
// arrange (graph/groups.js), then graph/draw.js draws what is shown and graph/group-cards.js the boxes and cards.
// While a lab is open every node is drawn in place (its marks use the trace's own boxes).

import { drawGraph, cardElement } from "./draw.js";
import { drawGroupCards, drawGroupFrames, groupCardShowing, showCardTooltip } from "./group-cards.js";
import { arrange, arrangedBounds, groupIndex, openingGroups, shownChanges, shownTrace } from "./groups.js";
import { h } from "../core/dom.js";
import { isVariant } from "../labs/contributions.js";
import { sameDrawing } from "../compute/merge-numbers.js";
import { t } from "../core/i18n.js";
import { onPlainClick, svgElement } from "../core/svg.js";
import { mountOverview } from "./overview-view.js";
import { opensOnOverview } from "./overview.js";

const EMPTY = new Set();
// What the last frame drew when it drew the overview, and an arrangement with nothing in it.
const OVERVIEW = { key: "overview" };
const NO_ARRANGEMENT = { key: "none", cards: new Map(), frames: new Map(), hiddenIn: new Map(), shutRoots: new Map() };

/**
 * The row of the pane's tools: the group tools, then the zoom tools (`.graph-tools`) at its right
 * end, wrapping under each other when the pane is too narrow for both (a phone, a long language):
 * two bars placed in two corners would overlap there.
 */
function toolsRow(tools) {
  const zoomTools = tools.querySelector(".graph-tools");
  if (!zoomTools) return tools;
  const row = zoomTools.closest(".pane-tools") ?? h("div", { class: "pane-tools" });
  if (!row.isConnected) {
    zoomTools.before(row);
    row.append(zoomTools);
  }
  return row;
}

/** The group tools' bar in `tools`: {bar, overview, collapseAll, expandAll, followBox}. */
function groupTools(tools) {
  const button = (testid, label, title) => h("button", { type: "button", class: "ghost", text: label, title, "data-testid": testid });
  const overview = button("overview-open", t("ui.overview.top"), t("ui.overview.open_title"));
  const collapseAll = button("collapse-all", t("ui.groups.collapse_all"), t("ui.groups.collapse_all_title"));
  const expandAll = button("expand-all", t("ui.groups.expand_all"), t("ui.groups.expand_all_title"));
  const followBox = h("input", { type: "checkbox", "data-testid": "follow-inside" });
  const followLabel = h("label", { class: "toggle follow-inside", title: t("ui.groups.follow_inside_title") },
    followBox, ` ${t("ui.groups.follow_inside")}`);
  const bar = h("div", { class: "group-tools", role: "group", "aria-label": t("ui.groups.label"), hidden: true },
    overview, collapseAll, expandAll, followLabel);
  toolsRow(tools).prepend(bar);
  return { bar, overview, collapseAll, expandAll, followBox };
}

/**
 * The reader's arrangements: which groups are collapsed (`choice`, per structure), whether the
 * group the step is inside is opened (`follow`), and the arrangement of a trace at a step
 * (memoised: a step costs nothing here). `plain(trace)`: draw every node in place (a lab is open).
 */
function createArrangements(threshold, plain) {
  let choice = null; // {key (the trace's structure), base, collapsed: Set of group ids}
  let memo = { trace: null, collapsed: null, base: null, opened: null, arrangement: null };
  const self = {
    follow: false,
    /** The reader's choice for `trace`: kept while the structure is the same, else how it opens. */
    choiceFor(trace) {
      const key = trace.structure ?? trace.groups;
      // A big model's graph opens on its overview (graph/overview.js); `collapse_at=never` draws it whole.
      if (!choice || choice.key !== key) choice = { key, ...openingGroups(trace, threshold), overview: threshold !== Infinity && opensOnOverview(trace) };
      return choice;
    },
    choose(trace, change) {
      choice = { ...self.choiceFor(trace), ...change };
    },
    /** The group opened only because the step is inside it and "follow inside" is on, or null. */
    opened: () => memo.opened,
    arrangementFor(trace, current) {
      const c = self.choiceFor(trace);
      const [base, collapsed] = plain(trace) ? ["plain", EMPTY] : [c.base, c.collapsed];
      const inside = current ? groupIndex(trace).ofNode.get(current) : null;
      const opened = self.follow && inside && collapsed.has(inside.id) ? inside.id : null;
      if (sameDrawing(memo.trace, trace) && memo.collapsed === collapsed && memo.base === base && memo.opened === opened) return memo.arrangement;
      const shut = opened ? new Set([...collapsed].filter((id) => id !== opened)) : collapsed;
      // A lab draws the trace exactly as it is (its marks use the trace's own boxes): no boxes.
      const arrangement = base === "plain"
        ? { ...arrange(trace, "expanded", EMPTY), key: "plain", frames: new Map() }
        : arrange(trace, base, shut);
      memo = { trace, collapsed, base, opened, arrangement };
      return arrangement;
    },
  };
  return self;
}

/** Clicks and Enter on a box's name or a collapsed card toggle its group; the pointer lights it. */
function listenToGroups(svg, cardLayer, toggle, update) {
  onPlainClick(svg, (pressed) => {
    const target = pressed?.closest?.(".group-card[data-group], .frame-tab");
    const group = target?.closest("[data-testid=group]");
    if (group) toggle(group.getAttribute("data-group"), true);
  });
  svg.addEventListener("keydown", (event) => {
    if (event.key !== "Enter" && event.key !== " ") return;
    const group = event.target.closest?.("[data-testid=group]");
    if (!group) return;
    event.preventDefault();
    toggle(group.getAttribute("data-group"), true);
  });
  // A card's tooltip is written when the pointer reaches it, not on every step; the editor
  // lights the statement under the pointer (its root's span), as it does for a node.
  cardLayer.addEventListener("pointerover", (event) => {
    const g = event.target.closest?.(".group-card");
    if (g) showCardTooltip(g);
    update({ hoverNode: g?.getAttribute("data-root") ?? null });
  });
  cardLayer.addEventListener("pointerleave", () => update({ hoverNode: null }));
}

/** The layers of the groups: the boxes under the edges, the collapsed cards over the nodes. */
function groupLayers(layers) {
  const frameLayer = svgElement("g", {}, "layer-frames");
  const cardLayer = svgElement("g", {}, "layer-group-cards");
  const overviewLayer = svgElement("g", {}, "layer-overview");
  layers.edges.before(frameLayer);
  layers.nodes.after(cardLayer);
  cardLayer.after(overviewLayer);
  return { frameLayer, cardLayer, overviewLayer };
}

/** The tools' state for `trace` and the reader's `choice`: hidden without groups, locked while a lab is open. */
function writeTools(bar, trace, choice, locked) {
  const { collapsible } = groupIndex(trace);
  bar.bar.hidden = collapsible.length === 0;
  if (bar.bar.hidden) return;
  bar.overview.hidden = !trace.overview || Boolean(choice.overview && !locked);
  bar.overview.disabled = locked;
  // On the overview both lead out of it, to every statement drawn.
  const drawn = !locked && !choice.overview;
  bar.collapseAll.disabled = locked || (drawn && choice.base === "collapsed" && choice.collapsed.size === collapsible.length);
  bar.expandAll.disabled = locked || (drawn && choice.base === "expanded" && choice.collapsed.size === 0);
  bar.bar.title = locked ? t("ui.groups.locked") : "";
}

/**
 * What the reader does to the groups: toggle one (`name`; `focus`: its box or card gets the focus
 * after), or collapse or expand all. Each changes the reader's choice and draws the frame again.
 */
function groupActions({ svg, bar, arrangements, plain, onArrangedAll }, { state, redraw, drawnArrangement }) {
  function toggle(name, focus) {
    const trace = state.trace;
    if (!trace || plain(trace)) return;
    const group = groupIndex(trace).collapsible.find((g) => g.name === name);
    if (!group) return;
    const collapsed = new Set(arrangements.choiceFor(trace).collapsed);
    // Following inside, the group holding the step is drawn open: its toggle collapses it for good.
    const drawnOpen = !drawnArrangement()?.hiddenIn.has(group.root);
    if (drawnOpen) collapsed.add(group.id);
    else collapsed.delete(group.id);
    // Open only because the step is inside and "follow inside" is on: collapsing it turns that off.
    if (drawnOpen && arrangements.opened() === group.id) bar.followBox.checked = arrangements.follow = false;
    arrangements.choose(trace, { collapsed });
    redraw();
    if (focus) svg.querySelector(`[data-testid=group][data-group="${CSS.escape(name)}"]`)?.focus({ preventScroll: true });
  }
  function setAll(base) {
    const trace = state.trace;
    if (!trace) return;
    arrangements.choose(trace, { base, overview: false, collapsed: new Set(base === "collapsed" ? groupIndex(trace).collapsible.map((g) => g.id) : []) });
    redraw();
    onArrangedAll();
  }
  return { toggle, setAll };
}

/** The group tools: collapse all, expand all, and follow (the visited statement opens). */
function listenToTools(bar, arrangements, setAll, redraw, { state, refit }) {
  bar.overview.addEventListener("click", () => {
    if (!state.trace) return;
    arrangements.choose(state.trace, { overview: true });
    redraw();
    refit();
  });
  bar.collapseAll.addEventListener("click", () => setAll("collapsed"));
  bar.expandAll.addEventListener("click", () => setAll("expanded"));
  bar.followBox.addEventListener("change", () => {
    arrangements.follow = bar.followBox.checked;
    redraw();
  });
}

/**
 * Mount the groups on the graph: `layers` are graph/view.js's SVG layers (a layer for the boxes
 * goes under the edges, one for the cards over the nodes); `tools` is where the group tools go.
 * `threshold`: graphs of at least this many nodes open collapsed. `onArrangedAll()`: every group
 * was collapsed or expanded at once (graph-view refits). Returns {draw (the player's frame
 * drawing), drawKeys, attach(player), bounds(trace), cardOf(node id)}.
 */
export function mountGroups({ svg, layers, tools, threshold, onArrangedAll = () => {} }, scope) {
  const { state } = scope.store;
  const { frameLayer, cardLayer, overviewLayer } = groupLayers(layers);
  const bar = groupTools(tools);
  const overview = mountOverview({ svg, pane: tools, layer: overviewLayer, row: toolsRow(tools), redraw: () => player?.redraw(), refit: onArrangedAll });
  // Labs mark cards where the trace puts them: while one is open every node is drawn, in place.
  const plain = (trace) => Boolean(state.lab) || isVariant(trace);
  const arrangements = createArrangements(threshold, plain);
  let player = null;
  let last = null; // what the last frame drew: {trace, arrangement, shown}

  const showTools = (trace) => writeTools(bar, trace, arrangements.choiceFor(trace), plain(trace));

  const showsOverview = (trace) => !plain(trace) && Boolean(arrangements.choiceFor(trace).overview);

  /** The frame on the overview: its cards (graph/overview-view.js), no group's card or box. */
  function drawOverview(graphLayers, trace, view) {
    if (last?.arrangement !== OVERVIEW) {
      drawGroupCards(cardLayer, trace, NO_ARRANGEMENT, view, null);
      drawGroupFrames(frameLayer, trace, NO_ARRANGEMENT);
    }
    const drawn = overview.draw(graphLayers, trace, view);
    showTools(trace);
    last = { trace, arrangement: OVERVIEW, shown: drawn.shown };
    return drawn;
  }

  /** The player's frame drawing: what the groups leave shown, then the cards of collapsed ones. */
  function draw(graphLayers, trace, view, changed) {
    if (showsOverview(trace)) return drawOverview(graphLayers, trace, view);
    if (last?.arrangement === OVERVIEW) {
      overview.clear();
      last = null;
    }
    const arrangement = arrangements.arrangementFor(trace, view.current);
    const shown = shownTrace(trace, arrangement);
    // `changed` (the player's) says the last frame drew this trace, or the same drawing with
    // other numbers (a slider move): the boxes and the tools stay as they are.
    const same = last?.arrangement === arrangement && (last.shown === shown || Boolean(changed));
    const mapped = same ? shownChanges(arrangement, shown, changed) : { changed: null, groups: null };
    const drawn = drawGraph(graphLayers, shown, view, mapped.changed);
    const refreshed = drawn.refreshed + drawGroupCards(cardLayer, trace, arrangement, view, mapped.groups);
    if (!same) {
      drawGroupFrames(frameLayer, trace, arrangement);
      showTools(trace);
    }
    last = { trace, arrangement, shown };
    const cardsOf = (id) => [cardElement(graphLayers, id), groupCardShowing(cardLayer, arrangement, id)].filter(Boolean);
    return { refreshed, labels: drawn.labels, shown, cardsOf, arranged: !same };
  }

  const { toggle, setAll } = groupActions({ svg, bar, arrangements, plain, onArrangedAll }, {
    state, redraw: () => player?.redraw(), drawnArrangement: () => last?.arrangement,
  });

  listenToTools(bar, arrangements, setAll, () => player?.redraw(), { state, refit: onArrangedAll });
  listenToGroups(svg, cardLayer, toggle, scope.store.update);

  return {
    draw,
    drawKeys: ["lab"], // an open lab draws every node in place
    attach(p) {
      player = p;
    },
    /** Whether Fit shows all that is drawn, whatever the scale (the overview's cards are few and large). */
    fitsWhole: (trace) => showsOverview(trace) && overview.path().length < 2,
    /** The extent of what is drawn for `trace` (graph coordinates). */
    bounds(trace) {
      if (showsOverview(trace)) return overview.bounds(trace);
      const arrangement = last?.trace === trace ? last.arrangement : arrangements.arrangementFor(trace, null);
      return arrangedBounds(arrangement);
    },
    /** The box of the card that shows node `id` now (its own, or its collapsed group's). */
    cardOf(id) {
      if (last?.arrangement === OVERVIEW) return overview.cardOf(id);
      if (!last || !id) return null;
      const { cards, hiddenIn } = last.arrangement;
      return cards.get(hiddenIn.get(id) ?? id) ?? null;
    },
  };
}
