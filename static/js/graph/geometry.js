// Where the graph's parts go, as data (no DOM): a layout's key, the edges' paths, the cards'
// corners and boxes, the graph's bounds, font sizes by card, and the places of the edge labels.
// The 2D drawing (draw.js, hints.js), the pane (view.js), the labs' marks and the 3D view read
// them here, so the 3D view needs nothing of the 2D pane.

import { TraceMemo } from "../core/trace-memo.js";
import { chainText, compactText } from "../core/format.js";
import { traceIndex } from "../core/frames.js";

// Per trace, and a slider move makes a trace a frame: kept on it (core/trace-memo.js), not in a WeakMap.
const geometryCache = new TraceMemo("edge geometry");
const layoutKeys = new TraceMemo("layout key");

let lastLayoutKey = null; // equal keys are handed out as this one string: later compares are O(1)
let lastGeometry = { key: null, geometry: null };

// The characters of a card's name that its op's tag never takes (a program's function is tagged
// with its name, which can be long: `unknown_cosh`); a longer tag is cut instead.
const NAME_KEEPS = 6;

// A name that says where a value lives (`model.layers[0].neurons[1].w[0]`, a statement's
// `…neurons[1]₇`): a variable, then attributes and indices, a subscript at most.
const PLACE = /^(\u25b8 )?([A-Za-z_]\w*)((?:\.[A-Za-z_]\w*|\[\d+\])+)([\u2080-\u2089]*)$/u;

/**
 * A place cut at its front, where it tells a card from its neighbours (the parameters of one
 * neuron share all but their last step): `▸ …neurons[1].w[0]`, whole steps kept; null when the
 * label is no place or no tail with a name in it (`…neurons[3]`, never `…[3]`) fits in `fits`
 * characters.
 */
function placeTail(label, fits) {
  const match = PLACE.exec(label);
  if (!match) return null;
  const [, marker = "", , steps, subscript] = match;
  const room = fits - marker.length - 1 - subscript.length; // the "…" takes one
  const parts = steps.match(/\.[A-Za-z_]\w*|\[\d+\]/g);
  let tail = "";
  for (let i = parts.length - 1; i >= 0; i -= 1) {
    const longer = parts[i] + tail;
    if (longer.replace(/^\./, "").length > room) break;
    tail = longer;
  }
  // An index alone (`…[3]`) tells nothing: the tail holds a name of its own (`…neurons[3]`).
  if (!/[A-Za-z_]/.test(tail)) return null;
  return `${marker}\u2026${tail.replace(/^\./, "")}${subscript}`;
}

/**
 * The card's name and op tag, `{shown, more, cut, glyph}`: the name cut where it would run into
 * the tag: an unnamed node's name is its source text, which can be long (the full text is in the
 * card's tooltip), cut at its end (`more`, the "…" the card adds after it); a place's name cut at
 * its front (`…neurons[1].w[0]`, the "…" in `shown`); the tag cut with "…" where it would leave
 * the name fewer than NAME_KEEPS characters (the card's accessible name says it whole).
 */
export function fitLabel(label, node, glyph) {
  const fs = fontSize(node);
  const perChar = fs * 1.05 * 0.6;
  const room = node.width - 2 * Math.max(6, fs * 0.55);
  const glyphWidth = (chars) => (chars * 0.62 + 0.6) * fs;
  const kept = Math.min(label.length, NAME_KEEPS) * perChar;
  let tag = glyph;
  if (glyph.length > 1 && glyphWidth(glyph.length) > room - kept) {
    const chars = Math.max(2, Math.floor(((room - kept) / fs - 0.6) / 0.62));
    tag = `${glyph.slice(0, chars - 1)}\u2026`;
  }
  const fits = Math.max(3, Math.floor((room - glyphWidth(tag.length)) / perChar));
  if (label.length <= fits) return { shown: label, more: "", cut: false, glyph: tag };
  const tail = placeTail(label, fits);
  if (tail) return { shown: tail, more: "", cut: true, glyph: tag };
  // Cut between words ("x1*w1 +…", not "x1*w1 + x…"); a single long word is cut where it must
  // be. The card's accessible name says the cut name as shown, then the whole (graph/hints.js).
  const cut = label.slice(0, fits - 1);
  const atWord = /\w/.test(label[fits - 1] ?? "") ? cut.replace(/\w+$/, "") : cut;
  return { shown: (atWord.trim() ? atWord : cut).trimEnd(), more: "\u2026", cut: true, glyph: tag };
}

/**
 * Equal for two traces whose cards and edges are the same and sit in the same places (a slider
 * move gives a new trace of the same layout): what edge paths, edge handles and card frames
 * (position, names, op) depend on.
 */
