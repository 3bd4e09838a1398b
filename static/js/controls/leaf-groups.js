// A leaves panel for programs with many leaves (an MLP has dozens of weights): from MANY_LEAVES
// leaves on, the rows are compact, a filter box narrows them, and they are grouped. A leaf the
// sandbox (or the notebook) named by where it lives (its label a place: `n.layers[0].neurons[1].w[0]`,
// engine/value_reader.py) is grouped with the object that holds it (`n.layers[0].neurons[1]`:
// one neuron, as the graph's real-size view draws one neuron a statement), the groups in the
// order of their places (layer by layer, neuron by neuron); any other leaf by its name's prefix
// (`w11`, `w_2` → `w…`; `b1` → `b…`). Pure functions: controls/sliders.js draws what they decide.

import { t } from "../core/i18n.js";

/** From this many leaves the panel is compact, filtered and grouped (below, it is a plain list). */
export const MANY_LEAVES = 8;

/** The letters a leaf's name starts with, before its first digit or underscore (`w11` → `w`). */
export function leafPrefix(name) {
  return /^[A-Za-z]*/.exec(name)[0] || name;
}

// A place, as the reader writes one: a variable, then attributes and indices (`n.layers[0].w[2]`).
const PLACE = /^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*|\[[^\]]*\])+$/;
const LAST_ATTRIBUTE = /\.[A-Za-z_]\w*(?:\[[^\]]*\])*$/;

/**
 * Where the leaf labelled `label` lives, split at its holder: `{owner, part}` for a place whose
 * last attribute holds it (`n.layers[0].neurons[1].w[0]` → `n.layers[0].neurons[1]` and `w[0]`),
 * `{owner: "xs", part: "xs[0][1]"}` for an item of a list a variable holds; null for no place.
 */
export function placeOf(label) {
  if (!PLACE.test(label ?? "")) return null;
  const last = LAST_ATTRIBUTE.exec(label);
  if (last) return { owner: label.slice(0, last.index), part: last[0].slice(1) };
  return { owner: /^[A-Za-z_]\w*/.exec(label)[0], part: label };
}

/** Places in their natural order: `neurons[2]` before `neurons[10]`, layer 0 before layer 1. */
function naturalOrder(a, b) {
  return a.localeCompare(b, "en", { numeric: true });
}

/**
 * The leaves ({name, label}) in groups: [{prefix, names, place}] (`prefix`: the group's key, its
 * owner for a place group). Groups by prefix come in order of first appearance, a prefix shared
 * by one leaf alone (`c`, `y`) going to a last group with prefix ""; the place groups take the
 * slots their first members had, sorted by their places, each leaf in place order.
 */
export function groupLeaves(leaves) {
  const byKey = new Map();
  for (const leaf of leaves) {
    const place = placeOf(leaf.label);
    const key = place ? place.owner : leafPrefix(leaf.name);
    if (!byKey.has(key)) byKey.set(key, { prefix: key, names: [], labels: [], place: !!place });
    const group = byKey.get(key);
    group.names.push(leaf.name);
    group.labels.push(leaf.label ?? leaf.name);
  }
  const groups = [];
  const others = [];
  for (const group of byKey.values()) {
    if (group.names.length > 1) groups.push(group);
    else others.push(...group.names);
  }
  const places = groups.filter((group) => group.place).sort((a, b) => naturalOrder(a.prefix, b.prefix));
  let next = 0;
  const ordered = groups.map((group) => (group.place ? places[next++] : group)).map(({ prefix, names, labels, place }) => {
    if (!place) return { prefix, names, place };
    const order = names.map((_, i) => i).sort((i, j) => naturalOrder(labels[i], labels[j]));
    return { prefix, names: order.map((i) => names[i]), place };
  });
  if (others.length) ordered.push({ prefix: "", names: others, place: false });
  return ordered;
}

/** Does a leaf pass the filter `text` (a part of its name or its label, any case; empty passes all)? */
export function passesFilter(name, text, label = "") {
  const wanted = text.trim().toLowerCase();
  return wanted === "" || name.toLowerCase().includes(wanted) || label.toLowerCase().includes(wanted);
}

/** A group's heading: its place (`n.layers[0].neurons[1]`), its prefix (`w…`), or "other" (in the
 * page's language) for the leaves that share a prefix with none. */
export function groupTitle({ prefix, place }) {
  if (place) return prefix;
  return prefix ? `${prefix}\u2026` : t("ui.leaves.other");
}
