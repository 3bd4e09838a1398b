// Experiment prompts: one-line challenges per preset, each a predicate over the (correct) trace,
// checked on every new trace as the learner drags sliders.

import { t } from "../core/i18n.js";
import { h } from "../core/dom.js";

// Nodes by the name the program gives them (a preset's names are its labels too).
const byLabel = (trace, label) => trace.nodes.find((n) => (n.name ?? n.label) === label);
/** The correct gradient of the node named `label` (NaN when absent). */
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

/** preset id → [{id, key (of its text in the catalogue), met(trace)}] */
export const CHALLENGES = {
  "add-mul": [
    { id: "c-positive", key: "ui.challenge.add-mul.c-positive", met: (t) => grad(t, "c") > 0 },
    { id: "a-negative", key: "ui.challenge.add-mul.a-negative", met: (t) => grad(t, "a") < 0 },
    { id: "f-zero", key: "ui.challenge.add-mul.f-zero", met: (t) => data(t, "f") === 0 && data(t, "c") === 10 },
  ],
  relu: [
    { id: "kill", key: "ui.challenge.relu.kill", met: (t) => data(t, "e") < 0 && grad(t, "a") === 0 },
    { id: "kink", key: "ui.challenge.relu.kink", met: kink },
    { id: "a-positive", key: "ui.challenge.relu.a-positive", met: (t) => grad(t, "a") > 0 },
  ],
  neuron: [
    { id: "saturate", key: "ui.challenge.neuron.saturate", met: (t) => Math.abs(grad(t, "n")) < 0.01 },
    { id: "w1-zero", key: "ui.challenge.neuron.w1-zero", met: (t) => grad(t, "w1") === 0 },
  ],
  square: [
    { id: "negative", key: "ui.challenge.square.negative", met: (t) => grad(t, "a") < 0 },
    { id: "twelve", key: "ui.challenge.square.twelve", met: (t) => near(grad(t, "a"), 12, 1e-6) },
  ],
  diamond: [
    { id: "zero", key: "ui.challenge.diamond.zero", met: (t) => near(grad(t, "a"), 0) },
    { id: "negative", key: "ui.challenge.diamond.negative", met: (t) => grad(t, "a") < 0 },
  ],
  shared: [
    { id: "a-zero", key: "ui.challenge.shared.a-zero", met: (t) => near(grad(t, "a"), 0) },
    { id: "b-negative", key: "ui.challenge.shared.b-negative", met: (t) => grad(t, "b") < 0 },
  ],
  double: [
    { id: "b-negative", key: "ui.challenge.double.b-negative", met: (t) => data(t, "b") < 0 },
  ],
  "shared-variable": [
    { id: "a-positive", key: "ui.challenge.shared-variable.a-positive", met: (t) => grad(t, "a") > 0 },
    { id: "b-zero", key: "ui.challenge.shared-variable.b-zero", met: (t) => near(grad(t, "b"), 0) },
  ],
  "sigmoid-neuron": [
    { id: "top", key: "ui.challenge.sigmoid-neuron.top", met: (t) => grad(t, "b") >= 0.2499 },
  ],
  softplus: [
    { id: "steep", key: "ui.challenge.softplus.steep", met: (t) => grad(t, "x") > 0.9 },
  ],
  division: [
    { id: "undefined", key: "ui.challenge.division.undefined", met: (t) => t.nodes.some((n) => (n.warnings ?? []).some((w) => w.type === "division_by_zero")) },
  ],
  power: [
    { id: "b-zero", key: "ui.challenge.power.b-zero", met: (t) => near(grad(t, "b"), 0) },
  ],
  mse: [
    { id: "zero-loss", key: "ui.challenge.mse.zero-loss", met: (t) => near(data(t, "loss"), 0, 1e-9) },
    { id: "w-positive", key: "ui.challenge.mse.w-positive", met: (t) => grad(t, "w") > 0 },
  ],
};

/** The challenges of preset `presetId` and whether `trace` meets each. */
export function challengeStatus(presetId, trace) {
  return (CHALLENGES[presetId] ?? []).map((c) => ({ ...c, done: Boolean(trace) && c.met(trace) }));
}

/** The experiments' lab card on `scope`: its preset's challenges, ticked as they are met. */
export function challengeSection(scope) {
  const list = h("ul", { class: "lab-challenges", "data-testid": "challenges" });
  const announce = h("p", { class: "visually-hidden", "aria-live": "polite", "data-testid": "challenge-announce" });
  const section = h("section", { class: "lab-card lab-experiments", "aria-labelledby": "lab-experiments-title" },
    h("h3", { id: "lab-experiments-title", text: t("ui.challenges.title") }),
    h("p", { class: "lab-hint", text: t("ui.challenges.hint") }), list, announce);
  let shown = { presetId: null, done: new Set() };
  let drawn = null; // the list's words as last written

  scope.store.subscribe((s, changed) => {
    if (!changed.has("trace") && !changed.has("presetId")) return;
    const status = challengeStatus(s.presetId, s.trace);
    const samePreset = shown.presetId === s.presetId;
    const newlyMet = samePreset ? status.filter((c) => c.done && !shown.done.has(c.id)) : [];
    shown = { presetId: s.presetId, done: new Set(status.filter((c) => c.done).map((c) => c.id)) };
    // The same list in the same words: nothing to write (a slider move meets no new challenge).
    const words = JSON.stringify(status.length ? status.map((c) => [c.id, c.done, t(c.key)]) : t("ui.challenges.empty"));
    if (words === drawn) return;
    drawn = words;
    if (status.length === 0) {
      list.replaceChildren(h("li", { class: "lab-empty", text: t("ui.challenges.empty") }));
      return;
    }
    list.replaceChildren(...status.map((c) => h("li", {
      class: c.done ? "done" : "", "data-testid": "challenge", "data-challenge": c.id, "data-done": String(c.done),
    }, h("span", { class: "lab-check", "aria-hidden": "true", text: c.done ? "\u2713" : "" }),
    h("span", { text: t(c.key) }), c.done ? h("span", { class: "visually-hidden", text: ` ${t("ui.challenges.met")}` }) : null)));
    if (newlyMet.length) announce.textContent = t("ui.challenges.announce", { list: newlyMet.map((c) => t(c.key)).join(" ") });
  });
  return section;
}
