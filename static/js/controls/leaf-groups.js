// A leaves panel for programs with many leaves (an MLP has dozens of weights): from MANY_LEAVES
// leaves on, the rows are compact, a filter box narrows them, and they are grouped. A leaf the
// sandbox (or the notebook) named by where it lives (its label a place: `n.layers[0].neurons[1].w[0]`,
// engine/value_reader.py) is grouped with the object that holds it (`n.layers[0].neurons[1]`:
// one neuron, as the graph's real-size view draws one neuron a statement), layer by layer as the
// reader writes them; any other leaf by its name's prefix (`w11`, `w_2` → `w…`; `b1` → `b…`).
// Pure functions: controls/sliders.js draws what they decide.

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

/**
 * The leaves ({name, label}) in groups, in order of first appearance: [{prefix, names, place}]
 * (`prefix`: the group's key, the owner of a place group). The reader writes a model's
 * parameters in the order of their places (engine/value_reader.py), so a model's groups come
 * layer by layer. A key shared by one leaf alone (`c`, `y`) is no group: such leaves go to a last
 * group with prefix "".
 */
export function groupLeaves(leaves) {
  const byKey = new Map();
  for (const leaf of leaves) {
    const place = placeOf(leaf.label);
    const prefix = place ? place.owner : leafPrefix(leaf.name);
    const key = `${place ? "place" : "prefix"}:${prefix}`; // a place `w` is not the prefix `w…`
    if (!byKey.has(key)) byKey.set(key, { prefix, names: [], place: !!place });
    byKey.get(key).names.push(leaf.name);
  }
  const groups = [];
  const others = [];
  for (const group of byKey.values()) {
    if (group.names.length > 1) groups.push(group);
    else others.push(...group.names);
  }
  if (others.length) groups.push({ prefix: "", names: others, place: false });
  return groups;
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
