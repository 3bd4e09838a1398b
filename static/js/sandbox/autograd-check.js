// Check my autograd: when the learner's code (run in the sandbox: sandbox/sandbox.js) called backward()
// on the Value shown, every `.grad` its own implementation left is compared with the engine's for
// the same graph (the trace, the server's numbers). Agreement is said with the number of nodes
// checked; each disagreement is listed and marked on its card with both numbers, and the cause
// is named where it is recognisable, its nodes ringed:
//   forward     the code's forward value differs at an op (the gradients follow from it);
//   seed        backward() did not start the result's gradient at 1;
//   no_backward an op's `_backward` was never set (the runner saw it keep the leaves' default);
//   not_reset   nodes already held gradients when backward() began (no reset since an earlier one);
//   overwrite   every gradient is one of the contributions it received, not their sum: `=`
//               instead of `+=` (the server's overwrite variant is asked whether it reproduces them);
//   local       every inconsistency sits under one op type: its local derivative is wrong.
// When the runner diagnosed the learner's code (`result.check`, sandbox/check.py), its cause is
// said instead: the learner's method and line (a button selects the line in the editor), what
// their local derivative was, a wrong forward value even where every gradient agrees, a visit
// order (not reversed, recursive, no sort) with a button that opens the visit-order lab.
// Where every gradient under the result is about 0 (a saturated tanh), they agree whatever the code
// does: the runner replays each op all the same, and the check says so (`data-vanished`).
// The page contract: `[data-testid=autograd-check]` with `data-status` ("agree" | "disagree" |
// "stale" once a slider moved), `data-cause`, `data-vanished`, and one `li[data-node][data-theirs][data-ours]`
// per wrong node. On the graph the check is a mark (graph/marks.js): it owns its layer
// (`g.layer-check`: both numbers over each wrong card, a ring round each concerned one)
// and the cards' `data-check` attribute ("wrong", "ring", "wrong ring").

import { postGraph } from "../core/api.js";
import { h } from "../core/dom.js";
import { fontSize } from "../graph/geometry.js";
import { compactText, countText, fullText } from "../core/format.js";
import { t } from "../core/i18n.js";
import { setLab } from "../labs/panel.js";
import { nodeName } from "../core/names.js";
import { svgElement } from "../core/svg.js";
import { offsetOf } from "../controls/editor.js";

// The panel is redrawn when the trace, the run or the values change; a step changes none of it.
const REDRAW_KEYS = ["trace", "sandbox", "values"];

/** Two gradients agree when they differ by rounding only (the code sums in another order). */
export function near(a, b) {
  const [x, y] = [Number(a), Number(b)];
  if (Number.isNaN(x) || Number.isNaN(y)) return Number.isNaN(x) && Number.isNaN(y);
  if (!Number.isFinite(x) || !Number.isFinite(y)) return x === y;
  return Math.abs(x - y) <= 1e-10 + 1e-7 * Math.max(Math.abs(x), Math.abs(y));
}

/**
 * The trace node of each of the reader's nodes (`nodes`: the runner's list, root last, operands
 * by index), found by walking both graphs from the root, operand by operand: null when they differ.
 */
export function matchNodes(trace, nodes) {
  const inputs = new Map();
  for (const edge of trace.edges) {
    if (!inputs.has(edge.target)) inputs.set(edge.target, []);
    inputs.get(edge.target)[edge.index] = edge;
  }
  const ids = new Array(nodes.length).fill(null);
  const stack = [[nodes.length - 1, trace.root]];
  while (stack.length) {
    const [i, id] = stack.pop();
    if (ids[i] !== null) {
      if (ids[i] !== id) return null;
      continue;
    }
    ids[i] = id;
    const edges = inputs.get(id) ?? [];
    if (edges.length !== nodes[i].inputs.length) return null;
    nodes[i].inputs.forEach((j, k) => stack.push([j, edges[k].source]));
  }
  return ids;
}

/** The engine's gradient of a trace node (the correct one while a variant runs). */
const oursOf = (node) => node.correct_grad ?? node.grad;

/**
 * The comparison of a run's gradients with the trace's: {checked, wrong: [{id, name, theirs,
 * ours}], cause: {kind, ring: [ids], ...} | null}, or null when there is nothing to check.
 */
