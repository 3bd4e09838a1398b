// The teacher's roster (docs/live-class.md, "The room"): who is connected, by nickname, each
// with a Remove button, and the lock on joining. The server sends the roster (`students`: count,
// cap and list, each student by a roster id that is never the student's own) when it changes;
// whether joining is locked comes with every snapshot.

import { h } from "../core/dom.js";
import { countText } from "../core/format.js";
import { t } from "../core/i18n.js";
import { createDialog } from "../core/keys.js";

/** How the roster names a student: its nickname, or that it gave none and its roster id's start. */
const shownName = (student) => student.name || t("ui.class.roster.unnamed", { id: student.id.slice(0, 4) });

/**
 * The Students dialog in `host`; `send(message)` sends to the class. `show(roster)` draws a
 * `students` message, `lock(locked)` the class's lock; `count()` and `countText()` are the bar's count.
 */
export function rosterDialog(host, send) {
  const { dialog } = createDialog("class-roster-dialog", t("ui.class.roster.title"), "class-roster-dialog", host);
  const lock = h("input", { type: "checkbox", "data-testid": "class-lock" });
  const list = h("ul", { class: "class-roster", "data-testid": "class-roster" });
  const empty = h("p", { class: "class-roster-empty", text: t("ui.class.roster.empty") });
  const close = h("button", { type: "button", "data-testid": "class-roster-close", text: t("ui.action.close") });
  close.addEventListener("click", () => dialog.close());
  dialog.append(
    h("label", { class: "toggle class-lock" }, lock, ` ${t("ui.class.roster.lock")}`),
    h("p", { class: "class-roster-note", text: t("ui.class.roster.note") }),
    empty, list, h("div", { class: "dialog-buttons" }, close),
  );
  lock.addEventListener("change", () => send({ type: "lock", locked: lock.checked }));
  list.addEventListener("click", (event) => {
    const remove = event.target.closest("button[data-student]");
    if (!remove) return;
    remove.disabled = true; // until the next roster leaves the student out
    send({ type: "remove", student: remove.dataset.student });
  });
  const state = { count: 0, max: 0, locked: false };

  return {
    dialog,
    show(roster) {
      Object.assign(state, { count: roster.count, max: roster.max });
      empty.hidden = roster.list.length > 0;
      list.replaceChildren(...roster.list.map((student) => {
        const name = shownName(student);
        return h("li", { "data-testid": "class-roster-student", "data-student": student.id },
          h("span", { class: "class-roster-name", text: name }),
          h("button", {
            type: "button", class: "ghost", "data-testid": "class-remove", "data-student": student.id,
            "aria-label": t("ui.class.roster.remove_label", { name }), text: t("ui.class.roster.remove"),
          }));
      }));
    },
    lock(locked) {
      state.locked = locked;
      lock.checked = locked;
    },
    /** How many students are connected. */
    count: () => state.count,
    /** The bar's words: how many of how many are connected, and whether joining is locked. */
    countText() {
      const words = { count: countText(state.count), max: countText(state.max) };
      return t(state.locked ? "ui.class.students_locked" : "ui.class.students", words);
    },
  };
}
