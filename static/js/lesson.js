// Guided lessons: a short list of stops over a program (lessons/*.json, served by /api/lessons
// with each stop resolved to a step and node ids). A stop is a paragraph, a place on the timeline,
// the nodes it points at, and maybe a question read off the graph. Space, → and Next go to the
// next stop, ← and Back to the previous one; the transport still moves the pulse inside a stop.
//
// This module is the only writer of `data-lesson` on node cards and edges (the highlight) and
// of the lesson panel; it reads the trace and moves the timeline through state.js.

import { bindKeys } from "./keys.js";
import { isClose, parseGuess } from "./lab-predict.js";
import { compactText } from "./format.js";
import { t } from "./i18n.js";
import { setStep, state, subscribe, update } from "./state.js";
import { framesOf } from "./timeline.js";

const $ = (id) => document.getElementById(id);

/** The lesson open, or null. */
export function currentLesson(s = state) {
  return s.lessonId ? s.lessons.find((lesson) => lesson.id === s.lessonId) ?? null : null;
}

/** The frame that shows API step `stepIndex` whole (a backward visit with all its contributions). */
export function frameOfStop(trace, stepIndex) {
  const frames = framesOf(trace);
  for (let i = frames.length - 1; i >= 0; i -= 1) if (frames[i].step === stepIndex) return i;
  return 0;
}

/** `text` with `backticks` as <code> spans: DOM nodes only, never HTML from a string. */
export function richText(element, text) {
  element.replaceChildren(...text.split("`").map((part, i) => {
    if (i % 2 === 0) return document.createTextNode(part);
    const code = document.createElement("code");
    code.className = "math";
    code.textContent = part;
    return code;
  }));
}

const isLessonTrace = (lesson, trace) => Boolean(lesson && trace && trace.source === lesson.source);

/**
 * Mount the lesson panel; `loadProgram({source, values})` shows a new program (main.js).
 * Call before the transport mounts: while a lesson is open its Space and arrows come first.
 */
