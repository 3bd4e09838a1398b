// A leaves panel for programs with many leaves (an MLP has dozens of weights): from MANY_LEAVES
// leaves on, the rows are compact, a filter box narrows them, and they are grouped by the name's
// prefix (`w11`, `w_2` → `w…`; `b1` → `b…`). Pure functions: controls/sliders.js draws what they decide.

import { t } from "../core/i18n.js";

/** From this many leaves the panel is compact, filtered and grouped (below, it is a plain list). */
export const MANY_LEAVES = 8;

/** The letters a leaf's name starts with, before its first digit or underscore (`w11` → `w`). */
export function leafPrefix(name) {
  return /^[A-Za-z]*/.exec(name)[0] || name;
}

/**
 * The leaves' names in groups, in order of first appearance: [{prefix, names}]. A prefix shared
 * by one leaf alone (`c`, `y`) is no group: such leaves go to a last group with prefix "".
 */
export function groupLeaves(names) {
  const byPrefix = new Map();
  for (const name of names) {
    const prefix = leafPrefix(name);
    if (!byPrefix.has(prefix)) byPrefix.set(prefix, []);
    byPrefix.get(prefix).push(name);
  }
  const groups = [];
  const others = [];
  for (const [prefix, members] of byPrefix) {
    if (members.length > 1) groups.push({ prefix, names: members });
    else others.push(...members);
  }
  if (others.length) groups.push({ prefix: "", names: others });
  return groups;
}

/** Does leaf `name` pass the filter `text` (a part of the name, any case; empty passes all)? */
export function passesFilter(name, text) {
  const wanted = text.trim().toLowerCase();
  return wanted === "" || name.toLowerCase().includes(wanted);
}

/** A group's heading: `w…` (its prefix), or "other" (in the page's language) for the leaves that
 * share a prefix with none. */
export function groupTitle(prefix) {
  return prefix ? `${prefix}\u2026` : t("ui.leaves.other");
}
