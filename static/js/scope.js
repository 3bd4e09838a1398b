// Where a view lives: the page, or one embedded player (embed.js). A scope is
//   store:  the state and the functions that change it (state.js createStore),
//   keys:   the keyboard its keys are bound on (keys.js createKeyboard),
//   panels: the panel area its tables register in (panels.js createPanelArea),
//   root:   the element that carries data-step-index, data-phase and data-api-step.
// The views an embedded player reuses (graph, transport, explanations, tables, sliders) take a
// scope as their last argument, the page's by default: the page calls them as before, and two
// players in one document share nothing.

import { createKeyboard, pageKeyboard } from "./keys.js";
import { createPanelArea, pagePanels } from "./panels.js";
import { createStore, pageStore } from "./state.js";

export const pageScope = {
  store: pageStore,
  keys: pageKeyboard,
  panels: pagePanels,
  get root() {
    return document.body;
  },
};

/**
 * A scope of its own for an embedded player: `root` is its outermost element, `keyTarget` where
 * its keys are listened for (its shadow root: only while the focus is inside the player).
 */
export function createScope({ root, keyTarget }) {
  return {
    store: createStore(),
    keys: createKeyboard(keyTarget, { contain: true }),
    panels: createPanelArea(),
    root,
  };
}
