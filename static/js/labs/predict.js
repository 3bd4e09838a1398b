// Predict mode: before the pulse reveals a gradient, the learner types what it will be. Checked
// with a tolerance, answered with the computation, scored for the run. The timeline will not step
// past an unanswered gradient (the store's step guard) unless the learner skips it.
//
// Nothing else may show a gradient the learner has not predicted yet: "show final gradients" is
// switched off and disabled while predicting (controls/toggles.js says why), and answers belong to one
// set of values: a slider move, a new program or expanded ops clear them (and their score) and
// take the timeline back to the first gradient to predict, as switching predict mode on does.

import { compactText, factorText, preciseText, productText } from "../core/format.js";
import { h, setHidden, toggleSwitch } from "../core/dom.js";
import { isClose, parseGuess } from "./guess.js";
import { t } from "../core/i18n.js";
import { nodeName } from "../core/names.js";
import { contributionsOf, nodeById, sameNumber } from "./contributions.js";

/** The sentence that answers a prompt: `grad[a] = 1 × 3 = 3`, with the sum so far if any. */
function computation(name, scope, earlier, c) {
  if (scope === "leaves") return `${name} = ${[...earlier, c].map(productText).join(" + ")} = ${compactText(c.grad_after)}`;
  if (earlier.length === 0) return `${name} = ${productText(c)} = ${compactText(c.grad_after)}`;
  return `${name} = ${factorText(c.grad_before)} + ${productText(c)} = ${compactText(c.grad_after)}`;
}

/**
 * The gradients to predict, in timeline order: `{frame, name, consumer, truth, computation}`.
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
    if (scope === "leaves" && (node.kind !== "leaf" || lastFrame.get(c.to) !== item.frame)) continue;
    const name = `grad[${nodeName(node)}]`;
    prompts.push({
      frame: item.frame, name, consumer: nodeName(nodeById(trace, item.consumer)), truth: c.grad_after,
      computation: computation(name, scope, earlier, c),
    });
  }
  return prompts;
}

// What the learner's answers were given for: when one of these changes, so do the right answers.
const QUESTION_KEYS = ["values", "source", "expandDerived"];

/** The lab card's elements. */
function predictCard(setLab, store) {
  const toggle = toggleSwitch({
    off: t("ui.lab.off"), on: t("ui.predict.on"), label: t("ui.predict.label"),
    testId: "lab-predict",
    onChange: (on) => {
      if (on && store.state.finalGrads) store.update({ finalGrads: false }); // hide them before predicting starts
      setLab(on ? "predict" : null);
    },
  });
  const p = {
    toggle,
    scope: h("select", { "data-testid": "predict-scope", "aria-label": t("ui.predict.scope") },
      h("option", { value: "every", text: t("ui.predict.every") }), h("option", { value: "leaves", text: t("ui.predict.leaves") })),
    question: h("label", { class: "lab-question", for: "predict-input" }),
    input: h("input", { id: "predict-input", type: "text", inputmode: "decimal", autocomplete: "off", spellcheck: "false", "data-testid": "predict-input", class: "lab-input" }),
    skip: h("button", { type: "button", text: t("ui.predict.skip"), "data-testid": "predict-skip", title: t("ui.predict.skip_title") }),
    status: h("p", { class: "lab-hint lab-status", "data-testid": "predict-status" }),
    feedback: h("div", { class: "lab-result", "data-testid": "predict-feedback", "aria-live": "polite" }),
    score: h("span", { class: "lab-score", "data-testid": "predict-score" }),
    restart: h("button", { type: "button", class: "ghost", text: t("ui.predict.restart"), "data-testid": "predict-restart" }),
  };
  p.form = h("form", { class: "lab-prompt", "data-testid": "predict-prompt" }, p.question, p.input,
    h("button", { type: "submit", class: "primary", text: t("ui.action.check"), "data-testid": "predict-check" }), p.skip);
  p.body = h("div", { class: "lab-body lab-split" },
    h("div", {}, h("label", { class: "lab-inline" }, `${t("ui.predict.ask_for")} `, p.scope), p.form, p.status),
    h("div", {}, p.feedback, h("p", { class: "lab-score-row" }, p.score, p.restart)));
  p.section = h("section", { class: "lab-card lab-predict", "aria-labelledby": "lab-predict-title" },
    h("h3", { id: "lab-predict-title", text: t("ui.predict.title") }),
    h("p", { class: "lab-hint lab-intro", text: t("ui.predict.intro") }),
    toggle.element, p.body);
  return p;
}

/**
 * The run's answers: frame → {name, truth, tries, right, skipped}; the score sums them, so
 * dropping a record (its answer no longer applies) takes it out of the score too.
 */
function createAnswers() {
  let answered = new Map();
  return {
    has: (frame) => answered.has(frame),
    get: (frame) => answered.get(frame),
    get size() {
      return answered.size;
    },
    clear() {
      answered = new Map();
    },
    record(prompt, { right = false, skipped = false }) {
      const record = answered.get(prompt.frame) ?? { name: prompt.name, truth: prompt.truth, tries: 0, right: 0, skipped: 0 };
      if (skipped) record.skipped += 1;
      else record.tries += 1;
      if (right) record.right += 1;
      answered.set(prompt.frame, record);
    },
    /** Keep only the answers given for the same question (name and right answer) in `prompts`. */
    keepFor(prompts) {
      const byFrame = new Map(prompts.map((p) => [p.frame, p]));
      for (const [frame, record] of answered) {
        const prompt = byFrame.get(frame);
        if (!prompt || prompt.name !== record.name || !sameNumber(prompt.truth, record.truth)) answered.delete(frame);
      }
    },
    scoreText() {
      let [right, total, skipped] = [0, 0, 0];
      for (const record of answered.values()) {
        right += record.right;
        total += record.tries;
        skipped += record.skipped;
      }
      const score = t("ui.predict.score", { right, total });
      return skipped ? `${score} ${t("ui.predict.skipped", { skipped })}` : score;
    },
  };
}

