// Presentation mode (P, or the Present button): editor and panels hidden, large type, high
// contrast, narration big under the graph. Also the keys that work everywhere: F/B jump to the
// forward/backward phase, ? opens the keyboard help. (Space, ←/→, Home/End: controls/transport.js; who
// gets a key, and when a text field or an open dialog keeps it: core/keys.js.)

import { createDialog, showModal } from "../core/keys.js";
import { t } from "../core/i18n.js";

// [keys, what they do (a catalogue key), whether the page shows what they work on]: the help lists
// only what the class can see (a teacher's link may hide parts; a lesson takes Space and the arrows).
const inLesson = (s) => Boolean(s.lessonId);
const hasPanels = (s) => !(s.hide.includes("labs") && s.hide.includes("tables"));
const KEYS = [
  ["Space  \u2192", "ui.keys.next_stop", inLesson],
  ["\u2190", "ui.keys.previous_stop", inLesson],
  ["Space", "ui.keys.play", (s) => !inLesson(s)],
  ["\u2190  \u2192", "ui.keys.step", (s) => !inLesson(s)],
  ["Home  End", "ui.keys.first_last"],
  ["F", "ui.keys.forward"],
  ["B", "ui.keys.backward"],
  ["P", "ui.keys.present"],
  ["Esc", "ui.keys.escape"],
  ["Tab, Enter", "ui.keys.explain", (s) => !s.view3d],
  ["Enter", "ui.keys.collapse_group", (s) => !s.view3d && Boolean(s.trace?.groups?.some((g) => g.nodes.length > 1))],
  ["Enter", "ui.keys.explain_3d", (s) => s.view3d],
  ["+  \u2212  0", "ui.keys.zoom_3d", (s) => s.view3d],
  ["\u2190  \u2192", "ui.keys.tabs", hasPanels],
  ["?", "ui.keys.help"],
];

/** The help's rows for what the page shows now. */
function fillKeys(list, s) {
  list.replaceChildren();
  for (const [key, what, shown = () => true] of KEYS) {
    if (!shown(s)) continue;
    const dt = document.createElement("dt");
    for (const part of key.split(/\s+/)) {
      const kbd = document.createElement("kbd");
      kbd.textContent = part === "Space" ? t("ui.keys.space") : part; // the key caps' own names
      dt.append(kbd, " ");
    }
    const dd = document.createElement("dd");
    dd.textContent = t(what);
    list.append(dt, dd);
  }
}

function helpDialog(host) {
  const { dialog } = createDialog("help-dialog", t("ui.help.title"), "help-dialog", host);
  const list = document.createElement("dl");
  list.className = "keys";
  const close = document.createElement("button");
  close.type = "button";
  close.textContent = t("ui.action.close");
  close.addEventListener("click", () => dialog.close());
  dialog.append(list, close);
  return dialog;
}

/** The header's Present and ? buttons, in `container`. */
function headerButtons(container) {
  const present = document.createElement("button");
  present.type = "button";
  present.id = "present";
  present.dataset.testid = "present";
  present.textContent = t("ui.present.button");
  present.setAttribute("aria-pressed", "false");
  present.title = t("ui.present.title");
  const help = document.createElement("button");
  help.type = "button";
  help.id = "help";
  help.className = "ghost";
  help.textContent = "?";
  help.setAttribute("aria-label", t("ui.help.button"));
  help.title = t("ui.help.button_title");
  container.append(present, help);
  return { present, help };
}

/**
 * Presentation mode and the keys that work everywhere, on `scope`; its buttons go in `container`
 * (the header's actions).
 */
export function mountPresentation(container, scope) {
  const { state, subscribe, update, jumpTo } = scope.store;
  const { present, help } = headerButtons(container);
  const dialog = helpDialog(scope.host);
  const togglePresenting = () => update({ presenting: !state.presenting });
  const openHelp = () => {
    fillKeys(dialog.querySelector("dl.keys"), state);
    showModal(dialog);
  };
  present.addEventListener("click", togglePresenting);
  help.addEventListener("click", openHelp);

  scope.keys.bindKeys({
    p: togglePresenting,
    f: () => jumpTo("forward"),
    b: () => jumpTo("backward"),
    "?": openHelp,
    Escape: () => (state.presenting ? update({ presenting: false }) : false),
  });

  subscribe((s, changed) => {
    if (!changed.has("presenting")) return;
    present.setAttribute("aria-pressed", String(s.presenting));
    present.textContent = t(s.presenting ? "ui.present.exit" : "ui.present.button");
    // The graph area changed size: refit it once the new layout is in place.
    requestAnimationFrame(() => scope.graph?.fit());
  });
}
