// Where a view lives: the page, or one embedded player (embed.js). Every feature is mounted on a
// scope and reads nothing else of its surroundings, so the page and each player in a notebook or
// a one-file HTML run the same features and share nothing. A scope is
//   store:  the state and the actions that change it (core/store.js createStore);
//   keys:   the keyboard its keys are bound on (core/keys.js createKeyboard);
//   panels: the panel area its tables and labs register in (core/panels.js createPanelArea);
//   root:   the element that carries data-step-index, data-phase and data-api-step, and the
//           classes of its modes (presenting, in-lesson, training, hide-*);
//   host:   where its dialogs and popovers go (the page's body, a player's root in its shadow root);
//   server: the endpoints the features ask ({descend, landscape}: core/api.js on the page, descent
//           computed in the page where it can be); an embedded player has no server and gives
//           only `descend`, its own (train/descend.js): the features that need the rest are not mounted;
//   graph:  the graph pane once mounted (graph/view.js mountGraph: fit, zoom, marks, cardOf).

import { createKeyboard } from "./keys.js";
import { createPanelArea } from "./panels.js";
import { createStore } from "./store.js";

/**
 * A scope. `keyTarget`: where its keys are listened for (the document; an embedded player's
 * shadow root, `contain`: its keys go no further). `root`, `host`, `server`: as above.
 */
export function createScope({ root, host = root, keyTarget, contain = false, server = null }) {
  const store = createStore();
  return {
    store,
    keys: createKeyboard(keyTarget, { contain }),
    panels: createPanelArea(store),
    root,
    host,
    server,
    graph: null,
  };
}
