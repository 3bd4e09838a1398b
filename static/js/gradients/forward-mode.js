// Forward mode beside reverse mode (state.pass, state.wrt: the request's `pass` and `wrt`): a
// Reverse | Forward switch and a leaf picker in the sidebar, under the program (not in the graph
// pane, whose room the fitted view needs); in forward mode the timeline
// carries each node's tangent ∂node/∂wrt left to right (the cards' grad row, core/frames.js). A counter
// shows the cost: forward mode needs one pass per leaf, reverse mode one pass for all, each pass
// one multiply-add per edge. "Run forward for every leaf" plays the passes one after another
// (state.everyLeaf) and ends on a table of ∂root/∂leaf beside the backward pass's gradients.
//
// Owner of: the sidebar's pass bar (switch, picker, counter, button, the every-leaf table).

import { h, setHidden, setText, toggleSwitch } from "../core/dom.js";
import { compactText } from "../core/format.js";
import { traceIndex } from "../core/frames.js";
import { t } from "../core/i18n.js";
import { nodeName } from "../core/names.js";

/** The counter's numbers for `s`: {pass, passes, leaves, edges, madds}. */
export function passCost(s) {
  const trace = s.trace;
  const leaves = trace?.leaves.length ?? 0;
  const edges = trace?.edges.length ?? 0;
  if (s.pass !== "forward") return { pass: "reverse", passes: 1, leaves, edges, madds: edges };
  const passes = s.everyLeaf ? Object.keys(s.everyLeaf.done).length + (s.everyLeaf.finished ? 0 : 1) : 1;
  return { pass: "forward", passes, leaves, edges, madds: passes * edges };
}

function writeCounter(counter, s) {
  const cost = passCost(s);
  for (const [key, value] of Object.entries(cost)) if (counter.dataset[key] !== String(value)) counter.dataset[key] = String(value);
  const key = cost.pass === "forward" ? "ui.pass.counter_forward" : "ui.pass.counter_reverse";
  setText(counter, t(key, cost));
}

/** The every-leaf run's table: ∂root/∂leaf from each forward pass beside grad[leaf] from one backward pass. */
function resultTable(trace, done) {
  const { nodeById } = traceIndex(trace);
  const root = nodeName(nodeById.get(trace.root));
  const rows = trace.leaves.map((leaf) => {
    const tangent = done[leaf.id];
    const grad = nodeById.get(leaf.id).grad;
    return h("tr", { "data-leaf": leaf.name, "data-tangent": String(tangent), "data-grad": String(grad), "data-same": String(Object.is(tangent, grad) || Math.abs(tangent - grad) <= 1e-12 * Math.max(1, Math.abs(grad))) },
      h("td", { text: leaf.name }), h("td", { class: "mono", text: compactText(tangent) }), h("td", { class: "mono", text: compactText(grad) }));
  });
  const head = h("tr", {}, ...[t("ui.pass.leaf"), t("ui.pass.forward_column", { root }), t("ui.pass.backward_column", { root })].map((text) => h("th", { scope: "col", text })));
  return h("table", { class: "trace-table every-leaf-table", "data-testid": "every-leaf-table" }, h("thead", {}, head), h("tbody", {}, ...rows));
}

/** The bar's elements, put before `leaves` (the sidebar's section of sliders). */
function passBar(leaves, { onSwitch, onPick, onEvery }) {
  const toggle = toggleSwitch({ off: t("ui.pass.reverse"), on: t("ui.pass.forward"), label: t("ui.pass.label"), testId: "pass-switch", onChange: onSwitch });
  const picker = h("select", { "data-testid": "wrt", "aria-label": t("ui.pass.wrt"), onchange: (event) => onPick(event.target.value) });
  const pick = h("label", { class: "pass-wrt" }, t("ui.pass.wrt"), " ", picker);
  const every = h("button", { type: "button", class: "ghost", "data-testid": "every-leaf", text: t("ui.pass.every_leaf"), onclick: onEvery });
  const counter = h("span", { class: "pass-counter", "data-testid": "pass-counter", role: "status" });
  const result = h("div", { class: "every-leaf-result", "data-testid": "every-leaf-result" });
  result.hidden = true;
  const bar = h("section", { class: "pass-bar", "data-testid": "pass-bar", "aria-label": t("ui.pass.label") }, toggle.element, pick, every, counter, result);
  leaves.before(bar);
  return { toggle, picker, pick, every, counter, result };
}

