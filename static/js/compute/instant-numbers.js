// A slider move painted from the page's own numbers (compute/evaluator.js), in the frame of the move; the
// server's numbers, which follow, are the authority. `paint` gives the trace for new values at
// once; `confirm` takes the server's trace for the same values and keeps the page's when every
// number agrees within its tolerance, else shows the server's and counts the disagreement
// (`mismatches`: the page reports it). With no server (a one-file page, an embedded player) the
// page's numbers are the only ones.

import { compileStructure, differences, evaluateNumbers, fromJson, toJson, tolerances } from "./evaluator.js";
import { setData } from "../core/dom.js";
import { t } from "../core/i18n.js";
import { copied, mergeNumbers, numbersOf } from "./merge-numbers.js";

// How long after the last slider move the server is asked for its numbers (a drag sends one
// request when it pauses, not one per frame).
export const CONFIRM_DELAY_MS = 120;

/** The leaf values of `trace` by name, `values` ({name: number}) over them, as the request's JSON
 *  carries them (−0 is 0 there): the values the page's numbers are computed for. */
function leafValues(trace, values) {
  const all = {};
  for (const leaf of trace.leaves) all[leaf.name] = leaf.value;
  for (const [name, x] of Object.entries(values)) all[name] = x;
  for (const name in all) if (all[name] === 0) all[name] = 0;
  return all;
}

/** `reply`'s node warnings, each with the sentence of `trace`'s warning of that node and type
 *  when it has one (the page writes no sentences: the server's next reply brings them). */
function withSentences(trace, reply) {
  const out = {};
  for (const id of Object.keys(reply.node_warnings)) {
    const known = trace.nodes[Number(id.slice(1))]?.warnings ?? []; // ids are positions (docs/api.md)
    out[id] = reply.node_warnings[id].map((w) => known.find((old) => old.type === w.type) ?? w);
  }
  return out;
}

// The compiled structure of each trace shown, by its groups (a merge keeps the trace's groups:
// one compile per structure, not per move); null for one the page cannot evaluate.
const compiled = new WeakMap();

/**
 * `trace`'s structure compiled for the page's evaluator (compute/evaluator.js compileStructure), or null
 * when the page cannot compute its numbers: an op the evaluator does not know (a program's own
 * function), forward mode's tangents, another target's gradients.
 */
export function pageStructure(trace) {
  if (!trace?.groups || !trace.leaves) return null;
  // Forward mode's tangents and another target's gradients are the server's alone: the page's
  // evaluator runs the root's reverse pass (issue 27's modes came after it).
  if (trace.pass === "forward" || (trace.target && trace.target !== trace.root)) return null;
  if (!compiled.has(trace.groups)) {
    let structure = null;
    try {
      structure = compileStructure(trace);
    } catch (err) {
      console.warn(`chainrule: the page cannot compute this graph's numbers (${err.message}); the server's are used`);
    }
    compiled.set(trace.groups, structure);
  }
  return compiled.get(trace.groups);
}

