// The graph's marks (after Observable Plot's marks): each draws one kind of decoration of a frame
// from data (the trace, the frame shown, where the cards and edge labels were placed) and nothing
// else. The player draws a frame in one pass: the cards, edges and labels (graph/draw.js, graph/group-view.js),
// then every mark in the order it was registered. A mark owns what it draws:
//   - its own layer, a <g class="layer-NAME"> over (or under) the cards, which no one else touches;
//   - the attributes it names in `owns` on the cards and edges drawn (data-gradmap, data-lesson…):
//     it returns them for this frame and the pass writes them, removing what it wrote last time
//     and no longer returns. No two marks, and no mark and the drawing, may own one attribute:
//     register() refuses the second owner.
//
// A mark is {name, keys, owns, layer, render(frame, layer)}:
//   keys:   state keys besides the frame it reads (a change of one draws this mark again alone);
//   owns:   {card: [attribute names], edge: [...]};
//   layer:  "over" | "under" | undefined (no layer of its own);
//   render: returns {cards: Map node id → {attribute: value | null}, edges: Map edge id → {...}}
//           or nothing. `frame` is {trace, shown (the trace as drawn), view (core/frames.js viewAt),
//           state, changed ([node ids, edge ids] that may look otherwise than in the last frame
//           drawn, or null: any), changedKeys (the state keys whose change asked for this pass,
//           or null: a redraw), arranged (the cards are drawn in another arrangement than in the
//           last frame: statements collapsed or opened), labels (graph/draw.js placedEdgeLabels'
//           items, as drawn), cardsOf(id)
//           (the card elements showing node id: its own, a collapsed statement's), edgeOf(id)}.
//
// Adding a mark: a module exporting the mark, and one line registering it (features.js).

import { attr, svgElement } from "../core/svg.js";

/** What the drawing itself writes on cards and edges: no mark may own these. No one writes a
 *  card's transform (graph/draw.js places cards by their parts' x and y: a transform per card splits
 *  the paint into a chunk per card); it stays here so no mark claims it. */
const DRAWN = {
  card: ["class", "transform", "data-testid", "data-node-id", "data-label", "data-data", "data-grad",
    "data-current", "data-dead", "tabindex", "role", "aria-label", "data-group", "data-collapsed", "data-root"],
  edge: ["class", "d", "data-edge-id", "data-source-kind", "marker-start", "marker-end"],
};

/** The elements the mark's `out` ({cards, edges}) names, each with the attributes it is given. */
function targets(out, frame) {
  const next = new Map();
  for (const [id, attrs] of out?.cards ?? []) for (const el of frame.cardsOf(id)) next.set(el, attrs);
  for (const [id, attrs] of out?.edges ?? []) {
    const el = frame.edgeOf(id);
    if (el) next.set(el, attrs);
  }
  return next;
}

/** Write `next` (element → attributes) for `entry`, removing what it wrote before and dropped. */
function write(entry, next) {
  for (const [el, names] of entry.written) {
    const now = next.get(el);
    for (const name of names) if (!now || !(name in now)) attr(el, name, null);
  }
  for (const [el, attrs] of next) {
    for (const [name, value] of Object.entries(attrs)) {
      if (!entry.owns.has(name)) throw new Error(`the ${entry.mark.name} mark writes ${name}, which it does not own`);
      attr(el, name, value);
    }
  }
  entry.written = new Map([...next].map(([el, attrs]) => [el, Object.keys(attrs)]));
}

/**
 * The marks of one graph pane. `layers`: graph/view.js's SVG layers (a mark's own layer goes
 * over the edge labels, or under the edges). Returns {register(mark), render(frame, keys)}.
 */
export function createMarks(layers) {
  const entries = [];
  const keys = new Set(); // every state key some mark reads
  const owners = new Map(Object.entries(DRAWN).flatMap(([kind, names]) => names.map((name) => [`${kind} ${name}`, "the drawing"])));

  function claim(mark) {
    for (const [kind, names] of Object.entries(mark.owns ?? {})) {
      for (const name of names) {
        const owner = owners.get(`${kind} ${name}`);
        if (owner) throw new Error(`the ${mark.name} mark would write the ${kind}s' ${name}, which ${owner} writes`);
        owners.set(`${kind} ${name}`, `the ${mark.name} mark`);
      }
    }
  }

  let top = layers.labels; // the last layer over the cards: a later mark draws over it
  function layerFor(mark) {
    if (!mark.layer) return null;
    const layer = svgElement("g", {}, `layer-${mark.name}`);
    if (mark.layer === "under") layers.edges.before(layer);
    else {
      top.after(layer);
      top = layer;
    }
    return layer;
  }

  return {
    /** Add `mark` after the others (it draws over them); throws if it claims an owned attribute. */
    register(mark) {
      claim(mark);
      const owns = new Set(Object.values(mark.owns ?? {}).flat());
      entries.push({ mark, owns, layer: layerFor(mark), written: new Map() });
      for (const key of mark.keys ?? []) keys.add(key);
    },
    /** Draw `frame` with every mark, or (`only`: the state keys that changed) those reading them. */
    render(frame, { only = null } = {}) {
      for (const entry of entries) {
        if (only && !entry.mark.keys?.some((key) => only.has(key))) continue;
        write(entry, targets(entry.mark.render(frame, entry.layer), frame));
      }
    },
    /** Every state key some mark reads. */
    keys,
  };
}
