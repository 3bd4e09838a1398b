// The transport bar: buttons, scrub, speed, phase indicator, Forward/Backward switch, narration,
// and the keyboard (Space, ←/→, Home/End) when no text field has focus (keys.js decides).
// The scope's root (the page's body, an embedded player's own root) carries data-step-index,
// data-phase and data-api-step.

import { setText } from "./dom.js";
import { t } from "./i18n.js";
import { framesOf, phaseAt, phaseLabel, traceIndex } from "./frames.js";
import { narrationOf } from "./narration.js";

/** The length of the longest phase label `trace` can show (monospace: its width in ch). */
function widestPhaseLabel(trace) {
  const counts = Object.entries(traceIndex(trace).phases).map(([name, { first, last }]) => [name, last - first + 1]);
  return Math.max(0, ...counts.map(([name, count]) => phaseLabel({ phase: name, position: count, count }).length));
}

/** The buttons, scrub and keys move the timeline through the store's actions. */
function wireControls(elements, scope) {
  const { toStart, back, play, forward, toEnd, scrub, speed, jumpForward, jumpBackward } = elements;
  const { setStep, stepBy, toEnd: last, togglePlay, jumpTo, update } = scope.store;
  toStart.addEventListener("click", () => setStep(0));
  back.addEventListener("click", () => stepBy(-1));
  forward.addEventListener("click", () => stepBy(1));
  toEnd.addEventListener("click", last);
  play.addEventListener("click", togglePlay);
  scrub.addEventListener("input", () => setStep(scrub.valueAsNumber));
  speed.addEventListener("change", () => update({ speed: Number(speed.value) || 1 }));
  jumpForward.addEventListener("click", () => jumpTo("forward"));
  jumpBackward.addEventListener("click", () => jumpTo("backward"));
  scope.keys.bindKeys({
    " ": togglePlay,
    ArrowRight: () => stepBy(1),
    ArrowLeft: () => stepBy(-1),
    Home: () => setStep(0),
    End: last,
  });
}

/** The buttons' and scrub's state for step `s.step` of `count` frames. */
function writeControls({ toStart, back, play, forward, toEnd, scrub, speed }, s, count) {
  const last = Math.max(0, count - 1);
  back.disabled = count === 0 || s.step <= 0;
  toStart.disabled = back.disabled;
  forward.disabled = count === 0 || s.step >= last;
  toEnd.disabled = forward.disabled;
  play.disabled = count === 0;
  play.classList.toggle("playing", s.playing);
  play.setAttribute("aria-label", t(s.playing ? "ui.transport.pause" : "ui.transport.play"));
  play.setAttribute("aria-pressed", String(s.playing));
  scrub.max = String(last);
  scrub.value = String(s.step);
  scrub.disabled = count === 0;
  if (speed.value !== String(s.speed)) speed.value = String(s.speed);
}

/** Where the timeline is: the phase label, the contribution shown, the switch, the narration. */
function writePlace({ phase, part, jumpForward, jumpBackward, narration }, s, root) {
  const where = s.trace ? phaseAt(s.trace, s.step) : { phase: "" };
  const label = phaseLabel(where);
  setText(phase, label);
  phase.dataset.phase = where.phase;
  const partText = where.parts > 1 ? t("ui.transport.edge_part", { part: where.part, parts: where.parts }) : "";
  setText(part, partText);
  const backward = where.phase === "seed" || where.phase === "backward";
  jumpForward.setAttribute("aria-pressed", String(Boolean(where.phase) && !backward));
  jumpBackward.setAttribute("aria-pressed", String(backward));
  const frame = s.trace ? framesOf(s.trace)[s.step] : null;
  const sentence = frame ? narrationOf(s.trace, frame.step) : "";
  setText(narration, sentence);
  Object.assign(root.dataset, { stepIndex: String(s.step), phase: where.phase, apiStep: frame ? String(frame.step) : "" });
}

export function mountTransport(elements, scope) {
  wireControls(elements, scope);
  // The phase label is as wide as its longest text in this trace ("backward 12 / 12", and longer
  // in Russian), so that the bar does not shift as the label changes.
  let sizedFor = null;
  scope.store.subscribe((s) => {
    if (s.trace !== sizedFor) {
      sizedFor = s.trace;
      elements.phase.style.setProperty("--phase-chars", String(s.trace ? widestPhaseLabel(s.trace) : 0)); // app.css
    }
    writeControls(elements, s, scope.store.stepCount());
    writePlace(elements, s, scope.root);
  });
}