export function mountLesson({ panel, menu, loadProgram }) {
  const title = panel.querySelector(".lesson-title");
  const count = panel.querySelector(".lesson-count");
  const text = panel.querySelector(".lesson-text");
  const form = panel.querySelector(".lesson-question");
  const answer = form.querySelector("input");
  const feedback = panel.querySelector(".lesson-feedback");
  const back = $("lesson-back");
  const next = $("lesson-next");
  const close = $("lesson-close");
  let waitingFor = null; // the stop to show once the lesson's trace arrives
  let highlighted = [];

  function highlight(ids) {
    for (const g of highlighted) if (g.isConnected) g.removeAttribute("data-lesson");
    highlighted = [];
    for (const id of ids) {
      const g = document.querySelector(id.startsWith("e") ? `path.edge[data-edge-id="${id}"]` : `[data-testid=node][data-node-id="${id}"]`);
      if (g) {
        g.setAttribute("data-lesson", "highlight");
        highlighted.push(g);
      }
    }
  }

  /** Show stop `k` of the open lesson: its text, its question, its place on the timeline. */
  function show(k) {
    const lesson = currentLesson();
    if (!lesson) return;
    const stop = lesson.stops[k];
    update({ lessonStop: k, playing: false });
    if (isLessonTrace(lesson, state.trace)) setStep(frameOfStop(state.trace, stop.step));
    else waitingFor = k;
  }

  function go(delta) {
    const lesson = currentLesson();
    if (!lesson) return false;
    const k = state.lessonStop + delta;
    if (k < 0 || k >= lesson.stops.length) return true; // at an end: the key is still the lesson's
    show(k);
    return true;
  }

  /** Open lesson `id` at stop `k` (its program is loaded; the stop shows once it is traced). */
  function open(id, k = 0) {
    const lesson = state.lessons.find((l) => l.id === id);
    if (!lesson) return;
    const stop = Math.min(Math.max(0, k), lesson.stops.length - 1);
    update({ lessonId: lesson.id, lessonStop: stop });
    if (isLessonTrace(lesson, state.trace)) {
      waitingFor = null;
      show(stop);
    } else {
      waitingFor = stop; // shown when the program's trace arrives
      loadProgram({ source: lesson.source, values: lesson.values });
    }
  }

  function closeLesson() {
    update({ lessonId: "", lessonStop: 0 });
  }

  back.addEventListener("click", () => go(-1));
  next.addEventListener("click", () => go(1));
  close.addEventListener("click", closeLesson);
  menu.addEventListener("change", () => {
    if (menu.value) open(menu.value, 0);
    menu.value = "";
  });
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const lesson = currentLesson();
    const question = lesson?.stops[state.lessonStop]?.question;
    if (!question) return;
    const node = state.trace?.nodes.find((n) => n.id === question.node);
    if (!node) return;
    const truth = question.of === "grad" ? node.correct_grad : node.data;
    const guess = parseGuess(answer.value);
    const right = isClose(guess, truth);
    feedback.dataset.verdict = right ? "right" : "wrong";
    feedback.textContent = right
      ? t("ui.lesson.right", { why: question.why })
      : Number.isNaN(guess) && typeof guess === "number"
        ? t("ui.lesson.not_a_number", { what: `${question.of}[${question.name}]` })
        : t("ui.lesson.wrong", { guess: compactText(guess), why: question.why });
  });

  bindKeys({
    " ": () => go(1),
    ArrowRight: () => go(1),
    ArrowLeft: () => go(-1),
  }, { when: () => Boolean(currentLesson()) });

  subscribe((s, changed) => {
    if (changed.has("lessons")) {
      menu.replaceChildren(new Option(t("ui.lessons.menu"), ""), ...s.lessons.map((l) => new Option(l.title, l.id)));
      menu.hidden = s.lessons.length === 0;
    }
    const lesson = currentLesson(s);
    // A lesson is about its program: editing the program ends it.
    if (lesson && changed.has("source") && s.source !== lesson.source && s.trace) {
      update({ lessonId: "", lessonStop: 0 });
      return;
    }
    if (changed.has("trace") && lesson && waitingFor !== null && isLessonTrace(lesson, s.trace)) {
      const k = waitingFor;
      waitingFor = null;
      show(k); // its timeline move comes in the next round; the highlight below is drawn now
    }
    if (!lesson) {
      if (changed.has("lessonId")) {
        panel.hidden = true;
        delete panel.dataset.lesson;
        document.body.classList.remove("in-lesson");
        highlight([]);
      }
      return;
    }
    const stop = lesson.stops[s.lessonStop];
    if (changed.has("lessonId") || changed.has("lessonStop") || changed.has("lessons")) {
      panel.hidden = false;
      document.body.classList.add("in-lesson");
      panel.dataset.stop = String(s.lessonStop);
      panel.dataset.lesson = lesson.id;
      title.textContent = lesson.title;
      count.textContent = t("ui.lesson.count", { stop: s.lessonStop + 1, count: lesson.stops.length });
      richText(text, stop.text);
      form.hidden = !stop.question;
      answer.value = "";
      feedback.textContent = "";
      delete feedback.dataset.verdict;
      if (stop.question) {
        form.querySelector("label").textContent = `${stop.question.of}[${stop.question.name}] =`;
      }
      back.disabled = s.lessonStop === 0;
      next.disabled = s.lessonStop === lesson.stops.length - 1;
    }
    // A new trace's cards are drawn during this round: mark the stop's nodes once it is over.
    if (!isLessonTrace(lesson, s.trace)) return;
    if (changed.has("trace")) requestAnimationFrame(() => highlight(stop.highlight));
    else if (changed.has("lessonStop") || changed.has("lessonId")) highlight(stop.highlight);
  });

  return { open };
}
