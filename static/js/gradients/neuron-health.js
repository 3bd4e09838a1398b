// A model's neurons across its samples (issue 42: "why did it stop learning"). The Value reader
// writes a neuron's statement once a sample, named where its parameters live
// (`model.layers[0].neurons[3]`, then `…₂`, `…₃` for the next samples): one row a neuron, and on
// how many of its samples its own gate is shut (a ReLU's output 0, a tanh or sigmoid saturated:
// FLAG_SATURATED, the engine's flags' bound) and its gradient is gone (the reply's flags: `dead`,
// every way to the loss through a shut gate, its own or a later one's; `vanishing`).

import { flagsOf } from "./flag-words.js";
import { FLAG_SATURATED } from "../compute/op-functions.js";
import { countText } from "../core/format.js";
import { h, setText } from "../core/dom.js";
import { t } from "../core/i18n.js";
import { traceIndex } from "../core/frames.js";

// A statement the reader named by the place of one item (`model.layers[0].neurons[3]`: a neuron,
// not the regulariser's sums over a list, `model.layers[1].neurons₂`), a sample's subscript after it.
const NEURON = /^([A-Za-z_]\w*(?:\.[A-Za-z_]\w*|\[\d+\])*\[\d+\])([\u2080-\u2089]*)$/u;
// Each count's column heading.
const HEADINGS = { off: "ui.neurons.off", saturated: "ui.neurons.saturated", dead: "ui.neurons.dead", vanishing: "ui.neurons.vanishing" };
export const COUNTS = Object.keys(HEADINGS);
const GATES = new Set(["relu", "tanh", "sigmoid"]);

/** Whether a neuron's own gate is shut on this sample: its statement's value `root`. */
function shut(root) {
  if (root.op === "relu") return root.data === 0 ? "off" : null;
  if (root.op === "tanh") return Math.abs(root.data) > FLAG_SATURATED ? "saturated" : null;
  if (root.op === "sigmoid") return Math.abs(2 * root.data - 1) > FLAG_SATURATED ? "saturated" : null;
  return null;
}

/**
 * The neurons of `trace`, in the program's order: {name, samples, off, saturated, dead,
 * vanishing} (each a count of samples), for the statements written once a sample (two or more
 * with one place's name) whose value is a gate (relu, tanh, sigmoid); [] for a program that has none.
 */
export function neuronHealth(trace) {
  const { nodeById } = traceIndex(trace);
  const rows = new Map();
  for (const group of trace.groups ?? []) {
    const match = group.kind === "statement" && NEURON.exec(group.name);
    const root = match && nodeById.get(group.root);
    if (!match || !GATES.has(root.op)) continue; // a linear output has no gate to shut
    let row = rows.get(match[1]);
    if (!row) rows.set(match[1], (row = { name: match[1], samples: 0, off: 0, saturated: 0, dead: 0, vanishing: 0 }));
    row.samples += 1;
    const gate = shut(root);
    if (gate) row[gate] += 1;
    const flags = new Set(group.nodes.flatMap((id) => flagsOf(trace, id)));
    for (const flag of ["dead", "vanishing"]) if (flags.has(flag)) row[flag] += 1;
  }
  return [...rows.values()].filter((row) => row.samples > 1);
}

/** The table of `rows` (neuronHealth's) with its sentence: made anew, it is small (a row a neuron). */
export function neuronHealthTable(rows) {
  const head = h("tr", {}, h("th", { scope: "col", text: t("ui.neurons.neuron") }), h("th", { scope: "col", text: t("ui.neurons.samples") }),
    ...COUNTS.map((key) => h("th", { scope: "col", text: t(HEADINGS[key]) })));
  const body = h("tbody", {}, rows.map((row) => h("tr", { "data-neuron": row.name, ...Object.fromEntries(COUNTS.map((key) => [`data-${key}`, row[key]])), "data-samples": row.samples },
    h("td", { class: "mono", text: row.name }), h("td", { class: "mono", text: countText(row.samples) }),
    ...COUNTS.map((key) => h("td", { class: row[key] ? "mono flagged" : "mono", text: countText(row[key]) })))));
  const dead = rows.filter((row) => row.off === row.samples).length;
  const note = h("p", { class: "table-note" });
  setText(note, t("ui.neurons.note", { dead: countText(dead), neurons: countText(rows.length) }));
  return h("section", { class: "neuron-health", "data-testid": "neuron-health" },
    h("h3", { text: t("ui.neurons.title") }),
    h("table", { class: "trace-table neuron-table" }, h("thead", {}, head), body), note);
}
