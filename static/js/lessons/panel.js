// Guided lessons: a short list of stops over a program (lessons/*.json, served by /api/lessons
// with each stop resolved to a step and node ids). A stop is a paragraph, a place on the timeline,
// the nodes it points at (lessons/rings.js rings them), and maybe a question read off the graph.
// Space, → and Next go to the next stop, ← and Back to the previous one; the transport still
// moves the pulse inside a stop. This module builds and writes the lesson panel and moves its
// scope's timeline; it is mounted where there is a server to load a lesson's program from.

import { h, richText, setHidden } from "../core/dom.js";
import { compactText } from "../core/format.js";
import { framesOf } from "../core/frames.js";
import { t } from "../core/i18n.js";
import { isClose, parseGuess } from "../labs/guess.js";
import { currentLesson, isLessonTrace, showsStop, shownReply, stopPass } from "./stops.js";

/** The frame that shows API step `stepIndex` whole (a backward visit with all its contributions;
 *  a tensor program's timeline is one frame a step). */
export function frameOfStop(trace, stepIndex) {
  if (trace.kind === "tensor") return stepIndex;
  const frames = framesOf(trace);
  for (let i = frames.length - 1; i >= 0; i -= 1) if (frames[i].step === stepIndex) return i;
  return 0;
}

/** The lesson panel's elements (hidden until a lesson opens). */
function lessonSection() {
  const parts = {
    title: h("h2", { class: "lesson-title", id: "lesson-title" }),
    count: h("span", { class: "lesson-count" }),
    back: h("button", { type: "button", id: "lesson-back", "data-testid": "lesson-back", text: t("ui.lesson.back") }),
    next: h("button", { type: "button", id: "lesson-next", "data-testid": "lesson-next", class: "primary", text: t("ui.lesson.next") }),
    close: h("button", { type: "button", id: "lesson-close", class: "ghost", "data-testid": "lesson-close", "aria-label": t("ui.lesson.close"), text: "\u00d7" }),
    text: h("p", { class: "lesson-text", "data-testid": "lesson-text", "aria-live": "polite" }),
    label: h("label", { for: "lesson-answer" }),
    answer: h("input", { id: "lesson-answer", "data-testid": "lesson-answer", type: "text", inputmode: "decimal", autocomplete: "off", spellcheck: "false" }),
    feedback: h("p", { class: "lesson-feedback", "data-testid": "lesson-feedback", role: "status" }),
  };
  parts.form = h("form", { class: "lesson-question", "data-testid": "lesson-question", hidden: true },
    parts.label, parts.answer, h("button", { type: "submit", "data-testid": "lesson-check", text: t("ui.action.check") }), parts.feedback);
  parts.panel = h("section", { id: "lesson", class: "lesson", "data-testid": "lesson", "aria-labelledby": "lesson-title", hidden: true },
    h("div", { class: "lesson-head" }, parts.title, parts.count, h("div", { class: "lesson-nav" }, parts.back, parts.next), parts.close),
    parts.text, parts.form);
  return parts;
}

/** What the answer to `question` ({node, of, name, why}) typed in `answer` gets as feedback. */
function judge(question, answer, trace) {
  const node = trace?.nodes.find((n) => n.id === question.node);
  if (!node) return null;
  const truth = question.of === "grad" ? node.correct_grad : node.data;
  const guess = parseGuess(answer);
  if (isClose(guess, truth)) return { verdict: "right", text: t("ui.lesson.right", { why: question.why }) };
  const text = Number.isNaN(guess) && typeof guess === "number"
    ? t("ui.lesson.not_a_number", { what: `${question.of}[${question.name}]` })
    : t("ui.lesson.wrong", { guess: compactText(guess), why: question.why });
  return { verdict: "wrong", text };
}

/** Write stop `k` of `lesson` into the panel: its text, its question, the buttons' state. */
function writeStop(parts, lesson, k) {
  const stop = lesson.stops[k];
  Object.assign(parts.panel.dataset, { stop: String(k), lesson: lesson.id, kind: lesson.kind ?? "scalar" });
  parts.title.textContent = lesson.title;
  parts.count.textContent = t("ui.lesson.count", { stop: k + 1, count: lesson.stops.length });
  richText(parts.text, stop.text);
  parts.form.hidden = !stop.question;
  parts.answer.value = "";
  parts.feedback.textContent = "";
  delete parts.feedback.dataset.verdict;
  if (stop.question) parts.label.textContent = `${stop.question.of}[${stop.question.name}] =`;
  parts.back.disabled = k === 0;
  parts.next.disabled = k === lesson.stops.length - 1;
}

