// Presentation mode (P, or the Present button): editor and panels hidden, large type, high
// contrast, narration big under the graph. Also the keys that work everywhere: F/B jump to the
// forward/backward phase, ? opens the keyboard help. (Space, ←/→, Home/End: transport.js; who
// gets a key, and when a text field or an open dialog keeps it: keys.js.)

import { bindKeys, createDialog, showModal } from "./keys.js";
import { state, subscribe, update } from "./state.js";

// [keys, what they do, whether the page shows what they work on]: the help lists only what the
// class can see (a teacher's link may hide parts; a lesson takes Space and the arrows).
const inLesson = (s) => Boolean(s.lessonId);
const hasPanels = (s) => !(s.hide.includes("labs") && s.hide.includes("tables"));
const KEYS = [
  ["Space  \u2192", "next stop of the lesson", inLesson],
  ["\u2190", "previous stop of the lesson", inLesson],
  ["Space", "play / pause", (s) => !inLesson(s)],
  ["\u2190  \u2192", "step back / forward", (s) => !inLesson(s)],
  ["Home  End", "first / last step"],
  ["F", "jump to the forward pass"],
  ["B", "jump to the backward pass"],
  ["P", "presentation mode on / off"],
  ["Esc", "close a panel or dialog; leave presentation mode"],
  ["Tab, Enter", "reach an edge or a node, explain it", (s) => !s.view3d],
  ["Enter", "on a statement's box or card: collapse / expand it", (s) => !s.view3d && Boolean(s.trace?.groups?.some((g) => g.nodes.length > 1))],
  ["Enter", "on the 3D graph: explain the node being visited", (s) => s.view3d],
  ["+  \u2212  0", "on the 3D graph: zoom in / out, back to the fitted view", (s) => s.view3d],
  ["\u2190  \u2192", "on a panel tab: the previous / next panel", hasPanels],
  ["?", "this help"],
];

/** The help's rows for what the page shows now. */
function fillKeys(list, s) {
  list.replaceChildren();
  for (const [key, what, shown = () => true] of KEYS) {
    if (!shown(s)) continue;
    const dt = document.createElement("dt");
    for (const part of key.split(/\s+/)) {
      const kbd = document.createElement("kbd");
      kbd.textContent = part;
      dt.append(kbd, " ");
    }
    const dd = document.createElement("dd");
    dd.textContent = what;
    list.append(dt, dd);
  }
}

function helpDialog() {
  const { dialog } = createDialog("help-dialog", "Keyboard", "help-dialog");
  const list = document.createElement("dl");
  list.className = "keys";
  const close = document.createElement("button");
  close.type = "button";
  close.textContent = "Close";
  close.addEventListener("click", () => dialog.close());
  dialog.append(list, close);
  return dialog;
}

/** `container`: the header actions; `jumpForward`/`jumpBackward`: the transport's phase buttons. */
export function mountPresentation(container, { jumpForward, jumpBackward }) {
  const present = document.createElement("button");
  present.type = "button";
  present.id = "present";
  present.dataset.testid = "present";
  present.textContent = "Present";
  present.setAttribute("aria-pressed", "false");
  present.title = "Presentation mode (P)";
  const help = document.createElement("button");
  help.type = "button";
  help.id = "help";
  help.className = "ghost";
  help.textContent = "?";
  help.setAttribute("aria-label", "Keyboard help");
  help.title = "Keyboard help (?)";
  container.append(present, help);
  const dialog = helpDialog();

  const openHelp = () => {
    fillKeys(dialog.querySelector("dl.keys"), state);
    showModal(dialog);
  };
  present.addEventListener("click", () => update({ presenting: !state.presenting }));
  help.addEventListener("click", openHelp);

  bindKeys({
    p: () => update({ presenting: !state.presenting }),
    f: () => jumpForward.click(),
    b: () => jumpBackward.click(),
    "?": openHelp,
    Escape: () => (state.presenting ? update({ presenting: false }) : false),
  });

  subscribe((s, changed) => {
    if (!changed.has("presenting")) return;
    document.body.classList.toggle("presenting", s.presenting);
    present.setAttribute("aria-pressed", String(s.presenting));
    present.textContent = s.presenting ? "Exit presentation" : "Present";
    // The graph area changed size: refit it once the new layout is in place.
    requestAnimationFrame(() => document.getElementById("fit")?.click());
  });
}