export function compareGrads(trace, result) {
  if (!result?.backward || !trace) return null;
  const ids = matchNodes(trace, result.nodes);
  if (!ids) return null;
  const byId = new Map(trace.nodes.map((n) => [n.id, n]));
  const theirs = new Map();
  const rows = [];
  result.nodes.forEach((node, i) => {
    const traced = byId.get(ids[i]);
    if (!traced || traced.kind === "const" || theirs.has(traced.id)) return;
    theirs.set(traced.id, node.grad);
    rows.push({ i, id: traced.id, node, traced, name: node.label || nodeName(traced) });
  });
  const wrong = rows.filter((r) => !near(r.node.grad, oursOf(r.traced)))
    .map((r) => ({ id: r.id, name: r.name, theirs: r.node.grad, ours: oursOf(r.traced) }));
  const facts = { trace, result, ids, byId, theirs, rows };
  // The runner's diagnosis (sandbox/check.py) names the learner's method and line, and sees a
  // wrong forward value that leaves every gradient consistent; the page's own is the fallback.
  const coded = codeCause(result.check?.cause, ids, byId, wrong);
  // Every gradient under the result about 0 (sandbox/check.py `_vanished`): they agree whatever
  // the code does; the runner's replay of each op says what the numbers cannot.
  const vanished = !wrong.length && Boolean(result.check?.vanished);
  return { checked: rows.length, wrong, cause: coded ?? (wrong.length ? diagnose(facts, wrong) : null), vanished };
}

/** The runner's cause as the page shows it: its node (index) and nodes ringed by trace id. */
function codeCause(cause, ids, byId, wrong) {
  if (!cause) return null;
  const idOf = (i) => (Number.isInteger(i) ? ids[i] : null);
  const ring = [idOf(cause.node), ...(cause.nodes ?? []).map(idOf)].filter((id) => id && byId.has(id));
  const node = byId.get(idOf(cause.node));
  return {
    ...cause, kind: cause.kind, fromCode: true, count: cause.count ?? wrong.length,
    ring: ring.length ? [...new Set(ring)] : wrong.map((w) => w.id),
    name: node ? nodeName(node) : null,
  };
}

/** Per node, the contributions the code's own upstream gradients would pass it (trace locals). */
function contributions(trace, theirs) {
  const into = new Map();
  for (const edge of trace.edges) {
    if (!into.has(edge.source)) into.set(edge.source, []);
    into.get(edge.source).push({ edge, value: Number(edge.local_grad) * Number(theirs.get(edge.target)) });
  }
  return into;
}

function diagnose({ trace, result, ids, byId, theirs, rows }, wrong) {
  const forward = rows.find((r) => r.traced.kind === "op" && !near(r.node.data, r.traced.data));
  if (forward) {
    return { kind: "forward", ring: [forward.id], op: forward.traced.op, name: forward.name, theirs: forward.node.data, ours: forward.traced.data };
  }
  const root = byId.get(trace.root);
  if (!near(theirs.get(root.id), 1)) return { kind: "seed", ring: [root.id], theirs: theirs.get(root.id) };
  const missing = rows.filter((r) => r.node.no_backward);
  if (missing.length) return { kind: "no_backward", ring: missing.map((r) => r.id), op: missing[0].traced.op, name: missing[0].name };
  const stale = (result.backward.stale ?? []).map((i) => ids[i]).filter((id) => id && theirs.has(id));
  if (stale.length) return { kind: "not_reset", ring: stale, count: stale.length, line: result.backward.line };
  const into = contributions(trace, theirs);
  const checked = rows.filter((r) => r.id !== trace.root);
  const sumOf = (r) => (into.get(r.id) ?? []).reduce((sum, c) => sum + c.value, 0);
  const inconsistent = checked.filter((r) => !near(r.node.grad, sumOf(r)));
  const assigned = checked.every((r) => (into.get(r.id) ?? []).some((c) => near(r.node.grad, c.value)));
  if (assigned && inconsistent.some((r) => (into.get(r.id) ?? []).length > 1)) {
    return { kind: "overwrite", ring: inconsistent.map((r) => r.id), count: wrong.length, exact: null };
  }
  return localCause(inconsistent, into, byId, wrong) ?? { kind: "unknown", ring: inconsistent.map((r) => r.id) };
}

