// The lesson's rings (a mark, graph/marks.js): the cards and edges the open lesson's stop points at
// carry `data-lesson="highlight"` (lessons.css rings them), while the trace shown is the lesson's.

import { currentLesson, isLessonTrace } from "./stops.js";

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
