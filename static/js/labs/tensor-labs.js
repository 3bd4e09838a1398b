// The labs on a tensor program (state.tensor, a POST /api/graph reply of kind "tensor"): the
// predict lab asks for one cell of a leaf's gradient (`dW[1,2]`) before the backward pass
// brings it, and checks the answer against the reply; the = lab takes a tensor read by two ops
// and shows, cell by cell, what each op passed, their sum (+=, the reply's gradient) and what
// = would have left (the part passed last). Both read the reply alone (tensor/timeline.js):
// nothing is asked of the server but the fan-in the predict lab opens once it is answered.

import { compactText, preciseText } from "../core/format.js";
import { h, setData, setHidden, toggleSwitch } from "../core/dom.js";
import { t } from "../core/i18n.js";
import { gradName, reusedTensorsOf, tensorIndex, tensorName } from "../tensor/timeline.js";
import { isClose, parseGuess } from "./guess.js";

export { reusedTensorsOf };

/** Leaves with at most this many elements offer their cells to predict (a select's options). */
const MAX_CELLS = 64;
/** Cells of a reused tensor the = lab's table lists. */
const ROWS_SHOWN = 9;

const elementOf = (values, index) => index.reduce((v, i) => v?.[i], values);
const tensorShown = (s) => (s.tensor && !s.trace ? s.tensor : null);

/** Every index of `shape`, row-major (`[]` for one number). */
function indices(shape) {
  return shape.reduce((all, size) => all.flatMap((head) => Array.from({ length: size }, (_, i) => [...head, i])), [[]]);
}

/** `dW[1,2]` (`dloss` for one number). */
const cellName = (node, index) => `${gradName(node)}${index.length ? `[${index.join(",")}]` : ""}`;

/**
 * The cells the predict lab can ask for: each element of each named float leaf that the
 * backward pass reaches, `{key, tensor, index, cell, frame, truth}`: `frame` the backward step
 * where the first part of its gradient arrives (the timeline waits before it), `truth` the
 * reply's final gradient (the whole of it, every reader's part added).
 */
export function tensorPromptsOf(reply) {
  const { nodeById, passedAt } = tensorIndex(reply);
  const prompts = [];
  for (const leaf of reply.leaves) {
    const node = nodeById.get(leaf.id);
    const frames = passedAt.get(leaf.id) ?? [];
    if (!node || node.grad === null || !frames.length) continue;
    if (node.shape.reduce((n, size) => n * size, 1) > MAX_CELLS) continue;
    for (const index of indices(node.shape)) {
      prompts.push({
        key: `${node.id}|${index.join(",")}`, tensor: node.id, index, cell: cellName(node, index),
        frame: Math.min(...frames), truth: elementOf(node.grad, index),
      });
    }
  }
  return prompts;
}

/** The cell asked first: the last cell of a weight (a leaf `@` reads on its right), else of the first leaf. */
function defaultPrompt(reply, prompts) {
  const weights = new Set(reply.nodes.filter((n) => n.op === "@").map((n) => n.inputs[1]));
  const tensor = reply.leaves.map((l) => l.id).find((id) => weights.has(id) && prompts.some((p) => p.tensor === id))
    ?? prompts[0]?.tensor;
  return prompts.filter((p) => p.tensor === tensor).at(-1) ?? null;
}

