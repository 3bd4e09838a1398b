// Where a view lives: the page, or one embedded player (embed.js). Every feature is mounted on a
// scope and reads nothing else of its surroundings, so the page and each player in a notebook or
// a one-file HTML run the same features and share nothing. A scope is
//   store:  the state and the actions that change it (store.js createStore);
//   keys:   the keyboard its keys are bound on (keys.js createKeyboard);
//   panels: the panel area its tables and labs register in (panels.js createPanelArea);
//   root:   the element that carries data-step-index, data-phase and data-api-step, and the
//           classes of its modes (presenting, in-lesson, training, hide-*);
//   host:   where its dialogs and popovers go (the page's body, a player's root in its shadow root);
//   server: the server's endpoints ({descend, landscape}: api.js) where there is one, else null (an
//           embedded player: the features that need it are not mounted);
//   graph:  the graph pane once mounted (graph-view.js mountGraph: fit, zoom, marks, cardOf).

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
