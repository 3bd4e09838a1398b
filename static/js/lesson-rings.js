// The lesson's rings (a mark, marks.js): the cards and edges the open lesson's stop points at
// carry `data-lesson="highlight"` (lessons.css rings them), while the trace shown is the lesson's.

/** The lesson open, or null. */
export function currentLesson(s) {
  return s.lessonId ? s.lessons.find((lesson) => lesson.id === s.lessonId) ?? null : null;
}

/** Is `trace` the program of `lesson` (its stops' steps and node ids apply to it)? */
export const isLessonTrace = (lesson, trace) => Boolean(lesson && trace && trace.source === lesson.source);

/** The pass a lesson's stop shows: {pass, wrt} (forward mode by leaf `wrt`, a name, or reverse mode). */
export const stopPass = (stop) => (stop?.pass === "forward" ? { pass: "forward", wrt: stop.wrt } : { pass: "reverse" });

/** Is `trace` the timeline of `lesson`'s `stop` (its program, in the stop's pass; its `step` applies to it)? */
export function showsStop(lesson, stop, trace) {
  if (!isLessonTrace(lesson, trace)) return false;
  const { pass, wrt } = stopPass(stop);
  if ((trace.pass ?? "reverse") !== pass) return false;
  return pass === "reverse" || trace.leaves.some((leaf) => leaf.id === trace.wrt && leaf.name === wrt);
}

export function lessonRingsMark() {
  return {
    name: "lesson-rings",
    keys: ["lessonId", "lessonStop", "lessons"],
    owns: { card: ["data-lesson"], edge: ["data-lesson"] },
    render({ state, trace }) {
      const lesson = currentLesson(state);
      if (!isLessonTrace(lesson, trace)) return null;
      const ringed = { "data-lesson": "highlight" };
      const ids = lesson.stops[state.lessonStop]?.highlight ?? [];
      const edges = new Set(trace.edges.map((e) => e.id));
      return {
        cards: new Map(ids.filter((id) => !edges.has(id)).map((id) => [id, ringed])),
        edges: new Map(ids.filter((id) => edges.has(id)).map((id) => [id, ringed])),
      };
    },
  };
}
