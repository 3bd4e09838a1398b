// The gradient flags on the gradient map (a mark, graph/marks.js): when the map is on and the pass has
// ended, each flagged card carries its flags (a vanishing, exploding or dead gradient, a saturated
// tanh or sigmoid) as data-grad-flag and a word under it; the legend explains each flag shown. A
// collapsed statement's card is flagged as its root, whose numbers it shows.
//
// The mark owns the cards' data-grad-flag, its layer of flag words and the legend's flag sentences.

import { passComplete } from "../controls/explain.js";
import { flagNotes, flagsOf, flagsPresent, flagWordList } from "./flag-words.js";
import { groupIndex } from "../graph/groups.js";
import { attr, join, svgElement } from "../core/svg.js";

// The words under a card, one flag a line, as large as the card's width allows its longest word
// (within these bounds, in graph units): a zoomed-out chain still reads "vanishing" under a card.
const MIN_SIZE = 11;
const MAX_SIZE = 20;
const LINE = 1.15; // line height, in font sizes
const CHAR = 0.62; // a bold character's width, in font sizes (about: the face is the page's sans)

/** The words' font size for a card `width` wide. */
const wordSize = (width, words) =>
  Math.max(MIN_SIZE, Math.min(MAX_SIZE, width / (CHAR * Math.max(...words.map((word) => word.length)))));

/** The flag words' places: one per card drawn for a flagged node, under its lower-left corner. */
function wordPlaces(frame) {
  const { byId } = groupIndex(frame.trace);
  const places = [];
  for (const card of frame.shown.nodes) {
    const id = card.kind === "group" ? byId.get(card.id)?.root : card.id;
    const flags = flagsOf(frame.trace, id);
    if (!flags.length) continue;
    const words = flagWordList(flags);
    const size = wordSize(card.width, words);
    places.push({ key: card.id, id, flags, words, size, x: card.x - card.width / 2, y: card.y + card.height / 2 + size });
  }
  return places;
}

const enterWords = () => svgElement("text", {}, "grad-flag");

function updateWords(el, place) {
  attr(el, "x", place.x);
  attr(el, "y", place.y);
  attr(el, "font-size", place.size.toFixed(1));
  attr(el, "data-node-id", place.id);
  const key = place.words.join("\n");
  if (el.dataset.words !== key) {
    el.dataset.words = key;
    el.replaceChildren(...place.words.map((word, i) => {
      const line = svgElement("tspan", { dy: i ? `${LINE}em` : "0" });
      line.textContent = word;
      return line;
    }));
  }
  for (const line of el.children) attr(line, "x", place.x); // each line starts under the card's edge
}

/** The legend's sentences for `present` (the flags shown), kept when they are the same. */
function writeNotes(notes, present) {
  const key = present.join();
  if (notes.dataset.flags === key) return;
  notes.dataset.flags = key;
  notes.hidden = !present.length;
  notes.replaceChildren(...(present.length ? [flagNotes(present, "grad-flags-legend")] : []));
}

/** The flags' mark, its sentences added to `legend` (the pane's legend list). */
export function gradFlagsMark({ legend }) {
  const notes = document.createElement("li");
  notes.className = "legend-flags";
  notes.hidden = true;
  legend.append(notes);
  return {
    name: "grad-flags",
    keys: ["gradMap"],
    owns: { card: ["data-grad-flag"] },
    layer: "over",
    render(frame, layer) {
      const { state, trace } = frame;
      const on = state.gradMap && (state.finalGrads || passComplete(trace, frame.view.frame));
      const places = on ? wordPlaces(frame) : [];
      join(layer, places, (place) => place.key, enterWords, updateWords);
      writeNotes(notes, on ? flagsPresent(trace) : []);
      return { cards: new Map(places.map((place) => [place.id, { "data-grad-flag": place.flags.join(" ") }])) };
    },
  };
}
