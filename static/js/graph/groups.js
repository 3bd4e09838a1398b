// Statements as groups (issue 11): which cards are drawn, and where, as pure functions of the
// trace and of the groups the reader collapsed. No DOM, no globals.
//
// The server sends two layouts (docs/api.md, "Group"): the expanded one (every node, each group
// of several nodes in a labelled box) and the collapsed one (one card per group), ordered alike.
// Every other arrangement starts from one of them, its *base*, and changes only what the reader
// toggled, so the rest stays where it was:
// - base "expanded": a collapsed group's card takes its root's place (where its edges leave);
//   nothing else moves.
// - base "collapsed": an expanded group opens where its card was (its root on the card's spot)
//   and pushes what is left of it further left, what is right further right, and what shares
//   its column up and down, by just what it needs.

import { TraceMemo } from "../core/trace-memo.js";
import { copied, drawingOf, drawnLike } from "../compute/merge-numbers.js";

/** Graphs of at least this many nodes open with every group collapsed (README, "Page settings";
 * `?collapse_at=N` changes it for one page). */
export const COLLAPSE_AT_NODES = 25;

/** The threshold a page's query string asks for (`collapse_at=N`, `collapse_at=never`), else the default. */
export function collapseThreshold(params) {
  const asked = params.get("collapse_at");
  if (asked === "never") return Infinity;
  return /^\d+$/.test(asked ?? "") ? Number(asked) : COLLAPSE_AT_NODES;
}

const indexCache = new WeakMap(); // trace.groups (kept by slider updates) → index

/**
 * Lookups of the trace's groups: {groups, byId, ofNode (node id → group), collapsible (the groups
 * of more than one node, the only ones drawn as a box or a card of their own), root (group id →
 * its root node)}.
 */
export function groupIndex(trace) {
  const groups = trace.groups ?? [];
  let index = indexCache.get(groups);
  if (index) return index;
  const byId = new Map(groups.map((g) => [g.id, g]));
  const ofNode = new Map();
  for (const group of groups) for (const id of group.nodes) ofNode.set(id, group);
  const collapsible = groups.filter((g) => g.nodes.length > 1 && g.box);
  index = { groups, byId, ofNode, collapsible };
  indexCache.set(groups, index);
  return index;
}

/** How a new program opens: every group collapsed on a big graph, none on a small one. */
export function openingGroups(trace, threshold = COLLAPSE_AT_NODES) {
  const { collapsible } = groupIndex(trace);
  const big = trace.nodes.length >= threshold && collapsible.length > 0;
  return { base: big ? "collapsed" : "expanded", collapsed: new Set(big ? collapsible.map((g) => g.id) : []) };
}

const copyBox = ({ x, y, width, height }) => ({ x, y, width, height });
const centre = (node) => ({ x: node.x, y: node.y, width: node.width, height: node.height });

/**
 * Where everything goes when the groups in `collapsed` (a Set of ids) are collapsed, from layout
 * `base`: {key, cards: Map id → box for every card drawn (nodes, and collapsed groups by group
 * id), frames: Map group id → box (the expanded groups' labelled boxes), hiddenIn: Map node id
 * → group id of the nodes inside a collapsed group, shutRoots: Map root node id → group id of
 * the collapsed groups (the card that shows the root's numbers)}. Boxes are centred ({x, y,
 * width, height}).
 */
export function arrange(trace, base, collapsed) {
  const { collapsible } = groupIndex(trace);
  const shut = collapsible.filter((g) => collapsed.has(g.id));
  const key = `${base}:${shut.map((g) => g.id).join(",")}`;
  const hiddenIn = new Map();
  for (const group of shut) for (const id of group.nodes) hiddenIn.set(id, group.id);
  const shutRoots = new Map(shut.map((group) => [group.root, group.id]));
  const nodeById = new Map(trace.nodes.map((n) => [n.id, n]));
  const cards = new Map();
  const frames = new Map();
  if (base === "expanded") {
    for (const node of trace.nodes) if (!hiddenIn.has(node.id)) cards.set(node.id, centre(node));
    for (const group of shut) cards.set(group.id, { ...centre(nodeById.get(group.root)), width: group.card.width, height: group.card.height });
    for (const group of collapsible) if (!collapsed.has(group.id)) frames.set(group.id, copyBox(group.box));
    return { key, base, cards, frames, hiddenIn, shutRoots };
  }
  // From the collapsed layout: one item per group (a card, or an opened box with its nodes).
  const items = (trace.groups ?? []).map((group) => ({ group, box: copyBox(group.card), members: null }));
  const itemOf = new Map(items.map((item) => [item.group.id, item]));
  for (const group of collapsible) {
    if (collapsed.has(group.id)) continue;
    open(itemOf.get(group.id), nodeById, items);
  }
  for (const { group, box, members } of items) {
    if (members) {
      frames.set(group.id, box);
      for (const [id, place] of members) cards.set(id, place);
    } else if (group.nodes.length > 1) {
      cards.set(group.id, box);
    } else {
      cards.set(group.nodes[0], box);
    }
  }
  return { key, base, cards, frames, hiddenIn, shutRoots };
}

