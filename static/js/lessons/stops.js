// Which lesson is open and what its stops show (no DOM): the lesson panel, the lesson's rings
// (lessons/rings.js) and a live class's teacher read them.

/** The lesson open, or null. */
export function currentLesson(s) {
  return s.lessonId ? s.lessons.find((lesson) => lesson.id === s.lessonId) ?? null : null;
}

/** What the page shows: the scalar trace, else a tensor program's reply (kind "tensor"). */
export const shownReply = (s) => s.trace ?? s.tensor ?? null;

/** Is `trace` (a scalar trace or a tensor reply) the program of `lesson` (its stops' steps
 *  and ids apply to it)? A tensor lesson's stops name tensors and cells of a tensor reply. */
export const isLessonTrace = (lesson, trace) => Boolean(lesson && trace && trace.source === lesson.source
  && (trace.kind === "tensor") === (lesson.kind === "tensor"));

/** The open tensor lesson's stop while its program is shown, else null: {highlight, fan_in, …}. */
export function tensorLessonStop(s) {
  const lesson = currentLesson(s);
  return lesson?.kind === "tensor" && isLessonTrace(lesson, s.tensor) ? lesson.stops[s.lessonStop] ?? null : null;
}

/** The pass a lesson's stop shows: {pass, wrt} (forward mode by leaf `wrt`, a name, or reverse mode). */
export const stopPass = (stop) => (stop?.pass === "forward" ? { pass: "forward", wrt: stop.wrt } : { pass: "reverse" });

/** Is `trace` the timeline of `lesson`'s `stop` (its program, in the stop's pass; its `step` applies to it)? */
export function showsStop(lesson, stop, trace) {
  if (!isLessonTrace(lesson, trace)) return false;
  const { pass, wrt } = stopPass(stop);
  if ((trace.pass ?? "reverse") !== pass) return false;
  return pass === "reverse" || trace.leaves.some((leaf) => leaf.id === trace.wrt && leaf.name === wrt);
}
