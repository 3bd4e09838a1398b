// Sharing: the URL follows the state (URL_FIELDS in state.js, written with replaceState after a
// pause), a Copy link button, the Export menu (server-drawn SVG/PNG/PDF, and Interactive HTML: one
// file that plays this trace anywhere), "Copy as micrograd Python" and "Copy as PyTorch" (each
// script is also shown in a dialog, ready to select).

import { apiUrl, withLang } from "./api.js";
import { t } from "./i18n.js";
import { createDialog, showModal } from "./keys.js";
import { microgradScript } from "./micrograd.js";
import { pytorchScript } from "./pytorch.js";
import { HIDE_KEYS, state, subscribe, toUrlParams, URL_FIELDS } from "./state.js";

const URL_WRITE_DELAY_MS = 250;
const URL_KEYS = new Set(Object.values(URL_FIELDS).map((f) => f.key));

/** The link to this view; `overrides` ({hide, presenting}) change what the class will see. */
export function shareUrl(overrides = {}) {
  const query = toUrlParams({ ...state, ...overrides }).toString();
  return `${window.location.origin}${window.location.pathname}${query ? `?${query}` : ""}`;
}

const SHOWN_PARTS = {
  editor: "ui.share.part.editor",
  sliders: "ui.share.part.sliders",
  toggles: "ui.share.part.toggles",
  labs: "ui.share.part.labs",
  tables: "ui.share.part.tables",
  narration: "ui.share.part.narration",
};

/**
 * The Share dialog: the link, and what the class sees when it opens it (a teacher unticks the
 * parts the lesson does not need; the link carries `hide=` and, if chosen, `present=1`).
 */
