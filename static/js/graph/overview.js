// The overview of a big model's graph (issue 42): the reply's `overview` (docs/api.md, "Overview":
// each statement in a part, a sample's forward pass, the parameters alone or what combines
// samples, and in a layer) as the levels the page opens, one click each: the parts, a part's
// layers and statements, one statement's scalar graph. Pure functions of the trace and the path
// opened; no DOM, no globals. graph/overview-view.js draws what they place.

import { TraceMemo } from "../core/trace-memo.js";
import { copied, drawingOf, numberArrays } from "../compute/merge-numbers.js";

/** Graphs of at least this many nodes with an overview open on it (smaller ones as before). */
export const OVERVIEW_AT_NODES = 2_500;

// Card sizes and gaps (graph units): a part's card, a statement's card, the gaps between them.
const PART = { width: 300, height: 104 };
const STATEMENT = { width: 300, height: 96 };
const GAP = { x: 40, y: 26, column: 140, aside: 160 };

const indexOf = new WeakMap(); // trace.overview (kept by slider updates) → its index

const nodeIndex = (id) => Number(id.slice(1)); // "n12" → 12: nodes are in id order

/**
 * Lookups of the trace's overview: {parts, partById, partOfGroup (group id → part), groupOfNode
 * (Int32Array: node index → group index), partOfNode (Int32Array: node index → part index, -1
 * for a leaf), groupById, statements ({id, part, root (its value's index), relu})}.
 */
export function overviewIndex(trace) {
  const overview = trace.overview;
  let index = indexOf.get(overview);
  if (index) return index;
  const parts = overview.parts;
  const partById = new Map(parts.map((part) => [part.id, part]));
  const partOfGroup = new Map();
  for (const part of parts) {
    for (const layer of part.layers) {
      for (const id of layer.groups) {
        partOfGroup.set(id, part);
      }
    }
  }
  const groupById = new Map(trace.groups.map((g) => [g.id, g]));
  const groupOfNode = new Int32Array(trace.nodes.length);
  const partOfNode = new Int32Array(trace.nodes.length).fill(-1);
  const partNumber = new Map(parts.map((part, k) => [part.id, k]));
  trace.groups.forEach((group, g) => {
    const part = partOfGroup.get(group.id);
    for (const id of group.nodes) {
      groupOfNode[nodeIndex(id)] = g;
      if (part) partOfNode[nodeIndex(id)] = partNumber.get(part.id);
    }
  });
  // Each statement's value: where it is in the nodes, and whether it is a ReLU (a gate that shuts).
  const statements = [...partOfGroup].map(([id, part]) => {
    const root = nodeIndex(groupById.get(id).root);
    return { id, part: part.id, root, relu: trace.nodes[root].op === "relu" };
  });
  index = { parts, partById, partOfGroup, groupOfNode, partOfNode, groupById, statements };
  indexOf.set(overview, index);
  return index;
}

/**
 * The trace a notebook's first view is drawn from (notebook/widget.py `first_view`: engine/reply.py
 * `first_view_reply`): the nodes' ops and data (as a reply writes numbers), the edges, the groups,
 * the overview, the gradient flags and the root as a reply has them, and no step yet. What this module computes from it
 * (the parts' edges, the cards' counts) it computes as from the whole reply.
 */
export function firstViewTrace(first) {
  const nodes = first.op.map((op, i) => ({ id: `n${i}`, op, data: first.data[i] }));
  const ends = first.edges;
  const edges = new Array(ends.length / 2);
  for (let k = 0; k < edges.length; k++) edges[k] = { source: `n${ends[2 * k]}`, target: `n${ends[2 * k + 1]}` };
  return { nodes, edges, groups: first.groups, overview: first.overview, grad_flags: first.grad_flags, root: first.root, steps: [] };
}

/** Whether `trace` opens on its overview: it has one, and at least `threshold` nodes. */
export function opensOnOverview(trace, threshold = OVERVIEW_AT_NODES) {
  return Boolean(trace?.overview?.parts?.length) && trace.nodes.length >= threshold;
}

const edgeMemo = new WeakMap(); // trace.overview → {parts: pairs, groups: Map part id → pairs}

/**
 * The edges between the groups `keyOf` maps nodes to (a key, or null: not drawn), one per pair
 * (the graph's 64,844 edges are 101 between the demo's parts): [[from key, to key, count], …].
 */
function aggregated(trace, keyOf) {
  const pairs = new Map();
  for (const edge of trace.edges) {
    const from = keyOf(nodeIndex(edge.source));
    const to = keyOf(nodeIndex(edge.target));
    if (from === null || to === null || from === to) continue;
    const key = `${from}\u0001${to}`;
    const pair = pairs.get(key);
    if (pair) pair[2] += 1;
    else pairs.set(key, [from, to, 1]);
  }
  return [...pairs.values()];
}