export function createInstantNumbers() {
  let last = null; // {values, reply, structure} of the last paint

  return {
    /** `trace` with the page's numbers for `values` ({leaf name: number}, the others as they are),
     *  or null when the page cannot compute them. */
    paint(trace, values) {
      const structure = pageStructure(trace);
      if (!structure) return null;
      const all = leafValues(trace, values);
      const reply = evaluateNumbers(structure, all); // Float64Arrays: the merge reads the numbers it shows
      last = { values: all, reply, structure };
      const merged = mergeNumbers(trace, Object.assign(copied(reply), {
        warnings: trace.warnings, node_warnings: withSentences(trace, reply),
      }));
      merged.numbersFrom = "page"; // the merge itself, not a copy: compute/merge-numbers.js sameDrawing knows it
      return merged;
    },
    /**
     * The server's trace `server` for the values last painted: `{trace, found}`, `trace` the one
     * to show (the page's `shown` when every number agrees, else the server's) and `found` the
     * differences (empty when they agree). A reply of another structure is the server's.
     */
    confirm(server, shown) {
      if (!last || !shown || server.structure !== last.structure.structure) return { trace: server, found: [] };
      // The reply of values the page has moved on from (a newer request follows): keep the page's.
      const moved = server.leaves.some((leaf) => !Object.is(leaf.value, toJson(fromJson(last.values[leaf.name]))));
      if (moved) return { trace: shown, found: [], stale: true };
      // The numbers, the gradient check and the gradient flags (issue 27's grad_flags) alike.
      const found = differences(last.reply, numbersOf(server), tolerances(last.structure, last.values), last.structure);
      // Agreed: keep the page's trace (nothing to repaint) but for what the page does not write:
      // the sentences of warnings.
      if (found.length) return { trace: { ...server, numbersFrom: "server" }, found };
      const warned = server.nodes.some((node) => node.warnings?.length);
      return { trace: warned ? { ...server, numbersFrom: "server" } : shown, found };
    },
  };
}

/**
 * The page's side of it: `setValues(values)` paints the current trace with the page's numbers
 * and asks the server (`recompute`) CONFIRM_DELAY_MS after the last move, or asks at once when the
 * page cannot compute; `paintOnly(values)` paints and never asks; `result(trace, meta)` gives the trace to show for a server reply (null:
 * keep what is shown). The body says where the numbers shown come from (`data-numbers`: "page" or
 * "server"), how many server replies were compared (`data-numbers-checked`) and how many of them
 * disagreed (`data-numbers-mismatches`); after a disagreement `notice` says so.
 */
export function mountInstantNumbers({ notice, body }, { store }, { recompute }) {
  const instant = createInstantNumbers();
  let timer = null;
  let checked = 0;
  let mismatches = 0;
  const mark = (from) => setData(body, { numbers: from, numbersChecked: String(checked), numbersMismatches: String(mismatches) });
  mark("server");

  function report(found) {
    mismatches += 1;
    notice.textContent = t("ui.numbers.mismatch", { count: found.length });
    notice.hidden = false;
    console.warn("chainrule: the server's numbers differ from the page's", found.slice(0, 10));
  }

  return {
    setValues(values) {
      const shown = store.state.trace;
      const painted = shown ? instant.paint(shown, values) : null;
      clearTimeout(timer);
      if (!painted) {
        recompute({ values: true });
        return;
      }
      store.setTrace(painted);
      mark("page");
      // A trace no server knows (`structure` null: the sandbox's of a graph too big to send)
      // has the page's numbers alone.
      if (shown.structure !== null) timer = setTimeout(() => recompute({ values: true }), CONFIRM_DELAY_MS);
    },
    /** `trace` with the page's numbers for `values`, or null when it cannot compute them; the
     *  numbers shown are not touched (a reply the page holds: main.js's graph channel). */
    painted(trace, values) {
      const painted = instant.paint(trace, values);
      if (painted) mark("page");
      return painted;
    },
    /** Paint `values` from the page's numbers alone, asking the server nothing: whether the
     *  page could (a following student's page: the teacher's page has the server confirm the
     *  same numbers, so a drag costs the server nothing per student). */
    paintOnly(values) {
      const shown = store.state.trace;
      const painted = shown ? instant.paint(shown, values) : null;
      if (!painted) return false;
      clearTimeout(timer);
      store.setTrace(painted);
      mark("page");
      return true;
    },
    result(trace, meta) {
      const shown = store.state.trace;
      if (!meta.values || shown?.numbersFrom !== "page") {
        mark("server");
        return trace;
      }
      const { trace: kept, found, stale } = instant.confirm(trace, shown);
      if (stale) return null;
      checked += 1;
      if (found.length) report(found);
      mark(kept.numbersFrom === "page" ? "page" : "server");
      return kept === shown ? null : kept;
    },
  };
}
