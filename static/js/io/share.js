// Sharing: the URL follows the state (core/links.js URL_FIELDS, written with replaceState after a
// pause), a note on what a link named that the page could not open or read, a Copy link button
// with its dialog (what the class will see), "Copy as micrograd Python" and "Copy as PyTorch"
// (each script is also shown in a dialog, ready to select). The Export menu is io/export-menu.js.

import { h } from "../core/dom.js";
import { countText } from "../core/format.js";
import { t } from "../core/i18n.js";
import { createDialog, showModal } from "../core/keys.js";
import { HIDE_KEYS, pageQuery, toUrlParams, URL_FIELDS } from "../core/links.js";
import { microgradScript } from "./micrograd.js";
import { pytorchScript } from "./pytorch.js";
import { tensorPytorchScript } from "./tensor-pytorch.js";

const URL_WRITE_DELAY_MS = 250;
const URL_KEYS = new Set(Object.values(URL_FIELDS).map((f) => f.key));

/** The link to the view in state `s`; `overrides` ({hide, presenting, lang}) change what the class will see. */
export function shareUrl(s, overrides = {}) {
  const query = toUrlParams({ ...s, ...overrides }).toString();
  return `${window.location.origin}${window.location.pathname}${query ? `?${query}` : ""}`;
}

/** Whether state `s` is too long for a link (its query past LINK_MAX_CHARS): its program is kept
 *  in the tab that made it, and shared as a file (Export → HTML file). */
const tooLongForALink = (s) => pageQuery(s).kept;

// A program too long for a link, kept in this tab for a reload (its URL says `kept=1`).
const KEPT_KEY = "chainrule.kept";

/** The program a `kept=1` URL names, from this tab ({source, values, presetId}), or null: the
 *  link was opened in another tab or browser, or the tab's storage is off. */
export function keptProgram() {
  try {
    const kept = JSON.parse(sessionStorage.getItem(KEPT_KEY) ?? "null");
    return typeof kept?.source === "string" ? { source: kept.source, values: kept.values ?? {}, presetId: kept.presetId ?? "" } : null;
  } catch {
    return null;
  }
}

function keep(s) {
  try {
    sessionStorage.setItem(KEPT_KEY, JSON.stringify({ source: s.source, values: s.values, presetId: s.presetId }));
  } catch {
    // no storage (a private window's quota): a reload then says the program was not kept
  }
}

const SHOWN_PARTS = {
  editor: "ui.share.part.editor",
  sliders: "ui.share.part.sliders",
  toggles: "ui.share.part.toggles",
  labs: "ui.share.part.labs",
  tables: "ui.share.part.tables",
  narration: "ui.share.part.narration",
};

/** The parts a teacher ticks (what the class sees), and "present". */
function partBoxes() {
  const parts = document.createElement("fieldset");
  parts.className = "link-parts";
  const legend = document.createElement("legend");
  legend.textContent = t("ui.share.what_class_sees");
  parts.append(legend);
  const tick = (testid, words) => {
    const label = document.createElement("label");
    label.className = "toggle";
    const box = document.createElement("input");
    box.type = "checkbox";
    box.dataset.testid = testid;
    label.append(box, ` ${words}`);
    return { label, box };
  };
  const shown = {};
  for (const key of HIDE_KEYS) {
    const { label, box } = tick(`show-${key}`, t(SHOWN_PARTS[key]));
    shown[key] = box;
    parts.append(label);
  }
  const present = tick("link-present", t("ui.share.present"));
  return { parts, shown, present };
}

/**
 * The Share dialog: the link, and what the class sees when it opens it (a teacher unticks the
 * parts the lesson does not need; the link carries `hide=` and, if chosen, `present=1`).
 */