/** The lessons' menu follows the state's list; choosing one opens it. */
function lessonMenu(menu, open, subscribe) {
  menu.addEventListener("change", () => {
    if (menu.value) open(menu.value, 0);
    menu.value = "";
  });
  subscribe((s, changed) => {
    if (!changed.has("lessons")) return;
    menu.replaceChildren(new Option(t("ui.lessons.menu"), ""), ...s.lessons.map((l) => new Option(l.title, l.id)));
    menu.hidden = s.lessons.length === 0;
    menu.title = t("ui.lessons.menu"); // a phone's header cuts the menu's name: the whole of it on hover
  });
}

/** The panel's buttons (Back, Next, close: `go(delta)`, the store) and its question's answers. */
function listenToPanel(parts, { state, update }, go) {
  parts.back.addEventListener("click", () => go(-1));
  parts.next.addEventListener("click", () => go(1));
  parts.close.addEventListener("click", () => update({ lessonId: "", lessonStop: 0 }));
  parts.form.addEventListener("submit", (event) => {
    event.preventDefault();
    const question = currentLesson(state)?.stops[state.lessonStop]?.question;
    const said = question && judge(question, parts.answer.value, state.trace);
    if (!said) return;
    parts.feedback.dataset.verdict = said.verdict;
    parts.feedback.textContent = said.text;
  });
}

/**
 * Mount the lesson panel after `after` (the narration) and the lessons' `menu`, on `scope`;
 * `loadProgram({source, values})` shows a new program. Mount before the transport: while a
 * lesson is open its Space and arrows come first. Returns {open(id, stop)}.
 */
export function mountLessonPanel({ after, menu }, scope, { loadProgram }) {
  const { state, subscribe, update, setStep } = scope.store;
  const parts = lessonSection();
  after.after(parts.panel);
  const waiting = { stop: null }; // the stop to show once the lesson's trace arrives

  /** Show stop `k` of the open lesson: its place on the timeline (now, or once traced). */
  function show(k) {
    const lesson = currentLesson(state);
    if (!lesson) return;
    // The stop's pass: another pass (or leaf) of the lesson's program asks for its timeline.
    update({ lessonStop: k, playing: false, ...stopPass(lesson.stops[k]), everyLeaf: null });
    const shown = shownReply(state);
    if (showsStop(lesson, lesson.stops[k], shown)) setStep(frameOfStop(shown, lesson.stops[k].step));
    else waiting.stop = k;
  }

  function go(delta) {
    const lesson = currentLesson(state);
    if (!lesson) return false;
    const k = state.lessonStop + delta;
    if (k >= 0 && k < lesson.stops.length) show(k);
    return true; // at an end the key is still the lesson's
  }

  /** Open lesson `id` at stop `k` (its program is loaded; the stop shows once it is traced). */
  function open(id, k = 0) {
    const lesson = state.lessons.find((l) => l.id === id);
    if (!lesson) return;
    const stop = Math.min(Math.max(0, k), lesson.stops.length - 1);
    update({ lessonId: lesson.id, lessonStop: stop });
    waiting.stop = isLessonTrace(lesson, shownReply(state)) ? null : stop;
    if (waiting.stop === null) show(stop);
    else loadProgram({ source: lesson.source, values: lesson.values, ...stopPass(lesson.stops[stop]) });
  }

  listenToPanel(parts, scope.store, go);
  lessonMenu(menu, open, subscribe);
  scope.keys.bindKeys({ " ": () => go(1), ArrowRight: () => go(1), ArrowLeft: () => go(-1) },
    { when: () => Boolean(currentLesson(state)) });

  subscribe((s, changed) => followState(s, changed, { update, parts, waiting, show }));
  return { open };
}

/** The panel follows the state: the lesson ends with an edit, a waiting stop shows when its trace comes. */
function followState(s, changed, { update, parts, waiting, show }) {
  const lesson = currentLesson(s);
  // A lesson is about its program: editing the program ends it.
  if (lesson && changed.has("source") && s.source !== lesson.source && shownReply(s)) {
    update({ lessonId: "", lessonStop: 0 });
    return;
  }
  // The reader started the every-leaf run before the stop's trace came: the run is theirs now
  // (showing the stop would cancel it and put its leaf back).
  if (waiting.stop !== null && changed.has("everyLeaf") && s.everyLeaf) waiting.stop = null;
  const arrived = changed.has("trace") || changed.has("tensor");
  if (arrived && lesson && waiting.stop !== null && showsStop(lesson, lesson.stops[waiting.stop], shownReply(s))) {
    const k = waiting.stop;
    waiting.stop = null;
    show(k);
  }
  setHidden(parts.panel, !lesson);
  if (!lesson) delete parts.panel.dataset.lesson;
  else if (["lessonId", "lessonStop", "lessons"].some((key) => changed.has(key))) writeStop(parts, lesson, s.lessonStop);
}
