// The transport bar: buttons, scrub, speed, phase indicator, Forward/Backward switch, narration,
// and the keyboard (Space, ←/→, Home/End) when no text field has focus (core/keys.js decides).
// The scope's root (the page's body, an embedded player's own root) carries data-step-index,
// data-phase and data-api-step.

import { setAttr, setData, setProps, setText } from "../core/dom.js";
import { t } from "../core/i18n.js";
import { framesOf, phaseAt, phaseLabel, traceIndex } from "../core/frames.js";
import { narrationOf } from "../core/narration.js";
import { sameDrawing } from "../compute/merge-numbers.js";
import { tensorNarration, tensorPhaseAt, widestTensorPhaseLabel } from "../tensor/timeline.js";

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
  const [atStart, atEnd] = [count === 0 || s.step <= 0, count === 0 || s.step >= last];
  for (const [button, disabled] of [[back, atStart], [toStart, atStart], [forward, atEnd], [toEnd, atEnd], [play, count === 0]]) {
    setProps(button, { disabled });
  }
  play.classList.toggle("playing", s.playing); // a toggle that changes nothing writes nothing
  setAttr(play, "aria-label", t(s.playing ? "ui.transport.pause" : "ui.transport.play"));
  setAttr(play, "aria-pressed", String(s.playing));
  setProps(scrub, { max: String(last), value: String(s.step), disabled: count === 0 });
  setProps(speed, { value: String(s.speed) });
}

/** Where the timeline is: the phase label, the contribution shown, the switch, the narration. */
function writePlace({ phase, part, jumpForward, jumpBackward, narration }, s, root) {
  if (s.tensor && !s.trace) {
    writeTensorPlace({ phase, part, jumpForward, jumpBackward, narration }, s, root);
    return;
  }
  const where = s.trace ? phaseAt(s.trace, s.step) : { phase: "" };
  const label = phaseLabel(where);
  setText(phase, label);
  setData(phase, { phase: where.phase });
  const partText = where.parts > 1 ? t("ui.transport.edge_part", { part: where.part, parts: where.parts }) : "";
  setText(part, partText);
  const backward = where.phase === "seed" || where.phase === "backward";
  setAttr(jumpForward, "aria-pressed", String(Boolean(where.phase) && !backward));
  setAttr(jumpBackward, "aria-pressed", String(backward));
  const frame = s.trace ? framesOf(s.trace)[s.step] : null;
  const sentence = frame ? narrationOf(s.trace, frame.step) : "";
  setText(narration, sentence);
  setData(root, { stepIndex: String(s.step), phase: where.phase, apiStep: frame ? String(frame.step) : "" });
}

/** Where a tensor program's timeline is (tensor/timeline.js): one position a step. */
function writeTensorPlace({ phase, part, jumpForward, jumpBackward, narration }, s, root) {
  const where = tensorPhaseAt(s.tensor, s.step);
  setText(phase, phaseLabel(where));
  setData(phase, { phase: where.phase });
  setText(part, "");
  const backward = where.phase === "seed" || where.phase === "backward";
  setAttr(jumpForward, "aria-pressed", String(Boolean(where.phase) && !backward));
  setAttr(jumpBackward, "aria-pressed", String(backward));
  setText(narration, tensorNarration(s.tensor, s.step));
  setData(root, { stepIndex: String(s.step), phase: where.phase, apiStep: String(s.step) });
}

export function mountTransport(elements, scope) {
  wireControls(elements, scope);
  // The phase label is as wide as its longest text in this trace ("backward 12 / 12", and longer
  // in Russian), so that the bar does not shift as the label changes.
  let sizedFor = null;
  scope.store.subscribe((s) => {
    const shown = s.trace ?? s.tensor;
    if (shown !== sizedFor && !(s.trace && sameDrawing(s.trace, sizedFor))) { // new numbers of one drawing have its phases
      sizedFor = shown;
      const chars = s.trace ? widestPhaseLabel(s.trace) : s.tensor ? widestTensorPhaseLabel(s.tensor) : 0;
      elements.phase.style.setProperty("--phase-chars", String(chars)); // app.css
    }
    writeControls(elements, s, scope.store.stepCount());
    writePlace(elements, s, scope.root);
  });
}
