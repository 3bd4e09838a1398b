// The Paths panel: every path of the chain rule from a chosen leaf to the target (POST
// /api/paths), each as its chain of local derivatives and their product, and their sum, which is
// the leaf's gradient. Pointing at a path lights its edges and cards on the graph. When there are
// too many paths to list, it says how many, lists the largest, and says why reverse mode never
// has to.
//
// Owner of: the Paths panel's contents, and data-path-lit on the graph's edges and cards.

import { postPaths } from "./api.js";
import { compactText } from "./format.js";
import { t } from "./i18n.js";
import { registerPanel } from "./panels.js";
import { state, subscribe } from "./state.js";
import { attr } from "./svg.js";
import { traceIndex } from "./timeline.js";

const nameOf = (node) => node?.label || node?.text || node?.id || "";

function element(tag, className, text) {
  const el = document.createElement(tag);
  if (className) el.className = className;
  if (text !== undefined) el.textContent = text;
  return el;
}

/** A count of decimal digits grouped by thousands (counts outgrow JS numbers: kept as text). */
const groupedDigits = (digits) => digits.replace(/\B(?=(\d{3})+(?!\d))/g, "\u2009");

/** Light path `path` ({nodes, edges} ids) on the graph, or nothing when null. */
function light(svg, path) {
  for (const lit of svg.querySelectorAll("[data-path-lit]")) attr(lit, "data-path-lit", null);
  if (!path) return;
  for (const id of path.edges) {
    const edge = svg.querySelector(`[data-edge-id="${id}"]`);
    if (edge) attr(edge, "data-path-lit", "true");
  }
  for (const id of path.nodes) {
    const card = svg.querySelector(`.layer-nodes [data-node-id="${id}"]`);
    if (card) attr(card, "data-path-lit", "true");
  }
}

function pathItem(svg, path) {
  const item = element("li", "path", path.text);
  item.dataset.testid = "path";
  item.dataset.product = String(path.product);
  item.dataset.edges = path.edges.join(" ");
  item.dataset.nodes = path.nodes.join(" ");
  item.tabIndex = 0;
  item.addEventListener("pointerenter", () => light(svg, path));
  item.addEventListener("focus", () => light(svg, path));
  item.addEventListener("pointerleave", () => light(svg, null));
  item.addEventListener("blur", () => light(svg, null));
  return item;
}

/** The sentence under the list: the sum equals the gradient, or how many paths there are. */
function summary(reply, trace) {
  const { nodeById } = traceIndex(trace);
  const leaf = nameOf(nodeById.get(reply.leaf));
  const target = nameOf(nodeById.get(reply.target));
  const sum = element("p", "paths-sum");
  sum.dataset.testid = "paths-sum";
  Object.assign(sum.dataset, { sum: String(reply.sum), grad: String(reply.grad), complete: String(reply.complete), count: reply.count });
  if (reply.count === "0") {
    sum.textContent = t("ui.paths.none", { leaf, target });
    return [sum];
  }
  if (reply.complete) {
    sum.textContent = t("ui.paths.sum", { leaf, sum: compactText(reply.sum), grad: compactText(reply.grad) });
    return [sum];
  }
  const count = reply.count_exact ? groupedDigits(reply.count) : t("ui.paths.at_least", { count: "10^60" });
  sum.textContent = t("ui.paths.capped", { count, shown: reply.paths.length, leaf, grad: compactText(reply.grad) });
  const why = element("p", "paths-why", t("ui.paths.why"));
  why.dataset.testid = "paths-why";
  return [sum, why];
}

/** `svg`: the graph; `requestBody()`: the page's /api/graph body for the program shown. */
export function mountPaths({ svg, requestBody }) {
  registerPanel({
    id: "paths",
    title: t("ui.tab.paths"),
    mount(body) {
      const intro = element("p", "table-note", t("ui.paths.intro"));
      const label = element("label", "paths-pick", t("ui.paths.from"));
      const select = element("select");
      select.dataset.testid = "paths-leaf";
      label.append(" ", select);
      const list = element("ol", "paths-list");
      list.dataset.testid = "paths-list";
      const notes = element("div", "paths-notes");
      const error = element("p", "paths-error");
      error.hidden = true;
      body.append(intro, label, list, notes, error);
      let asked = 0; // the latest request wins
      let stale = true;

      async function load() {
        const trace = state.trace;
        if (!trace || !select.value) return;
        const request = ++asked;
        body.dataset.loading = "true";
        try {
          const reply = await postPaths({ ...requestBody(), leaf: select.value });
          if (request !== asked) return;
          light(svg, null);
          list.replaceChildren(...reply.paths.map((path) => pathItem(svg, path)));
          notes.replaceChildren(...summary(reply, trace));
          error.hidden = true;
        } catch (err) {
          if (request !== asked) return;
          error.textContent = err.detail?.message ?? String(err);
          error.hidden = false;
        } finally {
          if (request === asked) delete body.dataset.loading;
        }
      }

      function fillLeaves(trace) {
        const chosen = select.value;
        const leaves = trace.leaves.map((leaf) => leaf.id);
        if (leaves.join() !== [...select.options].map((o) => o.value).join()) {
          select.replaceChildren(...trace.leaves.map((leaf) => {
            const option = element("option", "", leaf.name);
            option.value = leaf.id;
            return option;
          }));
        }
        select.value = leaves.includes(chosen) ? chosen : leaves[0] ?? "";
      }

      select.addEventListener("change", () => load());
      // A hidden tab asks nothing: it loads when it is shown.
      new MutationObserver(() => {
        if (!body.hidden && stale) {
          stale = false;
          load();
        }
      }).observe(body, { attributes: true, attributeFilter: ["hidden"] });
      subscribe((s, changed) => {
        if (!changed.has("trace") || !s.trace) return;
        fillLeaves(s.trace);
        stale = body.hidden;
        if (!stale) load();
      });
    },
  });
}