/** One op type under every inconsistent gradient: its local derivative is the wrong one. */
function localCause(inconsistent, into, byId, wrong) {
  if (!inconsistent.length) return null;
  const opsUnder = (r) => new Set((into.get(r.id) ?? []).map((c) => byId.get(c.edge.target).op));
  let common = opsUnder(inconsistent[0]);
  for (const r of inconsistent.slice(1)) common = new Set([...common].filter((op) => opsUnder(r).has(op)));
  const [op] = [...common].sort();
  if (op === undefined) return null;
  const ring = new Set();
  let example = null;
  for (const r of inconsistent) {
    for (const c of into.get(r.id) ?? []) {
      const consumer = byId.get(c.edge.target);
      if (consumer.op !== op) continue;
      ring.add(consumer.id);
      const upstream = Number(c.value) / Number(c.edge.local_grad);
      if (!example && into.get(r.id).length === 1 && upstream !== 0) {
        example = { name: r.name, theirs: Number(r.node.grad) / upstream, ours: c.edge.local_grad };
      }
    }
  }
  return { kind: "local", op, ring: [...ring], example, count: wrong.length };
}

/** What the learner's local derivative was, when the numbers say so (sandbox/check.py `did`). */
const DID = { input: "ui.check.did.input", output: "ui.check.did.output", one: "ui.check.did.one" };

/** The visit orders the runner recognises (sandbox/check.py ORDERS), as the page says them. */
const ORDER_SAYS = {
  not_reversed: "ui.check.code.order.not_reversed",
  recursive: "ui.check.code.order.recursive",
  no_sort: "ui.check.code.order.no_sort",
};

/** The sentence of a cause the runner found in the learner's code: their method and line. */
function codeCauseText(cause) {
  const at = { method: cause.method ?? cause.op, line: cause.line ?? "?", op: cause.op, name: cause.name ?? "" };
  const numbers = { theirs: compactText(cause.theirs), ours: compactText(cause.ours) };
  let text;
  switch (cause.kind) {
    case "local":
      text = t("ui.check.code.local", { ...at, ...numbers });
      if (DID[cause.did]) text += " " + t(DID[cause.did]);
      break;
    case "forward":
      text = cause.probe
        ? t("ui.check.code.forward_probe", { ...at, ...numbers, probe: cause.probe })
        : t("ui.check.code.forward", { ...at, ...numbers });
      break;
    case "overwrite":
      text = t("ui.check.code.overwrite", at);
      if (cause.exact === true) text += " " + t("ui.check.code.overwrite_exact", { count: countText(cause.count) });
      break;
    case "no_backward":
      text = t("ui.check.code.no_backward", at);
      break;
    case "seed":
      text = t("ui.check.code.seed", { ...at, theirs: compactText(cause.theirs) });
      break;
    case "order":
      text = t(ORDER_SAYS[cause.order] ?? "ui.check.code.order.no_sort", at);
      break;
    default:
      return null;
  }
  if (cause.used_by) text += " " + t("ui.check.code.used_by", { method: cause.used_by.method, line: cause.used_by.line });
  return text;
}

/** The sentence of a cause, in the page's language. */
function causeText(cause) {
  const opName = (op) => (op === "**" ? "**" : op);
  if (cause.fromCode) {
    const said = codeCauseText(cause);
    if (said) return said;
  }
  switch (cause.kind) {
    case "forward":
      return t("ui.check.cause.forward", { op: opName(cause.op), name: cause.name, theirs: compactText(cause.theirs), ours: compactText(cause.ours) });
    case "seed":
      return t("ui.check.cause.seed", { theirs: compactText(cause.theirs) });
    case "no_backward":
      return t("ui.check.cause.no_backward", { op: opName(cause.op), name: cause.name });
    case "not_reset":
      return cause.line
        ? t("ui.check.cause.not_reset_line", { count: countText(cause.count), line: cause.line })
        : t("ui.check.cause.not_reset", { count: countText(cause.count) });
    case "overwrite":
      if (cause.exact === true) return t("ui.check.cause.overwrite_exact", { count: countText(cause.count) });
      return t("ui.check.cause.overwrite");
    case "local":
      return cause.example
        ? t("ui.check.cause.local_example", { op: opName(cause.op), name: cause.example.name, theirs: compactText(cause.example.theirs), ours: compactText(cause.example.ours) })
        : t("ui.check.cause.local", { op: opName(cause.op) });
    default:
      return t("ui.check.cause.unknown");
  }
}