function createLinkDialog(scope) {
  const { dialog, status } = createDialog("link-dialog", t("ui.share.dialog_title"), "text-dialog link-dialog", scope.host);
  const field = document.createElement("input");
  field.readOnly = true;
  field.className = "dialog-text";
  field.dataset.testid = "link-dialog-text";
  field.setAttribute("aria-label", t("ui.share.dialog_title"));
  const { parts, shown, present } = partBoxes();
  const copy = button(t("ui.share.copy"), { "data-testid": "link-copy", class: "primary" });
  const close = button(t("ui.action.close"));
  close.addEventListener("click", () => dialog.close());
  const buttons = document.createElement("div");
  buttons.className = "dialog-buttons";
  buttons.append(copy, close);
  const tooLong = h("p", { class: "link-too-long", "data-testid": "link-too-long", hidden: true });
  dialog.append(field, tooLong, parts, present.label, status, buttons);

  const link = () => shareUrl(scope.store.state, {
    hide: HIDE_KEYS.filter((key) => !shown[key].checked),
    presenting: present.box.checked,
  });
  const refresh = () => {
    const long = tooLongForALink(scope.store.state);
    field.value = long ? "" : link();
    field.hidden = long;
    copy.disabled = long;
    tooLong.hidden = !long;
    if (long) tooLong.textContent = t("ui.share.too_long", { count: countText(scope.store.state.source.length) });
    status.textContent = "";
  };
  for (const box of [...Object.values(shown), present.box]) box.addEventListener("change", refresh);
  copy.addEventListener("click", async () => {
    status.textContent = copiedText(await copyText(link()));
  });
  return {
    /** Open with the view's own settings; `copied`: whether its link is on the clipboard. */
    open(copied) {
      const { state } = scope.store;
      for (const key of HIDE_KEYS) shown[key].checked = !state.hide.includes(key);
      present.box.checked = state.presenting;
      refresh();
      if (copied !== null) status.textContent = copiedText(copied);
      showModal(dialog);
      if (field.hidden) return;
      field.focus();
      field.select();
    },
  };
}

/** What a copy did: on the clipboard, or left to the reader. */
const copiedText = (copied) => t(copied ? "ui.share.copied" : "ui.share.copy_by_hand");

function button(text, attrs = {}) {
  const el = document.createElement("button");
  el.type = "button";
  el.textContent = text;
  for (const [name, value] of Object.entries(attrs)) el.setAttribute(name, value);
  return el;
}

async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    return false;
  }
}

/** A modal dialog with a read-only text field holding `text` (selected), for copying by hand. */
function createTextDialog(id, heading, host) {
  const { dialog, status } = createDialog(id, heading, "text-dialog", host);
  const field = document.createElement("textarea");
  field.readOnly = true;
  field.className = "dialog-text";
  field.dataset.testid = `${id}-text`;
  field.setAttribute("aria-label", heading);
  field.rows = 16;
  const close = button(t("ui.action.close"));
  close.addEventListener("click", () => dialog.close());
  dialog.append(status, field, close);
  return {
    open(text) {
      field.value = text;
      status.textContent = "";
      showModal(dialog);
      field.focus();
      field.select();
    },
    /** Say whether the text also reached the clipboard (if it is still the one shown). */
    copied(text, ok) {
      if (field.value === text) status.textContent = copiedText(ok);
    },
  };
}

function flash(el, text) {
  const original = el.dataset.label ?? el.textContent;
  el.dataset.label = original;
  el.textContent = text;
  setTimeout(() => { el.textContent = original; }, 1500);
}

/** The Copy link button (and its dialog), for `scope`'s view. */
export function mountShareLink(container, scope) {
  const linkDialog = createLinkDialog(scope);
  const copyLink = button(t("ui.share.button"), { "data-testid": "copy-link", title: t("ui.share.title") });
  copyLink.addEventListener("click", async () => {
    if (tooLongForALink(scope.store.state)) { // the dialog says why, and what shares it instead
      linkDialog.open(null);
      return;
    }
    const copied = await copyText(shareUrl(scope.store.state));
    if (copied) flash(copyLink, t("ui.share.link_copied"));
    linkDialog.open(copied);
  });
  container.append(copyLink);
}

