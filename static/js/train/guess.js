// The Train lab's guessing phase (issue 27): before the first step of descent, the learner moves
// the parameters to make the loss as small as they can — with the sliders of this block or of
// the leaves panel, or by dragging the point on the loss landscape. Every point the graph shows
// while no step is taken is a try: the leaf values and the root there (the server's numbers).
// Descent starts from the best try, and the loss chart shows the tries before the steps.

import { compactText, fullText } from "../core/format.js";
import { h } from "../core/dom.js";
import { t } from "../core/i18n.js";
import { mountSliderRows } from "../controls/sliders.js";

const MAX_TRIES = 400; // a longer trail drops its oldest tries but the best

/** A new trail of tries: {tries: [{values: {leaf: value}, loss}]}. */
export const freshTrail = () => ({ tries: [] });

/** Do the value tables `a` and `b` give every leaf the same value? */
export function sameValues(a, b) {
  const names = Object.keys(a);
  return names.length === Object.keys(b).length && names.every((name) => Object.is(a[name], b[name]));
}

/** The best try's index: the lowest finite loss, the earliest of equals; -1 when none is finite. */
export function bestIndex(trail) {
  let best = -1;
  trail.tries.forEach(({ loss }, k) => {
    if (typeof loss === "number" && Number.isFinite(loss) && (best < 0 || loss < trail.tries[best].loss)) best = k;
  });
  return best;
}

/**
 * Record the point `values` (every leaf's value) and its `loss` as a try, unless it was tried
 * already. When a leaf that is not one of `params` moved since the last try, the trail starts
 * again: the data changed, so the earlier losses belong to another function. Returns whether
 * the point was recorded.
 */
export function recordTry(trail, values, loss, params) {
  const last = trail.tries.at(-1);
  if (last && Object.keys(values).some((name) => !params.includes(name) && !Object.is(last.values[name], values[name]))) {
    trail.tries = [];
  }
  if (trail.tries.some((earlier) => sameValues(earlier.values, values))) return false;
  trail.tries.push({ values, loss });
  if (trail.tries.length > MAX_TRIES) {
    const best = bestIndex(trail);
    trail.tries.splice(best === 0 ? 1 : 0, 1);
  }
  return true;
}

/**
 * The guessing block of the Train lab: its sentence, a slider per ticked parameter (the leaves
 * panel's own rows), the loss now and the best so far, and "back to my best guess".
 * `onValue(name, value)` moves a leaf by hand; `onBest()` goes back to the best guess.
 * Returns {element, show(view)}; view: {phase ("guess" | "descent"), leaves (the ticked
 * parameters' trace leaves), state, loss (the root now), trail, params}.
 */
export function guessBlock({ onValue, onBest }, store) {
  const intro = h("p", { class: "guess-intro", "data-testid": "guess-intro" });
  const rows = h("div", { class: "guess-rows sliders compact" });
  const readout = h("p", { class: "guess-readout", "data-testid": "guess-readout", "aria-live": "polite" });
  const back = h("button", { type: "button", text: t("ui.guess.to_best"), "data-testid": "guess-best" });
  back.addEventListener("click", onBest);
  const element = h("div", { class: "train-guess", "data-testid": "train-guess" }, intro, rows,
    h("div", { class: "guess-line" }, readout, back));
  const showRows = mountSliderRows(rows, { onValue, testPrefix: "guess" }, store);

  function show({ phase, leaves, state, loss, trail, params }) {
    const best = bestIndex(trail);
    const bestTry = best < 0 ? null : trail.tries[best];
    const here = bestTry && params.every((name) => Object.is(bestTry.values[name], leaves.find((l) => l.name === name)?.value));
    intro.textContent = phase === "guess" ? t("ui.guess.intro")
      : bestTry ? t("ui.guess.started", { loss: compactText(bestTry.loss), try: best + 1 }) : t("ui.guess.started_plain");
    showRows(leaves, state);
    readout.textContent = bestTry
      ? t("ui.guess.readout", { now: compactText(loss), best: compactText(bestTry.loss), try: best + 1, tries: trail.tries.length })
      : t("ui.guess.readout_none", { now: compactText(loss) });
    back.hidden = phase !== "guess" || !bestTry || here;
    Object.assign(element.dataset, {
      phase, tries: String(trail.tries.length), loss: fullText(loss),
      bestLoss: bestTry ? fullText(bestTry.loss) : "", bestTry: bestTry ? String(best + 1) : "",
      best: bestTry ? JSON.stringify(Object.fromEntries(params.map((name) => [name, bestTry.values[name]]))) : "",
    });
  }

  return { element, show };
}
