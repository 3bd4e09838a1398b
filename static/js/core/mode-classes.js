// The modes a scope is in, as classes on its root (the page's body): `presenting` (presentation
// mode: large type, editor hidden), `in-lesson` (a lesson is open), `training` (the Train lab: the
// presentation keeps its card on screen), `class-teacher` / `class-student` (the page's role in a
// live class: live-class.css) and `hide-<part>` for each part a teacher's link hides
// (lessons.css takes those parts out of view and so out of the tab order), `forward-pass` (forward
// mode, or a lesson that walks it: the presentation keeps the pass bar, its counter and the
// every-leaf button on screen), `forward-mode` (forward mode is shown: the legend names the
// tangent instead of the backward pass) and `paths-open` (the Paths tab is the one shown: the presentation
// keeps it beside the graph). This module is the only writer of the root's classes; the modes
// themselves are state. The page's <html> carries `presenting` as well: its font size is the
// page's rem (classroom.css). An `html:has(body.presenting)` rule did that before, and Chromium
// matched it again on every change anywhere in the page. That restyled the whole page on every
// slider move.

import { HIDE_KEYS } from "./links.js";

const MODE_KEYS = ["presenting", "lessonId", "lessons", "lab", "classRole", "hide", "pass", "panel"];

/** Whether forward mode is shown, or the open lesson has a stop in it. */
function forwardPass(s) {
  const lesson = s.lessonId ? s.lessons.find((l) => l.id === s.lessonId) : null;
  return s.pass === "forward" || Boolean(lesson?.stops.some((stop) => stop.pass === "forward"));
}

/** The root's classes for state `s`: [class, on] pairs. */
function modeClasses(s) {
  return [
    ["presenting", s.presenting],
    ["in-lesson", Boolean(s.lessonId)],
    ["training", s.lab === "train"],
    ["class-teacher", s.classRole === "teacher"],
    ["class-student", s.classRole === "student"],
    ["forward-pass", forwardPass(s)],
    ["forward-mode", s.pass === "forward"],
    ["paths-open", s.panel === "paths"],
    ...HIDE_KEYS.map((key) => [`hide-${key}`, s.hide.includes(key)]),
  ];
}

export function mountModes(scope) {
  scope.store.subscribe((s, changed) => {
    if (!MODE_KEYS.some((key) => changed.has(key))) return;
    for (const [name, on] of modeClasses(s)) scope.root.classList.toggle(name, on);
    const html = scope.root.ownerDocument?.documentElement;
    if (scope.root === scope.root.ownerDocument?.body) html.classList.toggle("presenting", s.presenting);
  });
}
