// What the page works out once per trace (lookups, boxes, narration fillers, a merge's reply),
// kept on the trace itself, where a WeakMap would keep it beside.
//
// Why not a WeakMap: a slider move makes a new trace sixty times a second, and V8's young-generation
// collector (the scavenger) keeps every value of an old WeakMap alive, whether or not its key still
// lives. A value that reaches its key (a trace's lookups reach its nodes, its steps reach its reply)
// so outlives every collection and is promoted: at 1,000 nodes, a 60 Hz drag promoted 10 MB a
// second and each scavenge paused 12–33 ms (bench/page.py's drag row). A property of the key dies
// with it.

/**
 * A WeakMap's `get` and `set` on objects that are made and dropped by the thousand (traces
 * and their steps): the value is a property of the object under a symbol of its own, not
 * enumerable, so spreads, `Object.assign`, JSON and compute/merge-numbers.js `copied` leave it behind (a copy is
 * another trace, with lookups of its own).
 */
export class TraceMemo {
  #key;

  constructor(name) {
    this.#key = Symbol(name);
  }

  get(object) {
    return object == null ? undefined : object[this.#key];
  }

  set(object, value) {
    Object.defineProperty(object, this.#key, { value, writable: true, configurable: true, enumerable: false });
    return this;
  }
}
