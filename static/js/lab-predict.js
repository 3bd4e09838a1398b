// Predict mode: before the pulse reveals a gradient, the learner types what it will be. Checked
// with a tolerance, answered with the computation, scored for the run. The timeline will not step
// past an unanswered gradient (state.setStepGuard) unless the learner skips it.

import { compactText } from "./format.js";
import { h, nodeName, toggleSwitch } from "./lab-dom.js";
import { contributionsOf, nodeById } from "./lab-trace.js";
import { setStep, setStepGuard, state, subscribe } from "./state.js";
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

const term = (value) => {
  const text = compactText(value);
  return typeof value === "number" && value < 0 ? `(${text})` : text;
};
const product = (c) => `${term(c.upstream)} \u00d7 ${term(c.local)}`;

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
      computation = `${name} = ${term(c.grad_before)} + ${product(c)} = ${compactText(c.grad_after)}`;
    }
    prompts.push({ frame: item.frame, name, consumer: nodeName(nodeById(trace, item.consumer)), truth: c.grad_after, computation });
  }
  return prompts;
}

export function predictSection({ setLab }) {
  const toggle = toggleSwitch({
    off: "off", on: "predicting", label: "Predict each gradient before it is revealed",
    testId: "lab-predict", onChange: (on) => setLab(on ? "predict" : null),
  });
  const scope = h("select", { "data-testid": "predict-scope", "aria-label": "Which gradients to predict" },
    h("option", { value: "every", text: "every gradient" }), h("option", { value: "leaves", text: "only the leaves" }));
  const question = h("label", { class: "lab-question", for: "predict-input" });
  const input = h("input", { id: "predict-input", type: "text", inputmode: "decimal", autocomplete: "off", spellcheck: "false", "data-testid": "predict-input", class: "lab-input" });
  const check = h("button", { type: "submit", class: "primary", text: "Check", "data-testid": "predict-check" });
  const skip = h("button", { type: "button", text: "Skip", "data-testid": "predict-skip", title: "Skip (Escape)" });
  const status = h("p", { class: "lab-hint lab-status", "data-testid": "predict-status" });
  const form = h("form", { class: "lab-prompt", "data-testid": "predict-prompt" }, question, input, check, skip);
  const feedback = h("div", { class: "lab-result", "data-testid": "predict-feedback", "aria-live": "polite" });
  const score = h("span", { class: "lab-score", "data-testid": "predict-score" });
  const restart = h("button", { type: "button", class: "ghost", text: "Start over", "data-testid": "predict-restart" });
  const body = h("div", { class: "lab-body lab-split" },
    h("div", {}, h("label", { class: "lab-inline" }, "Ask for ", scope), form, status),
    h("div", {}, feedback, h("p", { class: "lab-score-row" }, score, restart)));
  const section = h("section", { class: "lab-card lab-predict", "aria-labelledby": "lab-predict-title" },
    h("h3", { id: "lab-predict-title", text: "Predict" }),
    h("p", { class: "lab-hint lab-intro", text: "Type each gradient before the pulse reveals it: Enter checks, Escape skips." }),
    toggle.element, body);

  // Built when first needed after a trace or scope change: a lab that is off costs nothing.
  let memo = { trace: null, scope: null, prompts: [] };
  const currentPrompts = () => {
    if (memo.trace !== state.trace || memo.scope !== scope.value) {
      memo = { trace: state.trace, scope: scope.value, prompts: state.trace ? promptsOf(state.trace, scope.value) : [] };
    }
    return memo.prompts;
  };
  let answered = new Map(); // frame → {right} | {skipped: true}
  let attempts = { right: 0, total: 0, skipped: 0 };

  const nextPrompt = () => currentPrompts().find((p) => p.frame > state.step) ?? null;

  function resetRun() {
    answered = new Map();
    attempts = { right: 0, total: 0, skipped: 0 };
    feedback.replaceChildren();
  }

  setStepGuard((from, to) => {
    if (state.lab !== "predict") return to;
    const blocking = currentPrompts().find((p) => p.frame > from && p.frame <= to && !answered.has(p.frame));
    if (!blocking) return to;
    requestAnimationFrame(() => input.focus());
    status.textContent = `Answer or skip to see ${blocking.name}.`;
    return blocking.frame - 1;
  });

  function settle(prompt, result) {
    answered.set(prompt.frame, result);
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
      feedback.replaceChildren(h("p", { class: "lab-detail", text: "Type a number, e.g. 2.5 or -3." }));
      return;
    }
    const right = isClose(guess, prompt.truth);
    attempts.total += 1;
    if (right) attempts.right += 1;
    feedback.replaceChildren(right
      ? h("p", { class: "lab-ok", text: `\u2713 Right: ${prompt.computation}` })
      : h("p", { class: "lab-bad", text: `\u2717 You said ${input.value.trim()}. ${prompt.computation}` }));
    settle(prompt, { right });
  });
  const skipPrompt = () => {
    const prompt = nextPrompt();
    if (!prompt) return;
    attempts.skipped += 1;
    feedback.replaceChildren(h("p", { class: "lab-detail", text: `Skipped: ${prompt.computation}` }));
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
      status.textContent = before ? "Answered already: answer again, or step on."
        : due ? `${prompt.consumer} passes it back next: the pulse waits for you.` : `Coming up when ${prompt.consumer} is visited.`;
    } else {
      status.textContent = currentPrompts().length ? "Every gradient is revealed." : "Nothing to predict in this program.";
    }
    score.textContent = `${attempts.right} / ${attempts.total} right${attempts.skipped ? ` \u00b7 ${attempts.skipped} skipped` : ""}`;
  }

  subscribe((s, changed) => {
    if (!["lab", "trace", "step", "source"].some((k) => changed.has(k))) return;
    const on = s.lab === "predict";
    toggle.set(on);
    section.classList.toggle("active", on);
    body.hidden = !on;
    if (changed.has("source") || (changed.has("lab") && on)) resetRun();
    if (on) render();
  });
  return section;
}