/** The predict lab's card for tensor programs on `scope`; `setLab(lab)` makes a lab the active one. */
export function tensorPredictSection(scope, setLab) {
  const { state, subscribe, update, setStep, addStepGuard } = scope.store;
  const toggle = toggleSwitch({
    off: t("ui.lab.off"), on: t("ui.predict.on"), label: t("ui.tensor_predict.label"), testId: "lab-tensor-predict",
    onChange: (on) => {
      if (on && state.finalGrads) update({ finalGrads: false }); // no gradient shows before it is predicted
      setLab(on ? "tensor-predict" : null);
    },
  });
  const select = h("select", { "data-testid": "tensor-predict-cell", "aria-label": t("ui.tensor_predict.which") });
  const question = h("label", { class: "lab-question", for: "tensor-predict-input" });
  const input = h("input", { id: "tensor-predict-input", type: "text", inputmode: "decimal", autocomplete: "off", spellcheck: "false", "data-testid": "tensor-predict-input", class: "lab-input" });
  const form = h("form", { class: "lab-prompt", "data-testid": "tensor-predict-prompt" }, question, input,
    h("button", { type: "submit", class: "primary", text: t("ui.action.check"), "data-testid": "tensor-predict-check" }));
  const status = h("p", { class: "lab-hint lab-status", "data-testid": "tensor-predict-status" });
  const feedback = h("div", { class: "lab-result", "data-testid": "tensor-predict-feedback", "aria-live": "polite" });
  const body = h("div", { class: "lab-body" }, h("label", { class: "lab-inline" }, `${t("ui.tensor_predict.ask_for")} `, select), form, status, feedback);
  const section = h("section", { class: "lab-card lab-tensor lab-predict", "aria-labelledby": "lab-tensor-predict-title" },
    h("h3", { id: "lab-tensor-predict-title", text: t("ui.predict.title") }),
    h("p", { class: "lab-hint lab-intro", text: t("ui.tensor_predict.intro") }), toggle.element, body);

  let prompts = { reply: null, list: [] };
  let answered = null; // the key of the cell answered, for the reply it was answered for
  let blocked = false; // a move was held before the asked cell's step: say why until answered
  const list = () => {
    const reply = tensorShown(state);
    if (prompts.reply !== reply) prompts = { reply, list: reply ? tensorPromptsOf(reply) : [] };
    return prompts.list;
  };
  const current = () => list().find((p) => p.key === select.value) ?? null;
  const waiting = () => state.lab === "tensor-predict" && current() && answered !== current().key ? current() : null;

  let filledFor = null; // the reply the select's cells are of (filled while the lab is on)
  function fillSelect(reply) {
    filledFor = reply;
    const chosen = select.value;
    select.replaceChildren(...list().map((p) => h("option", { value: p.key, text: p.cell })));
    const keep = list().some((p) => p.key === chosen);
    select.value = keep ? chosen : (reply && defaultPrompt(reply, list())?.key) ?? "";
  }

  function render() {
    const prompt = current();
    form.hidden = !prompt || answered === prompt.key;
    setData(form, prompt ? { cell: prompt.cell, tensorId: prompt.tensor, index: prompt.index.join(","), frame: String(prompt.frame) } : { cell: "" });
    if (!prompt) {
      status.textContent = t("ui.tensor_predict.none");
      return;
    }
    question.textContent = `${prompt.cell} =`;
    const op = tensorName(tensorIndex(prompts.reply).nodeById.get(prompts.reply.steps[prompt.frame].node));
    const key = answered === prompt.key ? "ui.tensor_predict.answered" : blocked ? "ui.tensor_predict.blocked" : "ui.tensor_predict.due";
    status.textContent = t(key, { cell: prompt.cell, op });
  }

  /** Hide the asked cell's gradient again: the timeline goes to just before it arrives. */
  function hideIt() {
    const prompt = waiting();
    if (prompt && state.step >= prompt.frame) setStep(prompt.frame - 1);
  }

  addStepGuard((from, to) => {
    const prompt = waiting();
    if (!prompt || !(prompt.frame > from && prompt.frame <= to)) return to;
    blocked = true;
    requestAnimationFrame(() => input.focus());
    return prompt.frame - 1;
  });

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const prompt = waiting();
    if (!prompt) return;
    const guess = parseGuess(input.value);
    if (typeof guess === "number" && Number.isNaN(guess)) {
      feedback.replaceChildren(h("p", { class: "lab-detail", text: t("ui.predict.not_a_number") }));
      return;
    }
    const right = isClose(guess, prompt.truth);
    const computation = `${prompt.cell} = ${compactText(prompt.truth)}`;
    feedback.replaceChildren(h("p", {
      class: right ? "lab-ok" : "lab-bad",
      text: right ? t("ui.predict.right", { computation }) : t("ui.predict.wrong", { guess: preciseText(guess), computation }),
    }));
    setData(feedback, { verdict: right ? "right" : "wrong", cell: prompt.cell, truth: String(prompt.truth) });
    answered = prompt.key;
    blocked = false;
    input.value = "";
    setStep(prompt.frame); // the backward step that brings it, and its sum
    scope.tensorFanIn?.(prompt.tensor, prompt.index);
    render();
  });
  select.addEventListener("change", () => {
    answered = null;
    blocked = false;
    feedback.replaceChildren();
    delete feedback.dataset.verdict;
    hideIt();
    render();
  });

  subscribe((s, changed) => {
    if (!["lab", "tensor", "trace", "step"].some((k) => changed.has(k))) return;
    const reply = tensorShown(s);
    const on = s.lab === "tensor-predict" && Boolean(reply);
    toggle.set(on);
    section.classList.toggle("active", on);
    setHidden(body, !on);
    if (changed.has("tensor") || changed.has("trace")) {
      answered = null; // other numbers: the answer was for the old ones
      blocked = false;
      feedback.replaceChildren();
      delete feedback.dataset.verdict;
    }
    if (on && filledFor !== reply) fillSelect(reply); // a lab that is off costs a drag nothing
    if (on && (changed.has("lab") || changed.has("tensor"))) hideIt();
    if (on) render();
  });
  return section;
}

