// The words of the gradient flags (the reply's `grad_flags`: vanishing, exploding, dead,
// saturated): a node's flags, their short names, and the sentence that explains each, listed
// where flags first appear (under the gradient map's legend, under the gradient table).

import { h } from "../core/dom.js";
import { t } from "../core/i18n.js";

// Each flag's short name and the sentence that explains it.
const WORDS = {
  vanishing: ["ui.flag.vanishing", "ui.flag.vanishing_why"],
  exploding: ["ui.flag.exploding", "ui.flag.exploding_why"],
  dead: ["ui.flag.dead", "ui.flag.dead_why"],
  saturated: ["ui.flag.saturated", "ui.flag.saturated_why"],
};
export const FLAGS = Object.keys(WORDS);
const NO_FLAGS = [];

/** The flags of node `id` in `trace` (an empty list for none). */
export const flagsOf = (trace, id) => trace?.grad_flags?.[id] ?? NO_FLAGS;

/** The flags that some node of `trace` has, in FLAGS order. */
export function flagsPresent(trace) {
  const present = new Set(Object.values(trace?.grad_flags ?? {}).flat());
  return FLAGS.filter((flag) => present.has(flag));
}

/** ["vanishing", "saturated"]: a node's flags, each in a word. */
export const flagWordList = (flags) => flags.map((flag) => t(WORDS[flag][0]));

/** "vanishing, saturated": a node's flags in words. */
export const flagWords = (flags) => flagWordList(flags).join(", ");

/** A list with one sentence per flag of `flags`: what it means, why it happens. */
export function flagNotes(flags, testid) {
  return h("ul", { class: "flag-notes", "data-testid": testid }, ...flags.map((flag) => h("li", { "data-flag": flag },
    h("strong", { text: t(WORDS[flag][0]) }), ": ", t(WORDS[flag][1]))));
}