function createLinkDialog() {
  const { dialog, status } = createDialog("link-dialog", t("ui.share.dialog_title"), "text-dialog link-dialog");
  const field = document.createElement("input");
  field.readOnly = true;
  field.className = "dialog-text";
  field.dataset.testid = "link-dialog-text";
  field.setAttribute("aria-label", t("ui.share.dialog_title"));
  const parts = document.createElement("fieldset");
  parts.className = "link-parts";
  const legend = document.createElement("legend");
  legend.textContent = t("ui.share.what_class_sees");
  parts.append(legend);
  const shown = {};
  for (const key of HIDE_KEYS) {
    const label = document.createElement("label");
    label.className = "toggle";
    const box = document.createElement("input");
    box.type = "checkbox";
    box.dataset.testid = `show-${key}`;
    shown[key] = box;
    label.append(box, ` ${t(SHOWN_PARTS[key])}`);
    parts.append(label);
  }
  const presentLabel = document.createElement("label");
  presentLabel.className = "toggle";
  const present = document.createElement("input");
  present.type = "checkbox";
  present.dataset.testid = "link-present";
  presentLabel.append(present, ` ${t("ui.share.present")}`);
  const copy = button(t("ui.share.copy"), { "data-testid": "link-copy", class: "primary" });
  const close = button(t("ui.action.close"));
  close.addEventListener("click", () => dialog.close());
  const buttons = document.createElement("div");
  buttons.className = "dialog-buttons";
  buttons.append(copy, close);
  dialog.append(field, parts, presentLabel, status, buttons);

  const link = () => shareUrl({
    hide: HIDE_KEYS.filter((key) => !shown[key].checked),
    presenting: present.checked,
  });
  const refresh = () => {
    field.value = link();
    status.textContent = "";
  };
  for (const box of [...Object.values(shown), present]) box.addEventListener("change", refresh);
  copy.addEventListener("click", async () => {
    const url = link();
    status.textContent = copiedText(await copyText(url));
  });
  return {
    /** Open with the view's own settings; `copied`: whether its link is on the clipboard. */
    open(copied) {
      for (const key of HIDE_KEYS) shown[key].checked = !state.hide.includes(key);
      present.checked = state.presenting;
      refresh();
      status.textContent = copiedText(copied);
      showModal(dialog);
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
function createTextDialog(id, heading) {
  const { dialog, status } = createDialog(id, heading, "text-dialog");
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

let latestExport = 0; // only the latest export may write the status line (latest request wins)

const EXPORTS = [
  { format: "svg", label: "SVG" },
  { format: "png", label: "PNG" },
  { format: "pdf", label: "PDF" },
  { format: "html", label: "ui.export.html", title: "ui.export.html_title" }, // catalogue keys
];

/** The export's query: its format, and for the HTML file the preset's title (if it is one). */
function exportQuery(format) {
  const query = new URLSearchParams({ format });
  const preset = state.presets.find((p) => p.id === state.presetId);
  if (format === "html" && preset) query.set("title", preset.title);
  return query;
}

/** The file name the server gives (Content-Disposition), else chainrule-graph.<format>. */
function fileName(response, format) {
  const match = /filename="([^"]+)"/.exec(response.headers.get("content-disposition") ?? "");
  return match ? match[1] : `chainrule-graph.${format}`;
}

async function download(requestBody, format, status) {
  const id = ++latestExport;
  const say = (text) => {
    if (id === latestExport) status.textContent = text;
  };
  say(t("ui.export.busy", { format: format.toUpperCase() }));
  try {
    const response = await fetch(apiUrl(`api/export?${exportQuery(format)}`), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(withLang(requestBody())),
    });
    if (!response.ok) {
      const payload = await response.json().catch(() => null);
      throw new Error(payload?.error?.message ?? `HTTP ${response.status}`);
    }
    const blob = await response.blob();
    const url = URL.createObjectURL(blob);
    const a = document.createElement("a");
    a.href = url;
    a.download = fileName(response, format);
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
    say("");
  } catch (err) {
    say(t("ui.export.failed", { message: err.message }));
  }
}

function exportMenu(requestBody, status) {
  const wrap = document.createElement("div");
  wrap.className = "menu-wrap";
  const toggle = button(t("ui.export.menu"), { "aria-haspopup": "menu", "aria-expanded": "false", id: "export-button" });
  const menu = document.createElement("div");
  menu.className = "menu";
  menu.setAttribute("role", "menu");
  menu.setAttribute("aria-labelledby", "export-button");
  menu.hidden = true;
  const items = EXPORTS.map(({ format, label, title }) => {
    const text = label.startsWith("ui.") ? t(label) : label;
    const item = button(text, { role: "menuitem", "data-format": format, tabindex: "-1", ...(title ? { title: t(title) } : {}) });
    item.addEventListener("click", () => {
      close(true);
      download(requestBody, format, status);
    });
    return item;
  });
  menu.append(...items);
  wrap.append(toggle, menu);
  const open = () => {
    menu.hidden = false;
    toggle.setAttribute("aria-expanded", "true");
    items[0].focus();
  };
  function close(refocus) {
    if (menu.hidden) return;
    menu.hidden = true;
    toggle.setAttribute("aria-expanded", "false");
    if (refocus) toggle.focus();
  }
  toggle.addEventListener("click", () => (menu.hidden ? open() : close(false)));
  menu.addEventListener("keydown", (event) => {
    const i = items.indexOf(document.activeElement);
    const moves = { ArrowDown: i + 1, ArrowUp: i - 1, Home: 0, End: items.length - 1 };
    if (event.key in moves) {
      event.preventDefault();
      items[(moves[event.key] + items.length) % items.length].focus();
    } else if (event.key === "Escape") {
      event.preventDefault();
      event.stopPropagation();
      close(true);
    } else if (event.key === "Tab") {
      close(false);
    }
  });
  document.addEventListener("click", (event) => {
    if (!wrap.contains(event.target)) close(false);
  });
  return wrap;
}

/** Header actions for sharing, into `container`; `requestBody()` is the current /api/graph body. */
export function mountShare(container, { requestBody }) {
  const status = document.createElement("span");
  status.className = "share-status";
  status.setAttribute("role", "status");
  const linkDialog = createLinkDialog();
  const scriptDialog = createTextDialog("micrograd-dialog", t("ui.micrograd.dialog"));

  const copyLink = button(t("ui.share.button"), { "data-testid": "copy-link", title: t("ui.share.title") });
  copyLink.addEventListener("click", async () => {
    const copied = await copyText(shareUrl());
    if (copied) flash(copyLink, t("ui.share.link_copied"));
    linkDialog.open(copied);
  });
  const torchDialog = createTextDialog("pytorch-dialog", t("ui.pytorch.dialog"));
  /** A button that shows the script `write(trace)` makes in `dialog` and copies it. */
  const scriptButton = (text, testid, title, dialog, write) => {
    const copy = button(text, { "data-testid": testid, title });
    copy.addEventListener("click", async () => {
      if (!state.trace) return;
      const script = write(state.trace);
      dialog.open(script);
      dialog.copied(script, await copyText(script));
    });
    return copy;
  };
  const copyScript = scriptButton("micrograd.py", "copy-micrograd", t("ui.micrograd.title"), scriptDialog,
    (trace) => microgradScript(trace, { train: state.lab === "train" ? state.train : null }));
  const copyTorch = scriptButton("torch.py", "copy-pytorch", t("ui.pytorch.title"), torchDialog, pytorchScript);
  container.append(status, copyLink, exportMenu(requestBody, status), copyScript, copyTorch);

  let timer = null;
  subscribe((s, changed) => {
    if (![...changed].some((key) => URL_KEYS.has(key))) return;
    clearTimeout(timer);
    timer = setTimeout(() => {
      const query = toUrlParams(state).toString();
      if (query !== window.location.search.slice(1)) history.replaceState(history.state, "", query ? `?${query}` : window.location.pathname);
    }, URL_WRITE_DELAY_MS);
  });
}