/** Show the script `write(state)` makes of `scope`'s trace in `dialog`, and copy it (nothing to
 *  show: `write` gives null). */
async function showScript(scope, dialog, write) {
  const { state } = scope.store;
  const script = state.trace || state.tensor ? write(state) : null;
  if (script === null) return;
  dialog.open(script);
  dialog.copied(script, await copyText(script));
}

/** "Copy as micrograd Python": the script of `scope`'s trace, copied and shown in a dialog. */
export function mountMicrogradCopy(container, scope) {
  const dialog = createTextDialog("micrograd-dialog", t("ui.micrograd.dialog"), scope.host);
  const copy = button("micrograd.py", { "data-testid": "copy-micrograd", title: t("ui.micrograd.title") });
  copy.addEventListener("click", () =>
    showScript(scope, dialog, (state) => (state.trace ? microgradScript(state.trace, { train: state.lab === "train" ? state.train : null }) : null)));
  container.append(copy);
}

/**
 * "Copy as PyTorch" as an entry of the Export menu (the header has no room for another button in
 * every language): the script of `scope`'s trace (a tensor program's: io/tensor-pytorch.js),
 * copied and shown in a dialog.
 */
export function pytorchCopy(scope) {
  const dialog = createTextDialog("pytorch-dialog", t("ui.pytorch.dialog"), scope.host);
  return { text: "torch.py", title: t("ui.pytorch.title"), testid: "copy-pytorch", run: () => showScript(scope, dialog, (state) => (state.trace ? pytorchScript(state.trace) : tensorPytorchScript(state.tensor))) };
}

/**
 * The page's URL follows `scope`'s state (what a link carries), after a pause, from the call of
 * the function this returns: once the page has read its link and applied it. Before that the URL
 * is the link itself (a state written while the presets load, without the link's preset and
 * `hide=`, made a reload in that moment lose them).
 */
export function mountUrlSync(scope) {
  let timer = null;
  let following = false;
  const write = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      const { state } = scope.store;
      const { query, kept } = pageQuery(state);
      if (kept) keep(state);
      if (query !== window.location.search.slice(1)) history.replaceState(history.state, "", query ? `?${query}` : window.location.pathname);
    }, URL_WRITE_DELAY_MS);
  };
  scope.store.subscribe((s, changed) => {
    if (following && [...changed].some((key) => URL_KEYS.has(key))) write();
  });
  return () => {
    following = true;
    write();
  };
}

// A name or value a link carries is said at most this long in the note (a link can hold any text:
// 5,000 characters of a preset's name filled the page).
const SAID_CHARS = 60;

/** `text` as the link's note says it: at most SAID_CHARS characters. */
export const saidOfLink = (text) => (text.length > SAID_CHARS ? `${text.slice(0, SAID_CHARS - 1)}\u2026` : text);

/**
 * The note in `el` on what the link the page opened named that is not here or could not be read:
 * `say(lines)` adds sentences (said already) and shows it, until it is closed or another program,
 * preset or lesson is shown. A mistyped teacher's link otherwise opened the first preset as if
 * it were the one meant.
 */
export function mountLinkNote(el, scope) {
  const text = h("span", { class: "link-note-text" });
  const close = h("button", { type: "button", class: "ghost link-note-close", "aria-label": t("ui.link.close"), text: "\u00d7" });
  el.replaceChildren(text, close);
  let said = [];
  let shown = null; // what was shown when the note was: {source, presetId, lessonId}
  const hide = () => {
    el.hidden = true;
    said = [];
  };
  close.addEventListener("click", hide);
  scope.store.subscribe((s) => {
    if (shown && ["source", "presetId", "lessonId"].some((key) => s[key] !== shown[key])) {
      shown = null;
      hide();
    }
  });
  return {
    say(lines) {
      if (!lines.length) return;
      said = [...said, ...lines];
      text.textContent = said.join(" ");
      const { source, presetId, lessonId } = scope.store.state;
      shown = { source, presetId, lessonId };
      el.hidden = false;
    },
  };
}
