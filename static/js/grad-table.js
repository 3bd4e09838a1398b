// The gradient table: every leaf and intermediate node with its final gradient, what that number
// means in words, and the server's numeric check (central differences) for the leaves. New values
// of the same graph rewrite the changed cells in place.

import { nameOf, passComplete } from "./explain.js";
import { flagNotes, flagsOf, flagsPresent, flagWords } from "./flag-words.js";
import { compactText, isFiniteValue } from "./format.js";
import { t } from "./i18n.js";
import { pageScope } from "./scope.js";
import { traceIndex } from "./timeline.js";

const STATUS_TEXT = { pass: "ui.check.pass", kink: "ui.check.kink", fail: "ui.check.fail", nonfinite: "ui.check.nonfinite", imprecise: "ui.check.imprecise" };

/** "if a increases by a small ε, f decreases by about 3ε". */
export function meaningOf(name, rootName, grad) {
  if (!isFiniteValue(grad)) return t("ui.meaning.not_finite", { name, root: rootName });
  if (grad === 0) return t("ui.meaning.zero", { root: rootName });
  const size = Math.abs(grad) === 1 ? "" : compactText(Math.abs(grad));
  return t(grad > 0 ? "ui.meaning.up" : "ui.meaning.down", { name, root: rootName, size });
}

function setText(el, text) {
  if (el.textContent !== text) el.textContent = text;
}

function setClass(el, className) {
  if (el.className !== className) el.className = className;
}

/** The rows of the table: `{id, className, cells: [[text, className]]}` per leaf and intermediate node. */
function rowsOf(trace) {
  const { nodeById } = traceIndex(trace);
  const rootName = nameOf(nodeById.get(trace.root));
  const checks = new Map(trace.gradcheck.results.map((r) => [r.id, r]));
  const leafIds = new Set(trace.leaves.map((l) => l.id));
  const nodes = [
    ...trace.leaves.map((l) => nodeById.get(l.id)),
    ...trace.nodes.filter((n) => n.kind === "op" && !leafIds.has(n.id) && n.id !== trace.root),
  ];
  return nodes.map((node) => {
    const check = checks.get(node.id);
    const name = nameOf(node);
    const flags = flagsOf(trace, node.id);
    return {
      id: node.id,
      flags: flags.join(" "),
      className: node.kind === "leaf" ? "leaf" : "intermediate",
      cells: [
        [name, "mono"],
        [compactText(node.grad), "mono grad"],
        [meaningOf(name, rootName, node.grad), "what"],
        [check ? compactText(check.numeric) : "\u2014", "mono"],
        [check ? (STATUS_TEXT[check.status] ? t(STATUS_TEXT[check.status]) : check.status) : node.kind === "leaf" ? t("ui.check.not_checked") : "\u2014", check ? `status status-${check.status}` : ""],
        [flagWords(flags), "flag"],
      ],
    };
  });
}

function footText(gradcheck) {
  const { checked, total, capped, eps_rule: eps } = gradcheck;
  const which = capped ? t("ui.gradients.checked_some", { checked, total }) : t("ui.gradients.checked_all", { total });
  return t("ui.gradients.foot", { eps, checked: which });
}

/**
 * The table's elements, made once; `draw(s)` shows the state's trace. New values of the same
 * nodes rewrite only the cell texts that changed, in place (an open table keeps its scroll
 * position while a slider moves); other node lists rebuild the rows. `store`: its "Go to the
 * end" moves that store's timeline.
 */
function createGradTable(body, { setStep, stepCount }) {
  const note = document.createElement("p");
  note.className = "table-note";
  note.textContent = t("ui.gradients.pending", { toggle: t("ui.toggles.final_grads") });
  const go = document.createElement("button");
  go.type = "button";
  go.textContent = t("ui.gradients.go_end");
  go.addEventListener("click", () => setStep(stepCount() - 1));
  note.append(" ", go);

  const table = document.createElement("table");
  table.className = "trace-table grad-table";
  const head = document.createElement("thead");
  const headRow = document.createElement("tr");
  for (const h of ["ui.table.node", "grad", "ui.gradients.meaning", "ui.gradients.numeric", "ui.gradients.check", "ui.gradients.flag"]) {
    const th = document.createElement("th");
    th.scope = "col";
    th.textContent = h.startsWith("ui.") ? t(h) : h; // grad: the notation
    headRow.append(th);
  }
  head.append(headRow);
  const tbody = document.createElement("tbody");
  table.append(head, tbody);
  const foot = document.createElement("p");
  foot.className = "table-note";
  let shownIds = [];
  let notes = null; // the sentences of the flags shown, under the table
  let flagNotesShown = "";

  const show = (...parts) => {
    if (parts.length !== body.children.length || parts.some((part, i) => body.children[i] !== part)) body.replaceChildren(...parts);
  };

  const writeRow = (tr, row) => {
    setClass(tr, row.className);
    if (tr.dataset.flags !== row.flags) tr.dataset.flags = row.flags;
    row.cells.forEach(([text, className], i) => {
      setText(tr.cells[i], text);
      setClass(tr.cells[i], className);
    });
  };

  return function draw(s) {
    const { trace } = s;
    if (!trace) {
      show();
      return;
    }
    if (!s.finalGrads && !passComplete(trace, s.step)) {
      show(note);
      return;
    }
    const rows = rowsOf(trace);
    const same = rows.length === shownIds.length && rows.every((row, i) => row.id === shownIds[i]);
    if (same) {
      rows.forEach((row, i) => writeRow(tbody.rows[i], row));
    } else {
      tbody.replaceChildren(...rows.map((row) => {
        const tr = document.createElement("tr");
        tr.dataset.nodeId = row.id;
        tr.append(...row.cells.map(() => document.createElement("td")));
        writeRow(tr, row);
        return tr;
      }));
      shownIds = rows.map((row) => row.id);
    }
    setText(foot, footText(trace.gradcheck));
    const present = flagsPresent(trace);
    if (present.join() !== flagNotesShown) {
      flagNotesShown = present.join();
      notes = present.length ? flagNotes(present, "grad-flag-notes") : null;
    }
    show(...[table, foot, notes].filter(Boolean));
  };
}

export function registerGradTable(scope = pageScope) {
  const { state, subscribe } = scope.store;
  scope.panels.register({
    id: "gradients",
    title: t("ui.tab.gradients"),
    mount(body) {
      const draw = createGradTable(body, scope.store);
      let complete = null;
      let stale = false;
      // A hidden tab is drawn when it is shown (big graphs: no work for an unseen table).
      new MutationObserver(() => {
        if (body.hidden || !stale) return;
        stale = false;
        draw(state);
      }).observe(body, { attributes: true, attributeFilter: ["hidden"] });
      subscribe((s, changed) => {
        if (!s.trace) return;
        const now = s.finalGrads || passComplete(s.trace, s.step);
        // Step changes only matter when they cross "the pass is over".
        if (changed.has("trace") || changed.has("finalGrads") || now !== complete) {
          stale = body.hidden;
          if (!stale) draw(s);
        }
        complete = now;
      });
    },
  });
}
