// The lesson's rings (a mark, marks.js): the cards and edges the open lesson's stop points at
// carry `data-lesson="highlight"` (lessons.css rings them), while the trace shown is the lesson's.

/** The lesson open, or null. */
export function currentLesson(s) {
  return s.lessonId ? s.lessons.find((lesson) => lesson.id === s.lessonId) ?? null : null;
}

/** Is `trace` the program of `lesson` (its stops' steps and node ids apply to it)? */
export const isLessonTrace = (lesson, trace) => Boolean(lesson && trace && trace.source === lesson.source);

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