/** Open `item`'s group where its card is (its root on the card), pushing the other items aside. */
function open(item, nodeById, items) {
  const { group, box: card } = item;
  const root = nodeById.get(group.root);
  const frame = group.box;
  const [dx, dy] = [card.x - root.x, card.y - root.y];
  const grow = {
    left: Math.max(0, root.x - (frame.x - frame.width / 2) - card.width / 2),
    right: Math.max(0, frame.x + frame.width / 2 - root.x - card.width / 2),
    up: Math.max(0, root.y - (frame.y - frame.height / 2) - card.height / 2),
    down: Math.max(0, frame.y + frame.height / 2 - root.y - card.height / 2),
  };
  const placed = { x: frame.x + dx, y: frame.y + dy, width: frame.width, height: frame.height };
  const [x0, x1] = [placed.x - placed.width / 2, placed.x + placed.width / 2];
  for (const other of items) {
    if (other === item) continue;
    const b = other.box;
    let [mx, my] = [0, 0];
    if (b.x < card.x - 0.5) mx = -grow.left;
    else if (b.x > card.x + 0.5) mx = grow.right;
    const [left, right] = [b.x + mx - b.width / 2, b.x + mx + b.width / 2];
    if (left < x1 && right > x0) my = b.y < card.y ? -grow.up : grow.down;
    if (mx || my) shift(other, mx, my);
  }
  item.box = placed;
  item.members = new Map(group.nodes.map((id) => {
    const node = nodeById.get(id);
    return [id, { x: node.x + dx, y: node.y + dy, width: node.width, height: node.height }];
  }));
}

function shift(item, mx, my) {
  item.box = { ...item.box, x: item.box.x + mx, y: item.box.y + my };
  if (item.members) {
    for (const [id, place] of item.members) item.members.set(id, { ...place, x: place.x + mx, y: place.y + my });
  }
}

/** The extent of an arrangement {x, y, width, height}, with room for the tags above cards. */
export function arrangedBounds(arrangement) {
  let bounds = boundsOf.get(arrangement);
  if (!bounds) boundsOf.set(arrangement, (bounds = boundsAround(arrangement)));
  return { ...bounds };
}

const boundsOf = new WeakMap(); // an arrangement → its bounds (asked on every slider move)

function boundsAround(arrangement) {
  let [x0, y0, x1, y1] = [Infinity, Infinity, -Infinity, -Infinity];
  const extend = (b, headroom) => {
    x0 = Math.min(x0, b.x - b.width / 2);
    x1 = Math.max(x1, b.x + b.width / 2);
    y0 = Math.min(y0, b.y - b.height / 2 - headroom);
    y1 = Math.max(y1, b.y + b.height / 2);
  };
  for (const box of arrangement.cards.values()) extend(box, 16);
  for (const box of arrangement.frames.values()) extend(box, 0);
  if (!Number.isFinite(x0)) return { x: 0, y: 0, width: 1, height: 1 };
  return { x: x0, y: y0, width: x1 - x0, height: y1 - y0 };
}

const shownCache = new TraceMemo("shown"); // trace → Map arrangement key → the trace drawn (core/trace-memo.js)

/**
 * The trace as drawn in `arrangement`, for graph/draw.js: the nodes shown (moved where the arrangement
 * puts them), a `kind: "group"` stand-in per collapsed group (graph/draw.js draws no card for it, but
 * edges end on it), and the edges between what is shown (an edge into or out of a collapsed group
 * ends on its card; an edge into an open box from outside has `entry`, the x of the box's left
 * edge: the layout keeps a lane level with its card from there, and graph/draw.js draws it along it).
 * Edge and node ids are the trace's, so the timeline's states apply as they are. The same trace
 * when there is no group of several nodes.
 */
