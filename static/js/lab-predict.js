// Predict mode: before the pulse reveals a gradient, the learner types what it will be. Checked
// with a tolerance, answered with the computation, scored for the run. The timeline will not step
// past an unanswered gradient (state.setStepGuard) unless the learner skips it.
//
// Nothing else may show a gradient the learner has not predicted yet: "show final gradients" is
// switched off and disabled while predicting (with a note saying why), and answers belong to one
// set of values: a slider move, a new program or expanded ops clear them (and their score) and
// take the timeline back to the first gradient to predict, as switching predict mode on does.

import { compactText, factorText, preciseText } from "./format.js";
import { h, nodeName, toggleSwitch } from "./lab-dom.js";
import { t } from "./i18n.js";
import { contributionsOf, nodeById, sameNumber } from "./lab-trace.js";
import { setStep, setStepGuard, state, subscribe, update } from "./state.js";
import { frameOfStep, traceIndex } from "./timeline.js";

/** |guess − truth| ≤ 1e-3·max(1, |truth|); non-finite truths must be named exactly. */
export function isClose(guess, truth) {
  if (typeof truth !== "number") return String(guess) === String(truth);
  return Number.isFinite(guess) && Math.abs(guess - truth) <= 1e-3 * Math.max(1, Math.abs(truth));
}

/** What the learner typed as a number ("−2", "1e-3", "inf", "nan"); NaN when unreadable. */
export function parseGuess(text) {
  const t = text.trim().replace(/\u2212/g, "-").toLowerCase();
  if (/^[+-]?(inf|infinity|\u221e)$/.test(t)) return t.startsWith("-") ? "-Infinity" : "Infinity";
  if (t === "nan") return "NaN";
  return t === "" ? Number.NaN : Number(t);
}

const product = (c) => `${factorText(c.upstream)} \u00d7 ${factorText(c.local)}`;

/**
 * The gradients to predict, in timeline order: `{frame, target, consumer, truth, computation}`.
 * scope "every": each contribution (the running sum after it); "leaves": each leaf's final sum.
 */
export function promptsOf(trace, scope) {
  const { items, lastFrame } = contributionsOf(trace);
  const sofar = new Map();
  const prompts = [];
  for (const item of items) {
    const { c } = item;
    const node = nodeById(trace, c.to);
    const earlier = sofar.get(c.to) ?? [];
    sofar.set(c.to, [...earlier, c]);
    if (node.kind === "const") continue;
    const name = `grad[${nodeName(node)}]`;
    let computation;
    if (scope === "leaves") {
      if (node.kind !== "leaf" || lastFrame.get(c.to) !== item.frame) continue;
      computation = `${name} = ${sofar.get(c.to).map(product).join(" + ")} = ${compactText(c.grad_after)}`;
    } else if (earlier.length === 0) {
      computation = `${name} = ${product(c)} = ${compactText(c.grad_after)}`;
    } else {
      computation = `${name} = ${factorText(c.grad_before)} + ${product(c)} = ${compactText(c.grad_after)}`;
    }
    prompts.push({ frame: item.frame, name, consumer: nodeName(nodeById(trace, item.consumer)), truth: c.grad_after, computation });
  }
  return prompts;
}

// What the learner's answers were given for: when one of these changes, so do the right answers.
const QUESTION_KEYS = ["values", "source", "expandDerived"];

/** The "show final gradients" checkbox is off and disabled while predicting, with a note saying why. */
function holdFinalGrads(predicting) {
  const box = document.getElementById("toggle-final-grads");
  if (!box) return;
  let note = document.getElementById("final-grads-note");
  if (!note) {
    note = h("span", { id: "final-grads-note", class: "toggle-note", "data-testid": "final-grads-note", text: t("ui.predict.final_grads_note") });
    box.parentElement.append(note);
    box.setAttribute("aria-describedby", note.id);
  }
  note.hidden = !predicting;
  box.disabled = predicting;
}