/** The table of one reused tensor: per cell, each op's part, += (the sum) and = (the last part). */
function reusedTable(reply, { tensor, parts, grad }) {
  const { nodeById } = tensorIndex(reply);
  const opName = (id) => tensorName(nodeById.get(id));
  const head = h("tr", {}, h("th", { text: t("ui.tensor_overwrite.cell") }),
    ...parts.map((p) => h("th", { text: t("ui.tensor_overwrite.from", { op: opName(p.op) }) })),
    h("th", { text: t("ui.tensor_overwrite.sum") }), h("th", { text: t("ui.tensor_overwrite.overwritten") }));
  const rows = indices(tensor.shape).slice(0, ROWS_SHOWN).map((index) => {
    const sum = elementOf(grad, index);
    const last = elementOf(parts.at(-1).grad, index);
    const row = h("tr", { "data-testid": "tensor-overwrite-row" }, h("th", { text: cellName(tensor, index) }),
      ...parts.map((p) => h("td", { text: compactText(elementOf(p.grad, index)) })),
      h("td", { text: compactText(sum) }), h("td", { class: isClose(Number(last), Number(sum)) ? "" : "lab-bad", text: compactText(last) }));
    setData(row, { cell: cellName(tensor, index), sum: String(sum), overwritten: String(last), parts: parts.map((p) => String(elementOf(p.grad, index))).join(";") });
    return row;
  });
  const sentence = t("ui.tensor_overwrite.reused", {
    name: tensorName(tensor), count: parts.length, grad: gradName(tensor),
    ops: parts.map((p) => opName(p.op)).join(", "), last: opName(parts.at(-1).op),
  });
  const block = h("div", { class: "lab-reused", "data-testid": "tensor-overwrite-tensor" },
    h("p", { class: "lab-detail", text: sentence }),
    h("table", { class: "lab-table" }, h("thead", {}, head), h("tbody", {}, ...rows)));
  setData(block, { tensorId: tensor.id, ops: parts.map((p) => p.op).join(",") });
  return block;
}

/** The = lab's card for tensor programs on `scope`; `setLab(lab)` makes a lab the active one. */
export function tensorOverwriteSection(scope, setLab) {
  const toggle = toggleSwitch({
    off: t("ui.overwrite.off"), on: t("ui.overwrite.on"), label: t("ui.tensor_overwrite.label"),
    testId: "lab-tensor-overwrite", onChange: (on) => setLab(on ? "tensor-overwrite" : null),
  });
  const result = h("div", { class: "lab-result", "data-testid": "tensor-overwrite-result", "aria-live": "polite" });
  const section = h("section", { class: "lab-card lab-tensor", "aria-labelledby": "lab-tensor-overwrite-title" },
    h("h3", { id: "lab-tensor-overwrite-title", text: t("ui.overwrite.title") }),
    h("p", { class: "lab-hint", text: t("ui.tensor_overwrite.hint") }), toggle.element, result);

  scope.store.subscribe((s, changed) => {
    if (!["lab", "tensor", "trace"].some((k) => changed.has(k))) return;
    const reply = tensorShown(s);
    const on = s.lab === "tensor-overwrite" && Boolean(reply);
    toggle.set(on);
    section.classList.toggle("active", on);
    if (!on) {
      result.replaceChildren();
      return;
    }
    const reused = reusedTensorsOf(reply);
    result.replaceChildren(...(reused.length
      ? reused.map((r) => reusedTable(reply, r))
      : [h("p", { class: "lab-ok", text: t("ui.tensor_overwrite.none") })]));
  });
  return section;
}