export function shownTrace(trace, arrangement) {
  const { base, hiddenIn, frames } = arrangement;
  if (base === "expanded" && hiddenIn.size === 0 && frames.size === 0) return trace;
  let byKey = shownCache.get(trace);
  if (!byKey) shownCache.set(trace, (byKey = new Map()));
  let shown = byKey.get(arrangement.key);
  if (shown) return shown;
  // What the arrangement does to each node and edge depends on the drawing alone: found once per
  // drawing and arrangement, then applied to each trace of new numbers (a slider move).
  const drawing = drawingOf(trace);
  if (!recipes.has(drawing)) recipes.set(drawing, new Map());
  let recipe = recipes.get(drawing).get(arrangement.key);
  if (!recipe) recipes.get(drawing).set(arrangement.key, (recipe = arrangedRecipe(drawing, arrangement)));
  const nodes = recipe.nodes.map(({ from, patch }) => (patch ? { ...trace.nodes[from], ...patch } : trace.nodes[from]));
  const edges = recipe.edges.map(({ from, patch }) => (patch ? { ...trace.edges[from], ...patch } : trace.edges[from]));
  shown = Object.assign(copied(trace), { nodes, edges, structure: `${trace.structure ?? ""}\u0001${arrangement.key}` });
  shownEdges.set(shown, recipe.edgeIds);
  byKey.set(arrangement.key, shown);
  // Its lookups (core/frames.js traceIndex, playIndex) are those of its drawing's showing.
  if (drawing !== trace) drawnLike(shown, shownTrace(drawing, arrangement));
  return shown;
}

const shownEdges = new TraceMemo("shown edges"); // a trace drawn → the ids of its edges
const recipes = new WeakMap(); // a drawing → arrangement key → its recipe (arrangedRecipe)

/**
 * How `arrangement` draws `trace`: per node and edge shown, the index of the trace's own (`from`)
 * and what the arrangement changes in it (`patch`, null when nothing); the shown edges' ids.
 */
function arrangedRecipe(trace, arrangement) {
  const { hiddenIn, frames, cards } = arrangement;
  const { byId, ofNode } = groupIndex(trace);
  const drawnAs = (id) => hiddenIn.get(id) ?? id;
  const nodes = [];
  const position = new Map(trace.nodes.map((n, i) => [n.id, i]));
  trace.nodes.forEach((node, from) => {
    if (hiddenIn.has(node.id)) return;
    const place = cards.get(node.id);
    const inputs = node.inputs.some((id) => hiddenIn.has(id)) ? node.inputs.map(drawnAs) : node.inputs;
    const moved = place.x !== node.x || place.y !== node.y;
    nodes.push({ from, patch: moved || inputs !== node.inputs ? { x: place.x, y: place.y, inputs } : null });
  });
  for (const [id, place] of cards) {
    const group = byId.get(id);
    if (!group) continue;
    // A collapsed group's card: its root's numbers, the group's name and place.
    const from = position.get(group.root);
    nodes.push({
      from,
      patch: {
        id, kind: "group", label: group.name, text: group.name, inputs: [], derived: false,
        expansion: null, warnings: [], group: id, span: trace.nodes[from].span, ...place,
      },
    });
  }
  // Edges into a group's card fan out by where they come from, top to bottom.
  const edges = [];
  const into = new Map();
  trace.edges.forEach((edge, from) => {
    const [source, target] = [drawnAs(edge.source), drawnAs(edge.target)];
    if (source === target) return; // inside a collapsed group
    const box = frames.get(ofNode.get(edge.target)?.id);
    const entering = box && ofNode.get(edge.source) !== ofNode.get(edge.target);
    const entry = entering ? box.x - box.width / 2 : undefined;
    const same = source === edge.source && target === edge.target && entry === undefined;
    const shown = { from, id: edge.id, patch: same ? null : { source, target, ...(entering ? { entry } : {}) } };
    edges.push(shown);
    if (target !== edge.target) into.set(target, [...(into.get(target) ?? []), shown]);
  });
  for (const list of into.values()) {
    list.sort((a, b) => cards.get(a.patch.source).y - cards.get(b.patch.source).y);
    list.forEach((edge, i) => { edge.patch.index = i; });
  }
  return { nodes, edges, edgeIds: new Set(edges.map((e) => e.id)) };
}

/**
 * The changes of a step ([node ids, edge ids] from core/frames.js changedBetween, or null) in the
 * trace drawn: {nodes, edges} for graph/draw.js (what is shown) and the ids of the collapsed groups
 * whose card may change (a node inside moved on).
 */
export function shownChanges(arrangement, shown, changed) {
  if (!changed) return { changed: null, groups: null };
  const { hiddenIn } = arrangement;
  const edgeIds = shownEdges.get(shown);
  if (!edgeIds) return { changed, groups: new Set() }; // the trace itself: everything is shown
  const nodes = [];
  const groups = new Set();
  for (const id of changed[0]) {
    const group = hiddenIn.get(id);
    if (group) groups.add(group);
    else nodes.push(id);
  }
  return { changed: [nodes, changed[1].filter((id) => edgeIds.has(id))], groups };
}