/** The edges between parts, and (asked for one part) between its statements and inputs. */
function edgesOf(trace, partId = null) {
  let memo = edgeMemo.get(trace.overview);
  if (!memo) edgeMemo.set(trace.overview, (memo = { parts: null, groups: new Map() }));
  const { parts, partOfNode, groupOfNode, partById } = overviewIndex(trace);
  if (partId === null) {
    memo.parts ??= aggregated(trace, (i) => (partOfNode[i] < 0 ? null : parts[partOfNode[i]].id));
    return memo.parts;
  }
  if (!memo.groups.has(partId)) {
    const part = partById.get(partId);
    const inputs = new Set(part.inputs);
    const mine = parts.indexOf(part);
    const { groups } = trace;
    memo.groups.set(partId, aggregated(trace, (i) => {
      const id = groups[groupOfNode[i]].id;
      return partOfNode[i] === mine || inputs.has(id) ? id : null;
    }));
  }
  return memo.groups.get(partId);
}

/** The samples' grid: as many columns as makes it about as wide as tall on a 16:9 pane. */
const gridColumns = (count) => Math.max(1, Math.ceil(Math.sqrt(count * 1.8)));

/**
 * What the overview shows at `path` ([] the parts; [part id] a part's layers; [part id, group
 * id] a statement's graph: statementTrace): {level, cards: [{key, kind ("part", "statement",
 * "input"), id, x, y, width, height}], heads: [{key, text, x, y}] (the layers' names), frames:
 * [{key, x, y, width, height}] (a part's blocks: its inputs, each layer), edges: [{key, from,
 * to, count}] (between cards, or a part's blocks: the keys of `cards` or `frames`)}, boxes centred.
 */
export function overviewPlaces(trace, path) {
  const { parts, partById } = overviewIndex(trace);
  if (path.length === 0) {
    const samples = parts.filter((p) => p.kind === "sample");
    const others = parts.filter((p) => p.kind !== "sample");
    const columns = gridColumns(samples.length);
    const step = { x: PART.width + GAP.x, y: PART.height + GAP.y };
    const rows = Math.ceil(samples.length / columns);
    const cards = samples.map((part, k) => ({
      key: part.id, kind: "part", id: part.id, ...PART,
      x: (k % columns) * step.x, y: Math.floor(k / columns) * step.y,
    }));
    const asideX = (columns - 1) * step.x + PART.width + GAP.aside;
    const middle = ((rows - 1) * step.y) / 2;
    others.forEach((part, k) => {
      cards.push({ key: part.id, kind: "part", id: part.id, ...PART, x: asideX, y: middle + (k - (others.length - 1) / 2) * step.y * 1.5 });
    });
    return { level: "parts", cards, heads: [], frames: [], edges: edgesOf(trace).map(([from, to, count]) => ({ key: `${from}>${to}`, from, to, count })) };
  }
  const part = partById.get(path[0]);
  const blocks = part.inputs.length ? [{ name: "", groups: part.inputs, kind: "input" }] : [];
  for (const layer of part.layers) blocks.push({ name: layer.name, groups: layer.groups, kind: "statement" });
  // Each layer a block of cards, about square (16 neurons: 4 × 4), the blocks side by side.
  const cards = [];
  const heads = [];
  const blockOf = new Map();
  const step = { x: STATEMENT.width + GAP.x, y: STATEMENT.height + GAP.y };
  let left = 0;
  blocks.forEach((block, b) => {
    const columns = Math.ceil(Math.sqrt(block.groups.length));
    const rows = Math.ceil(block.groups.length / columns);
    const top = -((rows - 1) * step.y) / 2;
    block.groups.forEach((id, k) => {
      blockOf.set(id, b);
      cards.push({ key: id, kind: block.kind, id, ...STATEMENT, x: left + (k % columns) * step.x, y: top + Math.floor(k / columns) * step.y });
    });
    const width = (columns - 1) * step.x;
    if (block.name) heads.push({ key: `${b}`, text: block.name, x: left + width / 2, y: top - STATEMENT.height / 2 - 22 });
    block.box = { x: left + width / 2, y: 0, width: width + STATEMENT.width, height: (rows - 1) * step.y + STATEMENT.height };
    left += width + STATEMENT.width + GAP.column;
  });
  // One edge per pair of blocks that read each other (16 × 16 neurons' edges are one).
  const pairs = new Map();
  for (const [from, to, count] of edgesOf(trace, part.id)) {
    const [a, b] = [blockOf.get(from), blockOf.get(to)];
    if (a === b) continue;
    const key = `b${a}>b${b}`;
    pairs.set(key, { key, from: `b${a}`, to: `b${b}`, count: (pairs.get(key)?.count ?? 0) + count });
  }
  const frames = blocks.map((block, b) => ({ key: `b${b}`, ...block.box }));
  return { level: "part", cards, heads, edges: [...pairs.values()], frames };
}

