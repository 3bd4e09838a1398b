// A live class (docs/live-class.md): on `/c/<code>` (the body's data-class-code) this page is a
// student's, following the teacher; anywhere else the header gets the Class button that starts
// one. main.js mounts it once, on the page's scope; while `joining`, the page opens on the
// class's view rather than a preset or a link's state. (An embedded player has no class: it has
// no server to hold one.)

import { mountStudent } from "./student.js";
import { mountTeacher } from "./teacher.js";

/**
 * Mount the class on `scope`. `elements`: {actions (the header's, for the Class button),
 * workspace (the class bar goes before it), pane (the graph pane: a paused class covers it)};
 * `recompute` is main.js's (a new trace of the state), `paint(values)` its page's numbers for
 * new values (compute/instant-numbers.js paintOnly). Returns {joining, refused}: `refused`
 * settles when the class refuses a student's page before showing it anything.
 */
export function mountLiveClass({ actions, workspace, pane }, scope, { recompute, paint }) {
  const joining = "classJoin" in scope.root.dataset; // set by the server on /c/<code>
  const code = scope.root.dataset.classCode ?? "";
  let refuse = () => {};
  const refused = new Promise((resolve) => { refuse = resolve; });
  if (joining) mountStudent(code, { workspace, pane }, scope, { recompute, paint, refused: refuse });
  else mountTeacher({ actions, workspace }, scope, { recompute });
  return { joining, refused };
}