export function layoutKey(trace) {
  let key = layoutKeys.get(trace);
  if (key !== undefined) return key;
  if (trace.structure && trace.layout) {
    // The server lays out by structure: one structure id and one layout engine, one drawing.
    key = `${trace.structure}\u0001${trace.layout.engine}\u0001${trace.layout.width}x${trace.layout.height}`;
    layoutKeys.set(trace, key);
    return key;
  }
  const parts = [];
  for (const n of trace.nodes) {
    parts.push(n.id, n.kind, n.op, n.exponent, n.label, n.text, n.x, n.y, n.width, n.height, n.kind === "const" ? n.data : "");
  }
  for (const e of trace.edges) parts.push(e.id, e.source, e.target, e.index);
  key = parts.join("\u0001");
  if (key === lastLayoutKey) key = lastLayoutKey;
  else lastLayoutKey = key;
  layoutKeys.set(trace, key);
  return key;
}

/** Edge paths: input's right side → consumer's left side; ports spread by input index. */
export function edgeGeometry(trace) {
  let geometry = geometryCache.get(trace);
  if (geometry) return geometry;
  const key = layoutKey(trace);
  if (lastGeometry.key === key) {
    geometryCache.set(trace, lastGeometry.geometry);
    return lastGeometry.geometry;
  }
  geometry = computeGeometry(trace);
  geometryCache.set(trace, geometry);
  lastGeometry = { key, geometry };
  return geometry;
}

// Edges between one pair of cards bend apart, each 12 px more than the one before, up to this
// many: more (a statement using one leaf many times) share the last bend and sit side by side.
const MAX_TWIN_BENDS = 4;

/** The distance between the ports of `count` edges on one side of a card of `height`: `share` of
 *  it, at most 14 px, and together within 80% of the side. */
function portSpacing(height, share, count) {
  return Math.min(height * share, 14, count > 1 ? (height * 0.8) / (count - 1) : Infinity);
}

function computeGeometry(trace) {
  const { nodeById, inputEdges } = traceIndex(trace);
  const geometry = new Map();
  const pairs = new Map();
  for (const edge of trace.edges) {
    const pair = `${edge.source}>${edge.target}`;
    pairs.set(pair, [...(pairs.get(pair) ?? []), edge.id]);
  }
  for (const edge of trace.edges) {
    const source = nodeById.get(edge.source);
    const target = nodeById.get(edge.target);
    const inputs = inputEdges.get(edge.target).length;
    // Ports a few px apart, all on the card's side however many edges end there (a collapsed
    // statement that uses one leaf forty times: forty edges into its card, from one card).
    const ty = target.y + (edge.index - (inputs - 1) / 2) * portSpacing(target.height, 0.28, inputs);
    const twins = pairs.get(`${edge.source}>${edge.target}`);
    const rank = twins.indexOf(edge.id);
    const sy = source.y + (rank - (twins.length - 1) / 2) * portSpacing(source.height, 0.3, twins.length);
    const sx = source.x + source.width / 2;
    const tx = target.x - target.width / 2 - 2;
    // Into an open group from outside (graph/groups.js `entry`): curve to the box's edge, then level.
    const ex = Math.min(tx, edge.entry ?? tx);
    const bend = Math.max(24, (ex - sx) / 2) + Math.min(rank, MAX_TWIN_BENDS) * 12;
    const c1 = [sx + bend, sy];
    const c2 = [ex - bend, ty];
    const d = `M${sx},${sy} C${c1[0]},${c1[1]} ${c2[0]},${c2[1]} ${ex},${ty}${ex < tx ? ` L${tx},${ty}` : ""}`;
    const at = (t) => {
      const u = 1 - t;
      const [a, b, c, e] = [u * u * u, 3 * u * u * t, 3 * u * t * t, t * t * t];
      return [a * sx + b * c1[0] + c * c2[0] + e * ex, a * sy + b * c1[1] + c * c2[1] + e * ty];
    };
    geometry.set(edge.id, { d, mid: at(0.5), at });
  }
  return geometry;
}

export function fontSize(node) {
  return Math.max(7, Math.min(node.height / 4.4, node.width / 8.5, 20));
}

/** The top-left corner of `node`'s card in graph units: [x, y]. */
/**
 * A card's name as semantic zoom shows it far out (the card is its name and its colour): as big
 * as the card allows, `{text, size}`.
 */