const statementMemo = new TraceMemo("overview statement"); // trace → Map group id → its graph
const recipeMemo = new WeakMap(); // a drawing (compute/merge-numbers.js) → Map group id → its recipe

/** Which nodes and edges a statement's graph takes from its drawing, and where the outside ones go. */
function statementRecipe(trace, groupId) {
  const group = overviewIndex(trace).groupById.get(groupId);
  const inside = new Set(group.nodes);
  const nodes = group.nodes.map((id) => ({ from: nodeIndex(id), place: null }));
  const edges = [];
  trace.edges.forEach((edge, k) => {
    if (inside.has(edge.target)) edges.push(k);
  });
  // The nodes it reads from outside, in the order their readers are from top to bottom, in a
  // column at its left, centred on it.
  const readerY = new Map();
  for (const k of edges) {
    const { source, target } = trace.edges[k];
    if (!inside.has(source) && !readerY.has(source)) readerY.set(source, trace.nodes[nodeIndex(target)].y);
  }
  const first = trace.nodes[nodes[0].from];
  const box = group.box ?? { x: first.x, y: first.y, width: first.width, height: first.height };
  const left = box.x - box.width / 2 - 2 * first.width;
  const spacing = first.height + 12;
  const column = [...readerY].sort((a, b) => a[1] - b[1]);
  column.forEach(([id], k) => {
    // Drawn as the value it is, without its own inputs (they are not shown).
    nodes.push({ from: nodeIndex(id), place: { x: left, y: box.y + (k - (column.length - 1) / 2) * spacing, inputs: [] } });
  });
  return { nodes, edges };
}

/**
 * One statement's scalar graph as graph/draw.js draws a trace: its nodes where the expanded
 * layout puts them, and the nodes it reads from outside (leaves, other statements' values) in a
 * column at the left of its box, with the edges into its nodes. Ids are the trace's, so the
 * view's numbers apply as they are; another trace of the same drawing (a slider move) costs
 * the statement's nodes, not the graph's.
 */
export function statementTrace(trace, groupId) {
  let byGroup = statementMemo.get(trace);
  if (!byGroup) statementMemo.set(trace, (byGroup = new Map()));
  let shown = byGroup.get(groupId);
  if (shown) return shown;
  const drawing = drawingOf(trace);
  if (!recipeMemo.has(drawing)) recipeMemo.set(drawing, new Map());
  const recipes = recipeMemo.get(drawing);
  if (!recipes.has(groupId)) recipes.set(groupId, statementRecipe(drawing, groupId));
  const recipe = recipes.get(groupId);
  const nodes = recipe.nodes.map(({ from, place }) => (place ? { ...trace.nodes[from], ...place } : trace.nodes[from]));
  const edges = recipe.edges.map((k) => trace.edges[k]);
  shown = Object.assign(copied(trace), { nodes, edges, structure: `${trace.structure ?? ""}\u0001overview:${groupId}` });
  byGroup.set(groupId, shown);
  return shown;
}

/**
 * Per part and per statement, the counts its card shows for `trace`'s numbers: {parts: Map part
 * id → counts, groups: Map group id → counts}; counts {statements, off (gates shut: a ReLU's
 * value 0), dead, vanishing (statements with a node the reply flags so)}. `ready`: only if they
 * were counted already (else null): the flags of a slider move's numbers cost a pass over the graph.
 */
const countsMemo = new TraceMemo("overview counts");

export function overviewCounts(trace, { ready = false } = {}) {
  let counts = countsMemo.get(trace);
  if (counts || ready) return counts ?? null;
  const { parts, partOfGroup, groupOfNode, statements } = overviewIndex(trace);
  const { data } = numberArrays(trace);
  const fresh = () => ({ statements: 0, off: 0, dead: 0, vanishing: 0 });
  const byPart = new Map(parts.map((part) => [part.id, fresh()]));
  const byGroup = new Map();
  for (const { id, part, root, relu } of statements) {
    const own = fresh();
    own.statements = 1;
    own.off = relu && data[root] === 0 ? 1 : 0;
    byGroup.set(id, own);
    const sum = byPart.get(part);
    sum.statements += 1;
    sum.off += own.off;
  }
  for (const [id, flags] of Object.entries(trace.grad_flags ?? {})) {
    const group = trace.groups[groupOfNode[nodeIndex(id)]];
    const own = byGroup.get(group.id);
    if (!own) continue;
    for (const flag of ["dead", "vanishing"]) {
      if (flags.includes(flag) && !own[flag]) {
        own[flag] = 1;
        byPart.get(partOfGroup.get(group.id).id)[flag] += 1;
      }
    }
  }
  counts = { parts: byPart, groups: byGroup };
  countsMemo.set(trace, counts);
  return counts;
}