/** The feedback on an answer to `prompt`, or null when `text` is no number. */
function judged(prompt, text) {
  const guess = parseGuess(text);
  if (!prompt || (typeof guess === "number" && Number.isNaN(guess) && text.trim().toLowerCase() !== "nan")) return null;
  const right = isClose(guess, prompt.truth);
  const sentence = right ? h("p", { class: "lab-ok", text: t("ui.predict.right", { computation: prompt.computation }) })
    : h("p", { class: "lab-bad", text: t("ui.predict.wrong", { guess: preciseText(guess), computation: prompt.computation }) });
  return { right, sentence };
}

/** The state changed: the card follows the lab, and a new question or trace settles the answers. */
function onState(s, changed, { p, answers, prompts, hideUnanswered, render }) {
  const newQuestion = QUESTION_KEYS.some((k) => changed.has(k));
  if (!newQuestion && !["lab", "trace", "step"].some((k) => changed.has(k))) return;
  const on = s.lab === "predict";
  p.toggle.set(on);
  p.section.classList.toggle("active", on);
  setHidden(p.body, !on);
  if (newQuestion || (changed.has("lab") && on)) {
    answers.clear();
    p.feedback.replaceChildren();
  }
  // Predicting starts (again) where the first gradient to predict is not on screen yet. On new
  // values this happens before the new trace arrives, so its gradients never show unpredicted.
  if (on && (newQuestion || changed.has("lab"))) hideUnanswered();
  if (on && changed.has("trace")) {
    answers.keepFor(prompts());
    if (answers.size === 0) p.feedback.replaceChildren();
    hideUnanswered();
  }
  if (on) render();
}

/**
 * The prompts of the trace shown for the scope `select` names, built when first needed after a
 * trace or scope change: a lab that is off costs nothing.
 */
function promptsShown(state, select) {
  let memo = { trace: null, scope: null, prompts: [] };
  return () => {
    if (memo.trace !== state.trace || memo.scope !== select.value) {
      memo = { trace: state.trace, scope: select.value, prompts: state.trace ? promptsOf(state.trace, select.value) : [] };
    }
    return memo.prompts;
  };
}

/** The predict lab's card on `scope`; `setLab(lab)` makes a lab the active one. */
export function predictSection(scope, setLab) {
  const { state, subscribe, setStep, addStepGuard } = scope.store;
  const p = predictCard(setLab, scope.store);
  const answers = createAnswers();
  const prompts = promptsShown(state, p.scope);
  const nextPrompt = () => prompts().find((prompt) => prompt.frame > state.step) ?? null;

  function render() {
    const prompt = nextPrompt();
    p.form.hidden = !prompt;
    if (prompt) {
      p.question.textContent = `${prompt.name} =`;
      const due = state.step === prompt.frame - 1;
      p.status.textContent = answers.has(prompt.frame) ? t("ui.predict.answered")
        : t(due ? "ui.predict.due" : "ui.predict.later", { consumer: prompt.consumer });
    } else {
      p.status.textContent = t(prompts().length ? "ui.predict.done" : "ui.predict.none");
    }
    p.score.textContent = answers.scoreText();
  }

  function settle(prompt, outcome) {
    answers.record(prompt, outcome);
    p.input.value = "";
    // Reveal it, when the learner stands right before it.
    if (state.step === prompt.frame - 1) setStep(prompt.frame);
    else render();
  }

  /** Step back to just before the first gradient not answered yet, if it is already on screen. */
  function hideUnanswered() {
    const open = prompts().find((prompt) => !answers.has(prompt.frame));
    if (open && state.step >= open.frame) setStep(open.frame - 1);
  }

  addStepGuard((from, to) => {
    if (state.lab !== "predict") return to;
    const blocking = prompts().find((prompt) => prompt.frame > from && prompt.frame <= to && !answers.has(prompt.frame));
    if (!blocking) return to;
    requestAnimationFrame(() => p.input.focus());
    p.status.textContent = t("ui.predict.blocked", { name: blocking.name });
    return blocking.frame - 1;
  });

  listenToPrompt(p, { nextPrompt, settle, render, restart() {
    answers.clear();
    p.feedback.replaceChildren();
    scope.store.jumpTo("seed");
    render();
  } });

  subscribe((s, changed) => onState(s, changed, { p, answers, prompts, hideUnanswered, render }));
  return p.section;
}

/** The prompt's form: Check (Enter), Skip (Escape), the scope menu and Restart. */
function listenToPrompt(p, { nextPrompt, settle, render, restart }) {
  p.form.addEventListener("submit", (event) => {
    event.preventDefault();
    const prompt = nextPrompt();
    const said = judged(prompt, p.input.value);
    if (!said) {
      p.feedback.replaceChildren(h("p", { class: "lab-detail", text: t("ui.predict.not_a_number") }));
      return;
    }
    p.feedback.replaceChildren(said.sentence);
    settle(prompt, { right: said.right });
  });
  const skip = () => {
    const prompt = nextPrompt();
    if (!prompt) return;
    p.feedback.replaceChildren(h("p", { class: "lab-detail", text: t("ui.predict.skipped_answer", { computation: prompt.computation }) }));
    settle(prompt, { skipped: true });
  };
  p.skip.addEventListener("click", skip);
  p.input.addEventListener("keydown", (event) => {
    if (event.key !== "Escape") return;
    event.preventDefault();
    skip();
  });
  p.scope.addEventListener("change", render);
  p.restart.addEventListener("click", restart);
}
