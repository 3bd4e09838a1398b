// What the page asks POST /api/graph for (and every request built on it: export, paths, the live
// class): the program, its slider values, and one row per option of the engine's options record
// (engine/options.py Options; its names and defaults are generated into REQUEST_OPTIONS). A row
// names the state key the option is read from; an option at its default is not sent. Adding an
// option is a field of Options, the engine code that reads it, and a row here (a test checks the
// rows against the record). No DOM.

import { REQUEST_OPTIONS } from "../compute/op-functions.js";

/** A forward pass is asked once its leaf is known (gradients/forward-mode.js names the first). */
const forwardWithLeaf = (s) => s.pass === "forward" && Boolean(s.wrt);

/** Request option → `key`: the state key holding it; `when`: sent only when it holds. */
export const REQUEST_FIELDS = {
  expand_derived: { key: "expandDerived" },
  mode: { key: "mode" },
  order: { key: "order" },
  target: { key: "target" },
  pass: { key: "pass", when: forwardWithLeaf },
  wrt: { key: "wrt", when: forwardWithLeaf },
};

/** The state's starting values of the request's options: the engine's defaults. */
export function requestDefaults() {
  return Object.fromEntries(
    Object.entries(REQUEST_FIELDS).map(([name, { key }]) => [key, REQUEST_OPTIONS[name]]),
  );
}

const same = (x, y) => JSON.stringify(x) === JSON.stringify(y);

/** The /api/graph body of `state` for the program `source`. */
export function requestBody(state, source) {
  const body = { source };
  if (Object.keys(state.values).length) body.values = { ...state.values };
  for (const [name, { key, when }] of Object.entries(REQUEST_FIELDS)) {
    const value = state[key];
    if (value === null || same(value, REQUEST_OPTIONS[name]) || (when && !when(state))) continue;
    body[name] = Array.isArray(value) ? [...value] : value;
  }
  return body;
}
