// The Paths panel: every path of the chain rule from a chosen leaf to the target (POST
// /api/paths), each as its chain of local derivatives and their product, and their sum, which is
// the leaf's gradient. Pointing at a path (or focusing it) lights its edges and cards on the graph
// (state.litPath, drawn by pathsMark). When there are too many paths to list, it says how many,
// lists the largest, and says why reverse mode never has to.
//
// The panel owns its contents; the mark owns data-path-lit on the graph's cards and edges.

import { postPaths } from "../core/api.js";
import { h } from "../core/dom.js";
import { compactText } from "../core/format.js";
import { traceIndex } from "../core/frames.js";
import { t } from "../core/i18n.js";
import { nodeName } from "../core/names.js";

/** A count of decimal digits grouped by thousands (counts outgrow JS numbers: kept as text). */
const groupedDigits = (digits) => digits.replace(/\B(?=(\d{3})+(?!\d))/g, "\u2009");

/** The mark that lights the path pointed at in the panel (state.litPath: {nodes, edges} ids). */
export function pathsMark() {
  const lit = { "data-path-lit": "true" };
  return {
    name: "paths",
    keys: ["litPath"],
    owns: { card: ["data-path-lit"], edge: ["data-path-lit"] },
    render({ state }) {
      const path = state.litPath;
      if (!path) return null;
      return { cards: new Map(path.nodes.map((id) => [id, lit])), edges: new Map(path.edges.map((id) => [id, lit])) };
    },
  };
}

/** One path of the list: pointing at it or focusing it lights it (`light(path | null)`). */
function pathItem(path, light) {
  const on = () => light(path);
  const off = () => light(null);
  return h("li", {
    class: "path", "data-testid": "path", tabindex: "0", text: path.text, "data-product": String(path.product),
    "data-edges": path.edges.join(" "), "data-nodes": path.nodes.join(" "),
    onpointerenter: on, onfocus: on, onpointerleave: off, onblur: off,
  });
}

/** The sentence under the list (the sum equals the gradient), or above it: how many paths there are. */
function summary(reply, trace) {
  const { nodeById } = traceIndex(trace);
  const leaf = nodeName(nodeById.get(reply.leaf));
  const target = nodeName(nodeById.get(reply.target));
  const sum = h("p", {
    class: "paths-sum", "data-testid": "paths-sum", "data-sum": String(reply.sum), "data-grad": String(reply.grad),
    "data-complete": String(reply.complete), "data-count": reply.count,
  });
  if (reply.count === "0") sum.textContent = t("ui.paths.none", { leaf, target });
  else if (reply.complete) sum.textContent = t("ui.paths.sum", { leaf, sum: compactText(reply.sum), grad: compactText(reply.grad) });
  else {
    const count = reply.count_exact ? groupedDigits(reply.count) : t("ui.paths.at_least", { count: "10^60" });
    sum.textContent = t("ui.paths.capped", { count, shown: reply.paths.length, leaf, grad: compactText(reply.grad) });
    return [sum, h("p", { class: "paths-why", "data-testid": "paths-why", text: t("ui.paths.why") })];
  }
  return [sum];
}

/** The leaf picker's options for `trace`, keeping the leaf chosen while it is still one. */
function fillLeaves(select, trace) {
  const chosen = select.value;
  const leaves = trace.leaves.map((leaf) => leaf.id);
  if (leaves.join() !== [...select.options].map((o) => o.value).join()) {
    select.replaceChildren(...trace.leaves.map((leaf) => h("option", { value: leaf.id, text: leaf.name })));
  }
  select.value = leaves.includes(chosen) ? chosen : leaves[0] ?? "";
}

/** The panel's elements in `body`: {select, list, notes, error}. */
function panelElements(body) {
  const select = h("select", { "data-testid": "paths-leaf" });
  const list = h("ol", { class: "paths-list", "data-testid": "paths-list" });
  const notes = h("div", { class: "paths-notes" });
  const error = h("p", { class: "paths-error" });
  error.hidden = true;
  body.append(h("p", { class: "table-note", text: t("ui.paths.intro") }), h("label", { class: "paths-pick" }, t("ui.paths.from"), " ", select),
    list, notes, error);
  return { select, list, notes, error };
}

/**
 * The Paths panel on `scope`'s panel area. `requestBody()`: the page's /api/graph body for the
 * program shown (the paths are asked of the same program, values and target).
 */
export function registerPathsPanel(scope, { requestBody }) {
  const { subscribe, update } = scope.store;
  const light = (path) => update({ litPath: path });
  scope.panels.register({
    id: "paths",
    title: t("ui.tab.paths"),
    hideKey: "tables",
    mount(body) {
      const parts = panelElements(body);
      let asked = 0; // the latest request wins
      async function load(trace) {
        const request = ++asked;
        body.dataset.loading = "true";
        try {
          const reply = await postPaths({ ...requestBody(), leaf: parts.select.value });
          if (request !== asked) return;
          light(null);
          parts.list.replaceChildren(...reply.paths.map((path) => pathItem(path, light)));
          parts.notes.replaceChildren(...summary(reply, trace));
          // Too many to list: how many there are, and why reverse mode never lists them, come
          // before the list of the largest; a complete list ends on its sum.
          if (reply.complete) parts.list.after(parts.notes);
          else parts.list.before(parts.notes);
          parts.error.hidden = true;
        } catch (err) {
          if (request !== asked) return;
          parts.error.textContent = err.detail?.message ?? String(err);
          parts.error.hidden = false;
        } finally {
          if (request === asked) delete body.dataset.loading;
        }
      }
      let loaded = null; // the trace the list is of: a hidden tab asks nothing until it is shown
      parts.select.addEventListener("change", () => load(loaded));
      subscribe((s) => {
        if (!s.trace || s.panel !== "paths" || loaded === s.trace) return;
        loaded = s.trace;
        fillLeaves(parts.select, s.trace);
        if (parts.select.value) load(s.trace);
      });
    },
  });
}
