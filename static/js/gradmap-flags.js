// The gradient flags on the gradient map: when the map is on and the pass has ended, each flagged
// card carries its flags (a vanishing, exploding or dead gradient, a saturated tanh or sigmoid)
// as data-grad-flag and a word under the card; the legend explains each flag shown.
//
// Owner of: the cards' data-grad-flag and .grad-flag text, and the legend's flag sentences.

import { passComplete } from "./explain.js";
import { flagNotes, flagsOf, flagsPresent, flagWords } from "./flag-words.js";
import { state, subscribe } from "./state.js";
import { attr, svgElement } from "./svg.js";
import { CARDS, cardId } from "./target.js";

function flagText(card) {
  if (card._flagText?.parentNode !== card) { // new, or its card's contents were drawn anew
    const height = Number(card.querySelector(".card")?.getAttribute("height")) || 40;
    card._flagText = svgElement("text", { x: 0, y: height + 13 }, "grad-flag");
    card.append(card._flagText);
  }
  return card._flagText;
}

/** `svg`: the graph; `graph`: its view (graph-view.js); `legend`: the pane's legend list (the flag sentences go under it). */
export function mountGradmapFlags({ svg, legend, graph }) {
  const notes = document.createElement("li");
  notes.className = "legend-flags";
  notes.hidden = true;
  legend.append(notes);

  let painted = false; // whether some card may carry a flag now
  function paint(s) {
    const on = Boolean(s.gradMap && s.trace && (s.finalGrads || passComplete(s.trace, s.step)));
    if (!on && !painted) return; // the usual case while the map is off: no card to visit
    painted = on;
    for (const card of svg.querySelectorAll(CARDS)) {
      const flags = on ? flagsOf(s.trace, cardId(card)) : [];
      attr(card, "data-grad-flag", flags.length ? flags.join(" ") : null);
      if (flags.length || card._flagText?.parentNode === card) flagText(card).textContent = flagWords(flags);
    }
    const present = on ? flagsPresent(s.trace) : [];
    notes.hidden = !present.length;
    notes.replaceChildren(...(present.length ? [flagNotes(present, "grad-flags-legend")] : []));
  }

  graph.onArranged(() => paint(state)); // cards drawn anew (a statement folded or unfolded)
  subscribe((s, changed) => {
    if (["gradMap", "trace", "step", "finalGrads"].some((key) => changed.has(key))) paint(s);
  });
}