/** The check's element: what agrees, what does not, why, and the nodes it concerns. */
function renderCheck(slot, view, { onOpenLab, onGoToLine }) {
  if (view?.otherRoot) { // a Value other than the one backward() was called on is shown
    slot.replaceChildren(h("p", { class: "check-note", "data-testid": "check-other-root", text: t("ui.check.other_root", { name: view.otherRoot }) }));
    return;
  }
  if (!view) {
    slot.replaceChildren();
    return;
  }
  const { report, status, note } = view;
  const box = h("section", {
    class: `autograd-check ${status}`, "data-testid": "autograd-check", "data-status": status,
    "data-cause": report.cause?.kind ?? "", "data-checked": report.checked,
    // overwrite: whether the server's = variant gives exactly the code's numbers (asked once).
    "data-exact": report.cause?.kind === "overwrite" ? String(report.cause.exact) : null,
    "data-vanished": String(report.vanished),
  });
  box.append(h("h3", { text: t("ui.check.title") }));
  if (note) box.append(h("p", { class: "check-note", text: note }));
  const count = countText(report.checked);
  box.append(h("p", { class: "check-summary", text: report.wrong.length
    ? t("ui.check.disagree", { wrong: countText(report.wrong.length), count })
    : report.cause ? t(report.vanished ? "ui.check.vanished_cause" : "ui.check.agree_wrong_graph", { count })
      : t("ui.check.agree", { count }) }));
  if (report.vanished && !report.cause) {
    box.append(h("p", { class: "check-vanished", "data-testid": "check-vanished", text: t("ui.check.vanished") }));
  }
  if (report.cause) {
    box.append(h("p", { class: "check-cause", "data-testid": "check-cause", "data-method": report.cause.method ?? null, "data-line": report.cause.line ?? null, text: causeText(report.cause) }));
    const actions = [];
    if (report.cause.fromCode && report.cause.line) {
      actions.push(h("button", { type: "button", class: "check-line", "data-testid": "check-line", "data-line": report.cause.line, text: t("ui.check.code.go_to_line", { line: report.cause.line }), onclick: () => onGoToLine(report.cause.line) }));
    }
    if (report.cause.kind === "overwrite") {
      actions.push(h("button", { type: "button", class: "check-open-lab", "data-testid": "check-open-lab", text: t("ui.check.open_lab"), onclick: () => onOpenLab("overwrite") }));
    }
    if (report.cause.kind === "order") {
      actions.push(h("button", { type: "button", class: "check-open-lab", "data-testid": "check-open-order", text: t("ui.check.code.open_order"), onclick: () => onOpenLab("order") }));
    }
    if (actions.length) box.append(h("p", { class: "check-actions" }, ...actions));
  }
  if (report.wrong.length) {
    box.append(h("ul", { class: "check-wrong", tabindex: "0" }, ...report.wrong.map((w) => h("li", { // it may scroll: by keys too
      "data-node": w.name, "data-node-id": w.id, "data-theirs": fullText(w.theirs), "data-ours": fullText(w.ours),
      text: t("ui.check.item", { name: w.name, theirs: compactText(w.theirs), ours: compactText(w.ours) }),
    }))));
  }
  slot.replaceChildren(box);
}

/**
 * Both numbers in a pill standing on the card's top border (in the gap between stacked cards,
 * over no other card, and off the card's name: a pill wider than its card would hide it), sized
 * from its rendered text.
 */
function numbersPill(wrong, node, fs) {
  const pill = svgElement("g", { transform: `translate(${node.width / 2},${-fs * 0.75 + 1})` }, "check-numbers");
  const label = svgElement("text", { "font-size": fs, "text-anchor": "middle", "dominant-baseline": "central" });
  label.textContent = t("ui.check.mark", { theirs: compactText(wrong.theirs), ours: compactText(wrong.ours) });
  const back = svgElement("rect", { y: -fs * 0.75, height: fs * 1.5, rx: fs * 0.75 });
  pill.append(back, label);
  queueMicrotask(() => { // once in the document, where text has a length
    const width = (label.getComputedTextLength?.() || label.textContent.length * fs * 0.6) + fs;
    back.setAttribute("x", -width / 2);
    back.setAttribute("width", width);
  });
  return pill;
}

/** The elements of one card's marks, placed over it: its ring and the pill with both numbers. */
function cardMarks(node, wrong, ringed) {
  const g = svgElement("g", { "data-node-id": node.id, transform: `translate(${node.x - node.width / 2},${node.y - node.height / 2})` }, "check-mark");
  const fs = fontSize(node); // the card's own numbers' size: as readable as they are (issue 41)
  if (ringed) g.append(svgElement("rect", { x: -6, y: -6, width: node.width + 12, height: node.height + 12, rx: 10 }, "check-ring"));
  if (wrong) g.append(numbersPill(wrong, node, fs));
  return g;
}

