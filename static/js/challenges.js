// Experiment prompts: one-line challenges per preset, each a predicate over the (correct) trace,
// checked on every new trace as the learner drags sliders.

import { h } from "./lab-dom.js";
import { subscribe } from "./state.js";

const byLabel = (trace, label) => trace.nodes.find((n) => n.label === label);
/** The correct gradient of the node labelled `label` (NaN when absent). */
const grad = (trace, label) => {
  const value = byLabel(trace, label)?.correct_grad;
  return typeof value === "number" ? value : Number.NaN;
};
const data = (trace, label) => {
  const value = byLabel(trace, label)?.data;
  return typeof value === "number" ? value : Number.NaN;
};
const kink = (trace) => (trace.gradcheck?.results ?? []).some((r) => r.status === "kink");
const near = (x, target, tolerance = 1e-9) => Math.abs(x - target) <= tolerance;

/** preset id → [{id, text, met(trace)}] */
export const CHALLENGES = {
  "add-mul": [
    { id: "c-positive", text: "Make \u2202f/\u2202c positive.", met: (t) => grad(t, "c") > 0 },
    { id: "a-negative", text: "Make \u2202f/\u2202a negative.", met: (t) => grad(t, "a") < 0 },
    { id: "f-zero", text: "Make f exactly 0 without touching c.", met: (t) => data(t, "f") === 0 && data(t, "c") === 10 },
  ],
  relu: [
    { id: "kill", text: "Kill the ReLU: every gradient upstream of it 0.", met: (t) => data(t, "e") < 0 && grad(t, "a") === 0 },
    { id: "kink", text: "Find a value where the gradient check says kink.", met: kink },
    { id: "a-positive", text: "Make \u2202f/\u2202a positive.", met: (t) => grad(t, "a") > 0 },
  ],
  neuron: [
    { id: "saturate", text: "Saturate the neuron: \u2202o/\u2202n below 0.01.", met: (t) => Math.abs(grad(t, "n")) < 0.01 },
    { id: "w1-zero", text: "Make \u2202o/\u2202w1 exactly 0.", met: (t) => grad(t, "w1") === 0 },
  ],
  square: [
    { id: "negative", text: "Make \u2202b/\u2202a negative.", met: (t) => grad(t, "a") < 0 },
    { id: "twelve", text: "Make \u2202b/\u2202a equal 12.", met: (t) => near(grad(t, "a"), 12, 1e-6) },
  ],
  diamond: [
    { id: "zero", text: "Make \u2202d/\u2202a exactly 0.", met: (t) => near(grad(t, "a"), 0) },
    { id: "negative", text: "Make \u2202d/\u2202a negative.", met: (t) => grad(t, "a") < 0 },
  ],
  shared: [
    { id: "a-zero", text: "Make \u2202L/\u2202a exactly 0.", met: (t) => near(grad(t, "a"), 0) },
    { id: "b-negative", text: "Make \u2202L/\u2202b negative.", met: (t) => grad(t, "b") < 0 },
  ],
  double: [
    { id: "b-negative", text: "Make b negative. Does \u2202b/\u2202a change?", met: (t) => data(t, "b") < 0 },
  ],
  "shared-variable": [
    { id: "a-positive", text: "Make \u2202f/\u2202a positive.", met: (t) => grad(t, "a") > 0 },
    { id: "b-zero", text: "Make \u2202f/\u2202b exactly 0.", met: (t) => near(grad(t, "b"), 0) },
  ],
  "sigmoid-neuron": [
    { id: "top", text: "Make \u2202o/\u2202b as large as it gets (0.25).", met: (t) => grad(t, "b") >= 0.2499 },
  ],
  softplus: [
    { id: "steep", text: "Make \u2202y/\u2202x above 0.9.", met: (t) => grad(t, "x") > 0.9 },
  ],
  division: [
    { id: "undefined", text: "Find the x where y divides by zero.", met: (t) => t.nodes.some((n) => (n.warnings ?? []).some((w) => w.type === "division_by_zero")) },
  ],
  power: [
    { id: "b-zero", text: "Make \u2202c/\u2202b exactly 0.", met: (t) => near(grad(t, "b"), 0) },
  ],
  mse: [
    { id: "zero-loss", text: "Make the loss 0.", met: (t) => near(data(t, "loss"), 0, 1e-9) },
    { id: "w-positive", text: "Make \u2202loss/\u2202w positive.", met: (t) => grad(t, "w") > 0 },
  ],
};

/** The challenges of preset `presetId` and whether `trace` meets each. */
export function challengeStatus(presetId, trace) {
  return (CHALLENGES[presetId] ?? []).map((c) => ({ ...c, done: Boolean(trace) && c.met(trace) }));
}

export function challengeSection() {
  const list = h("ul", { class: "lab-challenges", "data-testid": "challenges" });
  const announce = h("p", { class: "visually-hidden", "aria-live": "polite", "data-testid": "challenge-announce" });
  const section = h("section", { class: "lab-card lab-experiments", "aria-labelledby": "lab-experiments-title" },
    h("h3", { id: "lab-experiments-title", text: "Experiments" }),
    h("p", { class: "lab-hint", text: "Drag the sliders until each one is met." }), list, announce);
  let shown = { presetId: null, done: new Set() };

  subscribe((s, changed) => {
    if (!changed.has("trace") && !changed.has("presetId")) return;
    const status = challengeStatus(s.presetId, s.trace);
    const samePreset = shown.presetId === s.presetId;
    const newlyMet = samePreset ? status.filter((c) => c.done && !shown.done.has(c.id)) : [];
    shown = { presetId: s.presetId, done: new Set(status.filter((c) => c.done).map((c) => c.id)) };
    if (status.length === 0) {
      list.replaceChildren(h("li", { class: "lab-empty", text: "Pick a preset to get experiments for it." }));
      return;
    }
    list.replaceChildren(...status.map((c) => h("li", {
      class: c.done ? "done" : "", "data-testid": "challenge", "data-challenge": c.id, "data-done": String(c.done),
    }, h("span", { class: "lab-check", "aria-hidden": "true", text: c.done ? "\u2713" : "" }),
    h("span", { text: c.text }), c.done ? h("span", { class: "visually-hidden", text: " (met)" }) : null)));
    if (newlyMet.length) announce.textContent = `Met: ${newlyMet.map((c) => c.text).join(" ")}`;
  });
  return section;
}
