// Statements as groups on the page (issue 11): the labelled box of each expanded group (under the
// edges), the card of each collapsed one (over them), the group tools (collapse all, expand all,
// follow inside), and the frame drawing the player runs: arrange (groups.js), then graph.js draws
// what is shown and this module the group cards, each refreshed only when a step touches it.
//
// Hooks: every box or card is `[data-testid=group]` with `data-group` (the statement's name) and
// `data-collapsed`; a collapsed card holding the step shown has `data-current="true"`. Click or
// Enter toggles one group; `collapse-all`, `expand-all`, `follow-inside` are the tools.

import { compactLabel, drawGraph, fitLabel, fontSize } from "./graph.js";
import { arrange, arrangedBounds, groupIndex, openingGroups, shownChanges, shownTrace } from "./groups.js";
import { fullText, opGlyph, preciseText, shortText } from "./format.js";
import { isVariant } from "./lab-trace.js";
import { t } from "./i18n.js";
import { pageScope } from "./scope.js";
import { attr, join, joined, onPlainClick, svgElement, text } from "./svg.js";

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
  return g;
}

/**
 * Refresh a collapsed group's card: its root's numbers, lit while the step is inside it. Its name
 * starts with ▸ (as an open box's starts with ▾): it opens.
 */
function updateCard(g, group, place, view, inside, placed) {
  const data = view.data.get(group.root);
  const grad = view.grad.get(group.root);
  const current = inside === group.id;
  if (g._placed !== placed) {
    g._placed = placed;
    const { root } = placed;
    attr(g, "transform", `translate(${place.x - place.width / 2},${place.y - place.height / 2})`);
    attr(g, "data-group", group.name);
    attr(g, "data-collapsed", "true");
    attr(g, "data-root", group.root);
    const glyph = opGlyph(root);
    const name = fitLabel(`\u25b8 ${group.name}`, place, glyph);
    text(g.querySelector(".label-name"), name.shown);
    text(g.querySelector(".label-more"), name.cut ? "\u2026" : "");
    text(g.querySelector(".op"), glyph);
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
  const parts = (g._parts ??= { data: g.querySelector(".value.data"), grad: g.querySelector(".value.grad"), title: g.querySelector("title") });
  const [dataText, gradText] = [shortText(data), shortText(grad)];
  text(parts.data, dataText);
  text(parts.grad, gradText);
  const said = { name: group.name, count: group.nodes.length, data: dataText, grad: gradText };
  attr(g, "aria-label", current ? t("ui.groups.card_aria_inside", said) : t("ui.groups.card_aria", said));
  g._tooltip = () => [
    placed.statement, t("ui.groups.card_tooltip", { count: group.nodes.length }),
    `data = ${preciseText(data)}`, `grad = ${preciseText(grad)}`,
  ].join("\n");
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

/**
 * Mount the groups on the graph: `layers` are graph-view.js's SVG layers (a layer for the boxes
 * goes under the edges, one for the cards over the nodes); `tools` is where the group tools go.
 * `threshold`: graphs of at least this many nodes open collapsed. `onArrangedAll()`: every group
 * was collapsed or expanded at once (graph-view refits). `onArranged()`: a frame was drawn in
 * another arrangement than the last (a new program, a group toggled, opened by follow inside):
 * the cards are elsewhere. Returns {draw (the player's frame drawing), attach(player),
 * bounds(trace), cardOf(node id)}.
 */
export function mountGroups({ svg, layers, tools, threshold, onArrangedAll = () => {}, onArranged = () => {} }, scope = pageScope) {
  const { state, subscribe, update } = scope.store;
  const frameLayer = svgElement("g", {}, "layer-frames");
  const cardLayer = svgElement("g", {}, "layer-group-cards");
  layers.edges.before(frameLayer);
  layers.nodes.after(cardLayer);

  const bar = document.createElement("div");
  bar.className = "group-tools";
  bar.setAttribute("role", "group");
  bar.setAttribute("aria-label", t("ui.groups.label"));
  bar.hidden = true;
  const button = (testid, label, title) => {
    const b = document.createElement("button");
    Object.assign(b, { type: "button", className: "ghost", textContent: label, title });
    b.dataset.testid = testid;
    return b;
  };
  const collapseAll = button("collapse-all", t("ui.groups.collapse_all"), t("ui.groups.collapse_all_title"));
  const expandAll = button("expand-all", t("ui.groups.expand_all"), t("ui.groups.expand_all_title"));
  const followLabel = document.createElement("label");
  followLabel.className = "toggle follow-inside";
  followLabel.title = t("ui.groups.follow_inside_title");
  const followBox = Object.assign(document.createElement("input"), { type: "checkbox" });
  followBox.dataset.testid = "follow-inside";
  followLabel.append(followBox, ` ${t("ui.groups.follow_inside")}`);
  bar.append(collapseAll, expandAll, followLabel);
  tools.append(bar);

  let player = null;
  let choice = null; // {key (the trace's structure), base, collapsed: Set of group ids}
  let follow = false;
  let last = null; // what the last frame drew: {trace, arrangement, shown}

  /** The reader's choice for `trace`: kept while the structure is the same, else how it opens. */
  function choiceFor(trace) {
    const key = trace.structure ?? trace.groups;
    if (!choice || choice.key !== key) choice = { key, ...openingGroups(trace, threshold) };
    return choice;
  }

  // Labs mark cards where the trace puts them: while one is open every node is drawn, in place.
  const plain = (trace) => Boolean(state.lab) || isVariant(trace);

  let memo = { trace: null, collapsed: null, base: null, opened: null, arrangement: null };
  /** The arrangement of `trace` at step `current` (memoised: a step costs nothing here). */
  function arrangementFor(trace, current) {
    const c = choiceFor(trace);
    let [base, collapsed] = [c.base, c.collapsed];
    if (plain(trace)) [base, collapsed] = ["plain", EMPTY];
    const inside = current ? groupIndex(trace).ofNode.get(current) : null;
    const opened = follow && inside && collapsed.has(inside.id) ? inside.id : null;
    if (memo.trace === trace && memo.collapsed === collapsed && memo.base === base && memo.opened === opened) return memo.arrangement;
    let shut = collapsed;
    if (opened) {
      shut = new Set(collapsed);
      shut.delete(opened);
    }
    // A lab draws the trace exactly as it is (its marks use the trace's own boxes): no boxes.
    const arrangement = base === "plain"
      ? { ...arrange(trace, "expanded", EMPTY), key: "plain", frames: new Map() }
      : arrange(trace, base, shut);
    memo = { trace, collapsed, base, opened, arrangement };
    return arrangement;
  }

  function drawCards(trace, arrangement, view, touched) {
    const { byId } = groupIndex(trace);
    const inside = view.current ? arrangement.hiddenIn.get(view.current) ?? null : null;
    const nodeById = new Map();
    const placedFor = (group, place) => {
      if (!nodeById.size) for (const n of trace.nodes) nodeById.set(n.id, n);
      const statement = statementText(trace, group, nodeById);
      return { arrangement, root: nodeById.get(group.root), isRoot: group.root === trace.root, statement, place };
    };
    if (touched) {
      let refreshed = 0;
      for (const id of touched) {
        const g = joined(cardLayer, id);
        if (!g) continue;
        updateCard(g, byId.get(id), arrangement.cards.get(id), view, inside, g._placed);
        refreshed += 1;
      }
      return refreshed;
    }
    const shut = [...arrangement.cards.keys()].filter((id) => byId.has(id));
    join(cardLayer, shut, (id) => id, (id) => enterCard(byId.get(id)), (g, id) => {
      const group = byId.get(id);
      const place = arrangement.cards.get(id);
      const placed = g._placed?.arrangement === arrangement ? g._placed : placedFor(group, place);
      updateCard(g, group, place, view, inside, placed);
    });
    return shut.length;
  }

  function drawFrames(trace, arrangement) {
    const { byId } = groupIndex(trace);
    const nodeById = new Map(trace.nodes.map((n) => [n.id, n]));
    join(frameLayer, [...arrangement.frames.keys()], (id) => id, enterFrame, (g, id) => {
      updateFrame(g, byId.get(id), arrangement.frames.get(id), statementText(trace, byId.get(id), nodeById));
    });
  }

  /** The player's frame drawing: what the groups leave shown, then the cards of collapsed ones. */
  function draw(graphLayers, trace, view, changed) {
    const arrangement = arrangementFor(trace, view.current);
    const shown = shownTrace(trace, arrangement);
    const same = last?.shown === shown && last.arrangement === arrangement;
    const mapped = same ? shownChanges(arrangement, shown, changed) : { changed: null, groups: null };
    let refreshed = drawGraph(graphLayers, shown, view, mapped.changed);
    refreshed += drawCards(trace, arrangement, view, mapped.groups);
    if (!same) {
      drawFrames(trace, arrangement);
      showTools(trace);
    }
    last = { trace, arrangement, shown };
    if (!same) onArranged();
    return { refreshed, shown };
  }

  function showTools(trace) {
    const { collapsible } = groupIndex(trace);
    bar.hidden = collapsible.length === 0;
    if (bar.hidden) return;
    const c = choiceFor(trace);
    const locked = plain(trace);
    collapseAll.disabled = locked || (c.base === "collapsed" && c.collapsed.size === collapsible.length);
    expandAll.disabled = locked || (c.base === "expanded" && c.collapsed.size === 0);
    bar.title = locked ? t("ui.groups.locked") : "";
  }

  function redraw() {
    player?.redraw();
  }

  function toggle(name, focus) {
    const trace = state.trace;
    if (!trace || plain(trace)) return;
    const group = groupIndex(trace).collapsible.find((g) => g.name === name);
    if (!group) return;
    const c = choiceFor(trace);
    const collapsed = new Set(c.collapsed);
    // Following inside, the group holding the step is drawn open: its toggle collapses it for good.
    const drawnOpen = !last?.arrangement.hiddenIn.has(group.root);
    if (drawnOpen) collapsed.add(group.id);
    else collapsed.delete(group.id);
    // Open only because the step is inside and "follow inside" is on: collapsing it turns that off.
    if (drawnOpen && memo.opened === group.id) followBox.checked = follow = false;
    choice = { ...c, collapsed };
    redraw();
    if (focus) svg.querySelector(`[data-testid=group][data-group="${CSS.escape(name)}"]`)?.focus({ preventScroll: true });
  }

  function setAll(base) {
    const trace = state.trace;
    if (!trace) return;
    const c = choiceFor(trace);
    const collapsed = new Set(base === "collapsed" ? groupIndex(trace).collapsible.map((g) => g.id) : []);
    choice = { ...c, base, collapsed };
    redraw();
    onArrangedAll();
  }

  collapseAll.addEventListener("click", () => setAll("collapsed"));
  expandAll.addEventListener("click", () => setAll("expanded"));
  followBox.addEventListener("change", () => {
    follow = followBox.checked;
    redraw();
  });

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
    if (g?._tooltip) text(g.querySelector("title"), g._tooltip());
    update({ hoverNode: g?.getAttribute("data-root") ?? null });
  });
  cardLayer.addEventListener("pointerleave", () => update({ hoverNode: null }));

  subscribe((s, changed) => {
    if (!changed.has("lab") || !s.trace || changed.has("trace")) return;
    redraw();
    showTools(s.trace);
  });

  return {
    draw,
    attach(p) {
      player = p;
    },
    /** The extent of what is drawn for `trace` (graph coordinates). */
    bounds(trace) {
      const arrangement = last?.trace === trace ? last.arrangement : arrangementFor(trace, null);
      return arrangedBounds(arrangement);
    },
    /** The box of the card that shows node `id` now (its own, or its collapsed group's). */
    cardOf(id) {
      if (!last || !id) return null;
      const { cards, hiddenIn } = last.arrangement;
      return cards.get(hiddenIn.get(id) ?? id) ?? null;
    },
  };
}

const EMPTY = new Set();
