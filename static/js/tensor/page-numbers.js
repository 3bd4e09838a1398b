// A dragged cell of a tensor program painted from the page's own numbers (tensor/recompute.js),
// with no request. The scalar graph they are computed on is the server's (POST /api/tensor-graph),
// asked once per program when a leaf cell's editor first opens, not with /api/graph: at makemore's
// size it is 3.6 MB of JSON (0.95 MB gzipped) and 50 ms of the server's time that a program only
// looked at never needs. Until it arrives, or for a program whose numbers shape its graph, a drag
// asks the server as before. A one-file page is given the graph with its reply (`use`).
//
// The tensor graph's SVG says where the numbers shown come from: `data-numbers` "page" or
// "server", and `data-page-numbers` "ready" (drags are the page's), "loading" or "none".

import { setData } from "../core/dom.js";
import { compileGraph, elementFanIn, nodeNumbers, recompute } from "./recompute.js";

/**
 * `scope.store`'s tensor program's numbers from the page: `paint(values)` shows them (false when
 * the page cannot yet: the caller asks the server); `use(graph)` gives the scalar graph at once.
 * `fetchGraph(body)` asks the server for it (core/api.js postTensorGraph; null: no server),
 * `requestBody()` is the page's /api/graph body; `svg` gets the marks.
 */
export function createTensorNumbers(svg, scope, { requestBody, fetchGraph = null }) {
  const { store } = scope;
  let held = { source: null, compiled: null, asked: false };

  /** The compiled graph of `reply`'s program, or null (not asked, not come, or not runnable). */
  function compiledFor(reply) {
    return reply && held.source === reply.source ? held.compiled : null;
  }

  function hold(graph, reply) {
    let compiled = null;
    try {
      compiled = graph.recomputable ? compileGraph(graph, reply) : null;
    } catch (err) {
      console.warn(`chainrule: the page cannot compute this tensor program's numbers (${err.message}); the server's are used`);
    }
    held = { source: reply.source, compiled, asked: true };
    setData(svg, { pageNumbers: compiled ? "ready" : "none" });
  }

  /** Ask for the scalar graph of the program shown (once per program). */
  async function ask() {
    const reply = store.state.tensor;
    if (!reply || !fetchGraph || (held.source === reply.source && held.asked)) return;
    const body = requestBody();
    held = { source: reply.source, compiled: null, asked: true };
    setData(svg, { pageNumbers: "loading" });
    try {
      // The program's own numbers: `values` are applied on the page, as every later drag's.
      const graph = await fetchGraph({ ...body, values: {} });
      const shown = store.state.tensor;
      if (shown && shown.source === reply.source && held.source === reply.source) hold(graph, shown);
    } catch (err) {
      console.warn(`chainrule: no scalar graph of this tensor program (${err.message ?? err}); drags ask the server`);
      if (held.source === reply.source) setData(svg, { pageNumbers: "none" });
    }
  }

  store.subscribe((s, changed) => {
    if (!changed.has("tensor") && !changed.has("tensorCell")) return;
    if (s.tensor && held.source !== null && s.tensor.source !== held.source) {
      held = { source: null, compiled: null, asked: false };
      setData(svg, { pageNumbers: "none" });
    }
    if (s.tensor && changed.has("tensor")) setData(svg, { numbers: s.tensor.numbersFrom ?? "server" });
    // A leaf cell's editor opened: a drag may follow.
    if (s.tensorCell && s.tensor) ask();
  });

  return {
    /** Show `values` ({`W[1,2]`: number}) with the page's numbers; false when it cannot. */
    paint(values) {
      const reply = store.state.tensor;
      const compiled = compiledFor(reply);
      if (!compiled) return false;
      // One update: the numbers and the values they are of (the link) together.
      store.update({ values, tensor: recompute(compiled, reply, values), error: null });
      return true;
    },
    /** The fan-in of element `index` of tensor `id` (POST /api/fan-in's reply) from the page's
     *  numbers, when they are the ones shown; else null (the server's are asked for). */
    fanIn(id, index) {
      const reply = store.state.tensor;
      const compiled = compiledFor(reply);
      return compiled && reply.numbersFrom === "page" ? elementFanIn(compiled, reply, id, index) : null;
    },
    /** The numbers of single scalar nodes (recompute.js nodeNumbers) when the page's are the
     *  ones shown; else null (an expansion open asks the server for its numbers again). */
    nodeNumbers() {
      const reply = store.state.tensor;
      const compiled = compiledFor(reply);
      return compiled && reply.numbersFrom === "page" ? nodeNumbers(compiled) : null;
    },
    /** Use `graph` (POST /api/tensor-graph's reply) for the program shown. */
    use(graph) {
      if (store.state.tensor) hold(graph, store.state.tensor);
    },
  };
}