function fillPicker(picker, trace, wrt) {
  const ids = trace.leaves.map((leaf) => leaf.name).join();
  if (picker.dataset.leaves !== ids) {
    picker.dataset.leaves = ids;
    picker.replaceChildren(...trace.leaves.map((leaf) => h("option", { value: leaf.name, text: leaf.name })));
  }
  if (picker.value !== wrt) picker.value = wrt;
}

/** The next leaf of the every-leaf run after the pass of `trace` ended, or null when it was the last. */
function nextLeaf(trace, done) {
  return trace.leaves.find((leaf) => !(leaf.id in done)) ?? null;
}

/**
 * Forward mode's controls on `scope`, in the sidebar before its `leaves`. `recompute(meta)`: the page's new
 * trace for the state (main.js).
 */
export function mountForwardMode({ leaves }, scope) {
  const { state, subscribe, update, jumpTo, stepCount } = scope.store;
  const bar = passBar(leaves, {
    onSwitch: (on) => update({ pass: on ? "forward" : "reverse", wrt: state.wrt || (state.trace?.leaves[0]?.name ?? ""), everyLeaf: null }),
    onPick: (name) => update({ wrt: name, everyLeaf: null }),
    onEvery: () => {
      // Before any trace has come (a lesson loading), the run starts on the first one to come.
      const first = state.trace?.leaves[0];
      update({ pass: "forward", ...(first ? { wrt: first.name } : {}), everyLeaf: { done: {}, finished: false }, playing: false });
      startPass();
    },
  });

  // A pass of the every-leaf run is due until it is seen stepping on from where it started:
  // another subscriber may stop the player when the leaf's trace arrives, after startPass
  // started it, and seeing it merely playing first (then stopped) left the run stalled.
  let due = false;
  let startedAt = -1;

  function startPass() {
    due = true;
    const trace = state.trace;
    if (!state.everyLeaf || trace?.pass !== "forward" || trace.leaves.find((leaf) => leaf.id === trace.wrt)?.name !== state.wrt) return;
    jumpTo("tangent");
    startedAt = state.step;
    update({ playing: true });
  }

  /** The pass shown has ended: keep its ∂root/∂leaf and go on to the next leaf, or finish. */
  function passEnded(s) {
    const done = { ...s.everyLeaf.done, [s.trace.wrt]: s.trace.nodes.find((node) => node.id === s.trace.root).tangent };
    const next = nextLeaf(s.trace, done);
    update({ everyLeaf: { done, finished: !next }, ...(next ? { wrt: next.name } : {}) });
  }

  subscribe((s, changed) => {
    if (changed.has("trace") && s.trace) {
      if (s.pass === "forward" && !s.trace.leaves.some((leaf) => leaf.name === s.wrt)) update({ wrt: s.trace.leaves[0]?.name ?? "" });
      if (s.everyLeaf && !s.everyLeaf.finished) startPass();
    }
    const running = s.everyLeaf && !s.everyLeaf.finished && s.trace?.pass === "forward";
    if (running && s.playing && s.step > startedAt) due = false;
    else if (running && due && !(s.trace.wrt in s.everyLeaf.done)) queueMicrotask(() => !state.playing && due && startPass());
    if (running && !s.playing && s.step >= stepCount() - 1 && !(s.trace.wrt in s.everyLeaf.done)) passEnded(s);
    if (!["trace", "pass", "wrt", "everyLeaf"].some((key) => changed.has(key))) return;
    bar.toggle.set(s.pass === "forward");
    if (s.trace) fillPicker(bar.picker, s.trace, s.wrt);
    setHidden(bar.pick, s.pass !== "forward");
    // No graph (a first program that does not parse): no pass to count, not "0 multiply-adds".
    setHidden(bar.counter, !s.trace);
    writeCounter(bar.counter, s);
    setHidden(bar.result, !s.everyLeaf?.finished);
    if (s.everyLeaf?.finished && s.trace) {
      bar.result.replaceChildren(resultTable(s.trace, s.everyLeaf.done), h("p", { text: t("ui.pass.every_leaf_done", { passes: s.trace.leaves.length }) }));
    } else if (bar.result.firstChild) bar.result.replaceChildren();
  });
}