export function predictSection({ setLab }) {
  const toggle = toggleSwitch({
    off: t("ui.lab.off"), on: t("ui.predict.on"), label: t("ui.predict.label"),
    testId: "lab-predict",
    onChange: (on) => {
      if (on && state.finalGrads) update({ finalGrads: false }); // hide them before predicting starts
      setLab(on ? "predict" : null);
    },
  });
  const scope = h("select", { "data-testid": "predict-scope", "aria-label": t("ui.predict.scope") },
    h("option", { value: "every", text: t("ui.predict.every") }), h("option", { value: "leaves", text: t("ui.predict.leaves") }));
  const question = h("label", { class: "lab-question", for: "predict-input" });
  const input = h("input", { id: "predict-input", type: "text", inputmode: "decimal", autocomplete: "off", spellcheck: "false", "data-testid": "predict-input", class: "lab-input" });
  const check = h("button", { type: "submit", class: "primary", text: t("ui.action.check"), "data-testid": "predict-check" });
  const skip = h("button", { type: "button", text: t("ui.predict.skip"), "data-testid": "predict-skip", title: t("ui.predict.skip_title") });
  const status = h("p", { class: "lab-hint lab-status", "data-testid": "predict-status" });
  const form = h("form", { class: "lab-prompt", "data-testid": "predict-prompt" }, question, input, check, skip);
  const feedback = h("div", { class: "lab-result", "data-testid": "predict-feedback", "aria-live": "polite" });
  const score = h("span", { class: "lab-score", "data-testid": "predict-score" });
  const restart = h("button", { type: "button", class: "ghost", text: t("ui.predict.restart"), "data-testid": "predict-restart" });
  const body = h("div", { class: "lab-body lab-split" },
    h("div", {}, h("label", { class: "lab-inline" }, `${t("ui.predict.ask_for")} `, scope), form, status),
    h("div", {}, feedback, h("p", { class: "lab-score-row" }, score, restart)));
  const section = h("section", { class: "lab-card lab-predict", "aria-labelledby": "lab-predict-title" },
    h("h3", { id: "lab-predict-title", text: t("ui.predict.title") }),
    h("p", { class: "lab-hint lab-intro", text: t("ui.predict.intro") }),
    toggle.element, body);

  // Built when first needed after a trace or scope change: a lab that is off costs nothing.
  let memo = { trace: null, scope: null, prompts: [] };
  const currentPrompts = () => {
    if (memo.trace !== state.trace || memo.scope !== scope.value) {
      memo = { trace: state.trace, scope: scope.value, prompts: state.trace ? promptsOf(state.trace, scope.value) : [] };
    }
    return memo.prompts;
  };
  // frame → the record of that prompt: {name, truth, tries, right, skipped}; the score sums them,
  // so dropping a record (its answer no longer applies) takes it out of the score too.
  let answered = new Map();

  const nextPrompt = () => currentPrompts().find((p) => p.frame > state.step) ?? null;

  function resetRun() {
    answered = new Map();
    feedback.replaceChildren();
  }

  function scoreText() {
    let [right, total, skipped] = [0, 0, 0];
    for (const record of answered.values()) {
      right += record.right;
      total += record.tries;
      skipped += record.skipped;
    }
    const score = t("ui.predict.score", { right, total });
    return skipped ? `${score} ${t("ui.predict.skipped", { skipped })}` : score;
  }

  /** Keep only the answers given for the same question (name and right answer) in the new trace. */
  function keepValidAnswers() {
    const prompts = new Map(currentPrompts().map((p) => [p.frame, p]));
    for (const [frame, record] of answered) {
      const prompt = prompts.get(frame);
      if (!prompt || prompt.name !== record.name || !sameNumber(prompt.truth, record.truth)) answered.delete(frame);
    }
    if (answered.size === 0) feedback.replaceChildren();
  }

  /** Step back to just before the first gradient not answered yet, if it is already on screen. */
  function hideUnanswered() {
    const open = currentPrompts().find((p) => !answered.has(p.frame));
    if (open && state.step >= open.frame) setStep(open.frame - 1);
  }

  setStepGuard((from, to) => {
    if (state.lab !== "predict") return to;
    const blocking = currentPrompts().find((p) => p.frame > from && p.frame <= to && !answered.has(p.frame));
    if (!blocking) return to;
    requestAnimationFrame(() => input.focus());
    status.textContent = t("ui.predict.blocked", { name: blocking.name });
    return blocking.frame - 1;
  });

  function settle(prompt, { right = false, skipped = false }) {
    const record = answered.get(prompt.frame) ?? { name: prompt.name, truth: prompt.truth, tries: 0, right: 0, skipped: 0 };
    if (skipped) record.skipped += 1;
    else record.tries += 1;
    if (right) record.right += 1;
    answered.set(prompt.frame, record);
    input.value = "";
    // Reveal it, when the learner stands right before it.
    if (state.step === prompt.frame - 1) setStep(prompt.frame);
    else render();
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const prompt = nextPrompt();
    const guess = parseGuess(input.value);
    if (!prompt || (typeof guess === "number" && Number.isNaN(guess) && input.value.trim().toLowerCase() !== "nan")) {
      feedback.replaceChildren(h("p", { class: "lab-detail", text: t("ui.predict.not_a_number") }));
      return;
    }
    const right = isClose(guess, prompt.truth);
    feedback.replaceChildren(right
      ? h("p", { class: "lab-ok", text: t("ui.predict.right", { computation: prompt.computation }) })
      : h("p", { class: "lab-bad", text: t("ui.predict.wrong", { guess: preciseText(guess), computation: prompt.computation }) }));
    settle(prompt, { right });
  });
  const skipPrompt = () => {
    const prompt = nextPrompt();
    if (!prompt) return;
    feedback.replaceChildren(h("p", { class: "lab-detail", text: t("ui.predict.skipped_answer", { computation: prompt.computation }) }));
    settle(prompt, { skipped: true });
  };
  skip.addEventListener("click", skipPrompt);
  input.addEventListener("keydown", (event) => {
    if (event.key === "Escape") {
      event.preventDefault();
      skipPrompt();
    }
  });
  scope.addEventListener("change", render);
  restart.addEventListener("click", () => {
    resetRun();
    const seed = state.trace && traceIndex(state.trace).phases.seed?.first;
    if (seed !== undefined && seed !== null) setStep(frameOfStep(state.trace, seed));
    render();
  });

  function render() {
    const prompt = nextPrompt();
    form.hidden = !prompt;
    if (prompt) {
      question.textContent = `${prompt.name} =`;
      const due = state.step === prompt.frame - 1;
      const before = answered.get(prompt.frame);
      status.textContent = before ? t("ui.predict.answered")
        : t(due ? "ui.predict.due" : "ui.predict.later", { consumer: prompt.consumer });
    } else {
      status.textContent = t(currentPrompts().length ? "ui.predict.done" : "ui.predict.none");
    }
    score.textContent = scoreText();
  }

  subscribe((s, changed) => {
    const newQuestion = QUESTION_KEYS.some((k) => changed.has(k));
    if (!newQuestion && !["lab", "trace", "step", "finalGrads"].some((k) => changed.has(k))) return;
    const on = s.lab === "predict";
    if (changed.has("lab") || changed.has("finalGrads")) {
      holdFinalGrads(on);
      if (on && s.finalGrads) update({ finalGrads: false }); // however it was switched on
    }
    toggle.set(on);
    section.classList.toggle("active", on);
    body.hidden = !on;
    const started = changed.has("lab") && on;
    if (newQuestion || started) resetRun();
    // Predicting starts (again) where the first gradient to predict is not on screen yet. On new
    // values this happens before the new trace arrives, so its gradients never show unpredicted.
    if (on && (newQuestion || started)) hideUnanswered();
    if (on && changed.has("trace")) {
      keepValidAnswers();
      hideUnanswered();
    }
    if (on) render();
  });
  return section;
}