export function compactLabel(label, node) {
  const size = Math.min(node.height * 0.42, 30);
  const fits = Math.max(2, Math.floor((node.width - 10) / (size * 0.62)));
  if (label.length <= fits) return { text: label, size };
  return { text: placeTail(label, fits) ?? `${label.slice(0, fits - 1).trimEnd()}\u2026`, size };
}

export function cardCorner(node) {
  return [node.x - node.width / 2, node.y - node.height / 2];
}

export function edgeLabels(trace, view) {
  const labels = [];
  const { nodeById, edgeById } = traceIndex(trace);
  for (const id of view.active) {
    const edge = edgeById.get(id);
    if (!edge) continue; // not drawn: inside a collapsed group
    const shown = view.edges.get(edge.id);
    if (shown?.state === "backward-active") {
      labels.push({ id: edge.id, kind: "backward", text: chainText(shown.contribution), sourceKind: nodeById.get(edge.source).kind });
    } else if (shown?.state === "forward-active") {
      // Forward mode's tangent step: the edge's term of the chain rule; a value: the input's value.
      const text = shown.contribution ? chainText(shown.contribution) : compactText(nodeById.get(edge.source).data);
      labels.push({ id: edge.id, kind: "forward", text, sourceKind: nodeById.get(edge.source).kind });
    }
  }
  return labels;
}

function overlaps(a, b) {
  return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;
}

const boxesCache = new TraceMemo("card boxes");

/** The cards' boxes (with a 2 px margin), once per trace: labels and marks must not cover them. */
export function cardBoxes(trace) {
  let boxes = boxesCache.get(trace);
  if (!boxes) {
    boxes = trace.nodes.map((n) => ({
      x0: n.x - n.width / 2 - 2, x1: n.x + n.width / 2 + 2, y0: n.y - n.height / 2 - 2, y1: n.y + n.height / 2 + 2,
    }));
    boxesCache.set(trace, boxes);
  }
  return boxes;
}

/**
 * A spot for each label on or near its edge that covers no card and no other label: along the
 * curve first, then stepping above/below its middle (a leader line points back at the edge).
 * A label with no such spot is left out: labels are shown only where they fit (the narration
 * says the same numbers). Only a handful of labels are shown at once.
 */
export function placeLabels(labels, trace, geometry, fs) {
  if (labels.length === 0) return labels;
  const cards = cardBoxes(trace);
  const taken = [];
  const placed = [];
  for (const label of labels) {
    const { at } = geometry.get(label.id);
    const width = label.text.length * fs * 0.62 + fs;
    const height = fs * 1.6;
    const box = ([x, y]) => ({ x0: x - width / 2, x1: x + width / 2, y0: y - height / 2, y1: y + height / 2 });
    const candidates = [0.5, 0.4, 0.6, 0.3, 0.7].map(at);
    const [mx, my] = at(0.5);
    for (let k = 1; k <= 16; k++) candidates.push([mx, my - k * height * 0.75], [mx, my + k * height * 0.75]);
    const free = (c) => {
      const b = box(c);
      return !cards.some((r) => overlaps(b, r)) && !taken.some((r) => overlaps(b, r));
    };
    const spot = candidates.find(free);
    if (!spot) continue;
    taken.push(box(spot));
    placed.push(Object.assign(label, { x: spot[0], y: spot[1], width, height, dx: mx - spot[0], dy: my - spot[1] }));
  }
  return placed;
}

export function labelFontSize(trace) {
  const typical = trace.nodes.find((n) => n.kind === "op") ?? trace.nodes[0];
  return typical ? fontSize(typical) * 0.8 : 12;
}

/**
 * The edge labels of `view` as drawGraph places them ({id, kind, text, x, y, width, height, dx,
 * dy} in graph units) and their font size: the 3D view shows the same labels at the same places.
 */
export function placedEdgeLabels(trace, view) {
  const fontSize = labelFontSize(trace);
  return { labels: placeLabels(edgeLabels(trace, view), trace, edgeGeometry(trace), fontSize), fontSize };
}

/** Bounds of the cards (with headroom for the tags above them), in graph coordinates. */
export function graphBounds(trace) {
  let [x0, y0, x1, y1] = [Infinity, Infinity, -Infinity, -Infinity];
  for (const n of trace.nodes) {
    x0 = Math.min(x0, n.x - n.width / 2);
    x1 = Math.max(x1, n.x + n.width / 2);
    y0 = Math.min(y0, n.y - n.height / 2 - 16);
    y1 = Math.max(y1, n.y + n.height / 2);
  }
  if (!Number.isFinite(x0)) return { x: 0, y: 0, width: 1, height: 1 };
  return { x: x0, y: y0, width: x1 - x0, height: y1 - y0 };
}
