// The display toggles: "show final gradients" and "fold constants" set their state flag, and
// every box follows the state (a shared link may switch them on). Folding is a class on the graph.

import { pageScope } from "./scope.js";

/**
 * `boxes`: {finalGrads, expandDerived, foldConstants} checkboxes (any may be missing; the
 * expand box is only kept in step: its change asks the server for another graph, main.js);
 * `graph`: the graph's SVG.
 */
export function mountToggles({ boxes, graph }, scope = pageScope) {
  const { subscribe, update } = scope.store;
  boxes.finalGrads?.addEventListener("change", (event) => update({ finalGrads: event.target.checked }));
  boxes.foldConstants?.addEventListener("change", (event) => update({ foldConstants: event.target.checked }));
  subscribe((s, changed) => {
    for (const [key, box] of Object.entries(boxes)) {
      if (box && changed.has(key) && box.checked !== Boolean(s[key])) box.checked = Boolean(s[key]);
    }
    if (changed.has("foldConstants")) graph.classList.toggle("fold-constants", s.foldConstants);
  });
}
