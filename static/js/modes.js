// The modes a scope is in, as classes on its root (the page's body): `presenting` (presentation
// mode: large type, editor hidden), `in-lesson` (a lesson is open), `training` (the Train lab: the
// presentation keeps its card on screen), `class-teacher` / `class-student` (the page's role in a
// live class: live-class.css) and `hide-<part>` for each part a teacher's link hides
// (lessons.css takes those parts out of view and so out of the tab order). This module is the only
// writer of the root's classes; the modes themselves are state.

import { HIDE_KEYS } from "./links.js";

const MODE_KEYS = ["presenting", "lessonId", "lab", "classRole", "hide"];

/** The root's classes for state `s`: [class, on] pairs. */
function modeClasses(s) {
  return [
    ["presenting", s.presenting],
    ["in-lesson", Boolean(s.lessonId)],
    ["training", s.lab === "train"],
    ["class-teacher", s.classRole === "teacher"],
    ["class-student", s.classRole === "student"],
    ...HIDE_KEYS.map((key) => [`hide-${key}`, s.hide.includes(key)]),
  ];
}

export function mountModes(scope) {
  scope.store.subscribe((s, changed) => {
    if (!MODE_KEYS.some((key) => changed.has(key))) return;
    for (const [name, on] of modeClasses(s)) scope.root.classList.toggle(name, on);
  });
}
