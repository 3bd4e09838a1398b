// The gradient table: every leaf and intermediate node with its final gradient, what that number
// means in words, and the server's numeric check (central differences) for the leaves.

import { nameOf, passComplete } from "./explain.js";
import { compactText, isFiniteValue } from "./format.js";
import { registerPanel } from "./panels.js";
import { setStep, state, stepCount, subscribe } from "./state.js";
import { traceIndex } from "./timeline.js";

const STATUS_TEXT = { pass: "\u2713 pass", kink: "\u223f kink", fail: "\u2717 fail", nonfinite: "\u221e nonfinite", imprecise: "\u2248 imprecise" };

/** "if a increases by a small ε, f decreases by about 3ε". */
export function meaningOf(name, rootName, grad) {
  if (!isFiniteValue(grad)) return `not finite here: a small change of ${name} has no first-order effect on ${rootName} we can name`;
  if (grad === 0) return `does not change ${rootName}, to first order`;
  const size = Math.abs(grad) === 1 ? "" : compactText(Math.abs(grad));
  const direction = grad > 0 ? "increases" : "decreases";
  return `if ${name} increases by a small \u03b5, ${rootName} ${direction} by about ${size}\u03b5`;
}

function cell(text, className = "") {
  const td = document.createElement("td");
  if (className) td.className = className;
  td.textContent = text;
  return td;
}

function draw(body, s) {
  const { trace } = s;
  const parts = [];
  if (!trace) {
    body.replaceChildren();
    return;
  }
  if (!s.finalGrads && !passComplete(trace, s.step)) {
    const note = document.createElement("p");
    note.className = "table-note";
    note.textContent = "Run the backward pass to fill this table (or switch on \u201cshow final gradients\u201d).";
    const go = document.createElement("button");
    go.type = "button";
    go.textContent = "Go to the end";
    go.addEventListener("click", () => setStep(stepCount() - 1));
    note.append(" ", go);
    body.replaceChildren(note);
    return;
  }
  const { nodeById } = traceIndex(trace);
  const root = nodeById.get(trace.root);
  const rootName = nameOf(root);
  const checks = new Map(trace.gradcheck.results.map((r) => [r.id, r]));
  const leafIds = new Set(trace.leaves.map((l) => l.id));
  const nodes = [
    ...trace.leaves.map((l) => nodeById.get(l.id)),
    ...trace.nodes.filter((n) => n.kind === "op" && !leafIds.has(n.id) && n.id !== trace.root),
  ];
  const table = document.createElement("table");
  table.className = "trace-table grad-table";
  const head = document.createElement("thead");
  const headRow = document.createElement("tr");
  for (const h of ["Node", "grad", "Meaning", "Numeric", "Check"]) {
    const th = document.createElement("th");
    th.scope = "col";
    th.textContent = h;
    headRow.append(th);
  }
  head.append(headRow);
  const tbody = document.createElement("tbody");
  for (const node of nodes) {
    const check = checks.get(node.id);
    const name = nameOf(node);
    const tr = document.createElement("tr");
    tr.dataset.nodeId = node.id;
    tr.className = node.kind === "leaf" ? "leaf" : "intermediate";
    tr.append(
      cell(name, "mono"),
      cell(compactText(node.grad), "mono grad"),
      cell(meaningOf(name, rootName, node.grad), "what"),
      cell(check ? compactText(check.numeric) : "\u2014", "mono"),
      cell(check ? STATUS_TEXT[check.status] ?? check.status : node.kind === "leaf" ? "not checked" : "\u2014", check ? `status status-${check.status}` : ""),
    );
    tbody.append(tr);
  }
  table.append(head, tbody);
  parts.push(table);
  const { checked, total, capped, eps_rule: eps } = trace.gradcheck;
  const foot = document.createElement("p");
  foot.className = "table-note";
  foot.textContent = `Numeric check: central difference with \u03b5 = ${eps}; ${capped ? `checked ${checked} of ${total} leaves` : `all ${total} leaves checked`}. kink: the function is not smooth there (e.g. relu at 0); imprecise: the values are so large that rounding hides the difference.`;
  parts.push(foot);
  body.replaceChildren(...parts);
}

export function registerGradTable() {
  registerPanel({
    id: "gradients",
    title: "Gradients + check",
    mount(body) {
      let complete = null;
      let stale = false;
      // A hidden tab is drawn when it is shown (big graphs: no work for an unseen table).
      new MutationObserver(() => {
        if (body.hidden || !stale) return;
        stale = false;
        draw(body, state);
      }).observe(body, { attributes: true, attributeFilter: ["hidden"] });
      subscribe((s, changed) => {
        if (!s.trace) return;
        const now = s.finalGrads || passComplete(s.trace, s.step);
        // Step changes only matter when they cross "the pass is over".
        if (changed.has("trace") || changed.has("finalGrads") || now !== complete) {
          stale = body.hidden;
          if (!stale) draw(body, s);
        }
        complete = now;
      });
    },
  });
}