/** Select line `line` of the editor (`[data-testid=source]`) and scroll it into view. */
function goToLine(line) {
  const editor = document.querySelector("[data-testid=source]");
  if (!editor) return;
  const start = offsetOf(editor.value, line, 1);
  const end = editor.value.indexOf("\n", start);
  editor.focus();
  editor.setSelectionRange(start, end === -1 ? editor.value.length : end);
  const lineHeight = parseFloat(getComputedStyle(editor).lineHeight) || 18;
  editor.scrollTop = Math.max(0, (line - 3) * lineHeight);
}

/** The check's mark (graph/marks.js), drawing `reportOf(state)`: the report to mark, or null. */
function checkMark(reportOf) {
  return {
    name: "check",
    keys: ["sandbox", "values"],
    owns: { card: ["data-check"] },
    layer: "over",
    render({ trace, state }, layer) {
      const report = trace ? reportOf(state) : null;
      const wrong = new Map((report?.wrong ?? []).map((w) => [w.id, w]));
      const ring = new Set(report?.cause?.ring ?? []);
      const cards = new Map();
      const marks = [];
      for (const node of report ? trace.nodes : []) {
        const flags = [wrong.has(node.id) ? "wrong" : "", ring.has(node.id) ? "ring" : ""].filter(Boolean).join(" ");
        if (!flags) continue;
        cards.set(node.id, { "data-check": flags });
        marks.push(cardMarks(node, wrong.get(node.id), ring.has(node.id)));
      }
      layer.replaceChildren(...marks);
      return { cards };
    },
  };
}

/**
 * Mount the check on `scope`: its box inside the sandbox panel (`panel`'s `[data-check-slot]`,
 * redrawn with the panel) and its mark on `graph`'s marks.
 */
export function mountAutogradCheck({ panel, graph }, scope) {
  const { state, subscribe, update } = scope.store;
  const exactness = new Map(); // program source → whether the = variant gives their numbers
  let last = { trace: undefined, sandbox: undefined, values: undefined, view: null };

  async function askOverwrite(source, result) {
    exactness.set(source, null);
    try {
      const variant = await postGraph({ source, mode: "overwrite" });
      const ids = matchNodes(variant, result.nodes);
      const byId = new Map(variant.nodes.map((n) => [n.id, n]));
      exactness.set(source, Boolean(ids) && result.nodes.every((node, i) => byId.get(ids[i])?.kind === "const" || near(node.grad, byId.get(ids[i])?.grad)));
    } catch {
      exactness.set(source, false);
    }
    update({ sandbox: { ...state.sandbox } }); // draw again with the answer
  }

  /** What the check shows in state `s` (computed once per trace, run and values). */
  function viewOf(s) {
    if (last.trace === s.trace && last.sandbox === s.sandbox && last.values === s.values) return last.view;
    const run = s.sandbox;
    const result = run?.status === "done" && run.code === s.source ? run.result : null;
    const program = result?.program.source;
    const report = result && s.trace?.source === program ? compareGrads(s.trace, result) : null;
    if (report?.cause?.kind === "overwrite") {
      report.cause.exact = exactness.get(program) ?? null;
      if (!exactness.has(program)) askOverwrite(program, result);
    }
    const moved = Object.keys(s.values).length > 0;
    const view = report ? {
      report, status: moved ? "stale" : report.wrong.length || report.cause ? "disagree" : "agree",
      note: moved ? t("ui.check.values_moved") : null,
    } : result?.backward_root ? { otherRoot: result.backward_root } : null;
    last = { trace: s.trace, sandbox: s.sandbox, values: s.values, view };
    return view;
  }

  graph.marks.register(checkMark((s) => {
    const view = viewOf(s);
    return view?.report && view.status !== "stale" ? view.report : null;
  }));
  subscribe((s, changed) => {
    if (!REDRAW_KEYS.some((k) => changed.has(k))) return;
    const slot = panel.querySelector("[data-check-slot]");
    if (slot) renderCheck(slot, viewOf(s), { onOpenLab: (lab) => setLab(scope.store, lab), onGoToLine: goToLine });
  });
}
