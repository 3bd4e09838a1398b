// A live class (docs/live-class.md): on `/c/<code>` (the body's data-class-code) this page is a
// student's, following the teacher; anywhere else the header gets the Class button that starts
// one. main.js calls mountLiveClass once; while `joining`, the page opens on the class's view
// rather than a preset or a link's state.

import { mountStudent } from "./live-class-student.js";
import { mountTeacher } from "./live-class-teacher.js";

/** Mount the class for this page; `recompute` is main.js's (a new trace of the state). */
export function mountLiveClass({ recompute, actions }) {
  const joining = "classJoin" in document.body.dataset; // set by the server on /c/<code>
  const code = document.body.dataset.classCode ?? "";
  if (joining) mountStudent(code, { recompute });
  else mountTeacher(actions);
  return { joining };
}
