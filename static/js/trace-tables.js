// The trace tables under the transport: the topological sort (step, pop, what happens, stack
// after, sorted so far) and the propagation (step, node, grad, what happens). Rows are rebuilt
// only when the trace changes; a step change moves the "current" mark between two rows.
// Clicking a row (or Enter on its step button) jumps the timeline to that step.

import { factor } from "./explain.js";
import { compactText } from "./format.js";
import { registerPanel } from "./panels.js";
import { setStep, subscribe } from "./state.js";
import { frameOfStep, framesOf, topoStateAt, traceIndex } from "./timeline.js";

const SORT_ROWS_MAX = 600; // topoStateAt replays from the start: keep the table linear-ish
const reducedMotion = window.matchMedia?.("(prefers-reduced-motion: reduce)");

function cell(tag, text, className = "") {
  const el = document.createElement(tag);
  if (className) el.className = className;
  el.textContent = text;
  return el;
}

function nameOf(nodeById, id) {
  const node = nodeById.get(id);
  return node ? node.label || node.text || id : id;
}

/** A table whose rows are keyed by API step index, with a `mark(stepIndex)` that lights one. */
function createTable(body, { caption, headers, emptyText }) {
  const note = cell("p", "", "table-note");
  const table = document.createElement("table");
  table.className = "trace-table";
  const cap = cell("caption", caption, "visually-hidden");
  const head = document.createElement("thead");
  const headRow = document.createElement("tr");
  for (const h of headers) {
    const th = cell("th", h);
    th.scope = "col";
    headRow.append(th);
  }
  head.append(headRow);
  const tbody = document.createElement("tbody");
  table.append(cap, head, tbody);
  body.append(note, table);
  let rows = new Map();
  let current = null;
  let trace = null;

  tbody.addEventListener("click", (event) => {
    const row = event.target.closest("tr[data-step]");
    if (row && trace) setStep(frameOfStep(trace, Number(row.dataset.step)));
  });

  return {
    fill(newTrace, rowList, noteText) {
      trace = newTrace;
      rows = new Map();
      current = null;
      const fragment = document.createDocumentFragment();
      for (const { step, label, cells } of rowList) {
        const tr = document.createElement("tr");
        tr.dataset.step = String(step);
        const button = cell("button", label, "row-jump");
        button.type = "button";
        button.setAttribute("aria-label", `Go to step ${label}`);
        const first = document.createElement("td");
        first.append(button);
        tr.append(first, ...cells);
        rows.set(step, tr);
        fragment.append(tr);
      }
      tbody.replaceChildren(fragment);
      note.textContent = rowList.length === 0 ? emptyText : noteText ?? "";
      note.hidden = !note.textContent;
      table.hidden = rowList.length === 0;
    },
    mark(stepIndex) {
      const row = rows.get(stepIndex) ?? null;
      if (row === current) return;
      current?.classList.remove("current");
      current?.removeAttribute("aria-current");
      current = row;
      if (!row) return;
      row.classList.add("current");
      row.setAttribute("aria-current", "step");
      if (!body.hidden) row.scrollIntoView({ block: "nearest", behavior: reducedMotion?.matches ? "instant" : "smooth" });
    },
  };
}

function pairText(nodeById, [id, index]) {
  return `(${nameOf(nodeById, id)},${index})`;
}

function listText(items, limit = 14) {
  const shown = items.length > limit ? ["\u2026", ...items.slice(-limit)] : items;
  return `[${shown.join(", ")}]`;
}

function sortRows(trace) {
  const { nodeById } = traceIndex(trace);
  const rows = [];
  trace.steps.forEach((step, k) => {
    if (step.phase !== "topo" || rows.length >= SORT_ROWS_MAX) return;
    const { stack, sorted } = topoStateAt(trace, k);
    rows.push({
      step: k,
      label: step.action === "start" ? "start" : String(k),
      cells: [
        cell("td", step.pop ? pairText(nodeById, step.pop) : "(start)", "mono"),
        cell("td", step.narration ?? "", "what"),
        cell("td", listText(stack.map((e) => pairText(nodeById, e))), "mono stack"),
        cell("td", listText(sorted.map((id) => nameOf(nodeById, id))), "mono sorted"),
      ],
    });
  });
  return rows;
}

function propagationRows(trace) {
  const { nodeById } = traceIndex(trace);
  const rows = [];
  let number = 0;
  trace.steps.forEach((step, k) => {
    if (step.phase !== "seed" && step.phase !== "backward") return;
    const name = nameOf(nodeById, step.node);
    const node = nodeById.get(step.node);
    const what = document.createElement("td");
    what.className = "what";
    if (step.phase === "seed") {
      what.append(cell("div", `seed: grad[${name}] = 1`));
    } else if ((step.contributions ?? []).length === 0) {
      what.append(cell("div", node.kind === "const" ? "a constant: nothing to pass on" : `${name} is a leaf: nothing to pass on`));
    } else {
      for (const c of step.contributions) {
        const to = nameOf(nodeById, c.to);
        const sum = c.grad_after !== c.contribution ? `  (now ${compactText(c.grad_after)})` : "";
        what.append(cell("div", `grad[${to}] += ${factor(c.upstream)} \u00d7 ${factor(c.local)} = ${compactText(c.contribution)}${sum}`, "mono"));
      }
    }
    rows.push({
      step: k,
      label: step.phase === "seed" ? "seed" : String(++number),
      cells: [cell("td", name, "mono"), cell("td", compactText(step.grad), "mono grad"), what],
    });
  });
  return rows;
}

function mountTable(body, options, buildRows, noteFor) {
  const table = createTable(body, options);
  let filled = null;
  const latest = { trace: null, step: 0 };
  const refill = (s) => {
    filled = s.trace;
    table.fill(s.trace, buildRows(s.trace), noteFor(s.trace));
  };
  // Rows of a hidden tab are built when it is shown (big graphs: no work for unseen tables).
  new MutationObserver(() => {
    if (!body.hidden && filled !== latest.trace && latest.trace) {
      refill(latest);
      table.mark(currentStep(latest));
    }
  }).observe(body, { attributes: true, attributeFilter: ["hidden"] });
  subscribe((s, changed) => {
    latest.trace = s.trace;
    latest.step = s.step;
    if (!s.trace) return;
    if (changed.has("trace") && !body.hidden) refill(s);
    if ((changed.has("trace") || changed.has("step")) && filled === s.trace) table.mark(currentStep(s));
  });
}

function currentStep(s) {
  return framesOf(s.trace)[s.step]?.step ?? -1;
}

export function registerTraceTables() {
  registerPanel({
    id: "sort",
    title: "Sort trace",
    mount(body) {
      mountTable(body, {
        caption: "Topological sort, step by step",
        headers: ["Step", "Pop", "What happens", "Stack after", "Sorted so far"],
        emptyText: "This trace has no sort steps (the graph is too large to record them).",
      }, sortRows, (trace) => {
        const count = trace.steps.filter((s) => s.phase === "topo").length;
        return count > SORT_ROWS_MAX ? `Showing the first ${SORT_ROWS_MAX} of ${count} sort steps.` : "";
      });
    },
  });
  registerPanel({
    id: "propagation",
    title: "Propagation",
    mount(body) {
      mountTable(body, {
        caption: "Gradient propagation in reverse topological order",
        headers: ["Step", "Node", "grad", "What happens"],
        emptyText: "No backward steps.",
      }, propagationRows, () => "");
    },
  });
}
