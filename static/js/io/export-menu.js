// The Export menu: the graph drawn by the server (SVG, PNG, PDF, POST /api/export) and
// Interactive HTML (one file that plays this trace anywhere), downloaded; a status line says
// what is being made and what failed (only the latest export writes it). Other entries (Copy as
// PyTorch) are given by the page: each is {text, title, testid, run}.

import { apiUrl, withLang } from "../core/api.js";
import { h } from "../core/dom.js";
import { t } from "../core/i18n.js";

const SLUG = /^(?=.{1,60}$)[a-z0-9]+(-[a-z0-9]+)*$/; // what the server takes as a file's name (app/api/export.py)
let latestExport = 0; // only the latest export may write the status line (latest request wins)

const EXPORTS = [
  { format: "svg", label: "SVG" },
  { format: "png", label: "PNG" },
  { format: "pdf", label: "PDF" },
  { format: "html", label: "ui.export.html", title: "ui.export.html_title" }, // catalogue keys
];

/**
 * The export's query: its format; the file's name, the lesson's or the preset's id (slugs), else
 * the server's `program`; for the HTML file the preset's title (if it is one).
 */
function exportQuery(format, state) {
  const query = new URLSearchParams({ format });
  const name = state.lessonId || state.presetId;
  if (SLUG.test(name)) query.set("name", name); // a lesson from a file may have another id
  const preset = state.presets.find((p) => p.id === state.presetId);
  if (format === "html" && preset) query.set("title", preset.title);
  return query;
}

/** The file name the server gives (Content-Disposition), else program.<format>. */
function fileName(response, format) {
  const match = /filename="([^"]+)"/.exec(response.headers.get("content-disposition") ?? "");
  return match ? match[1] : `program.${format}`;
}

async function download(requestBody, format, status, state) {
  const id = ++latestExport;
  const say = (text) => {
    if (id === latestExport) status.textContent = text;
  };
  say(t("ui.export.busy", { format: format.toUpperCase() }));
  try {
    const response = await fetch(apiUrl(`api/export?${exportQuery(format, state)}`), {
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

function exportMenu(requestBody, status, state, extra) {
  const wrap = document.createElement("div");
  wrap.className = "menu-wrap";
  const toggle = h("button", { type: "button", text: t("ui.export.menu"), "aria-haspopup": "menu", "aria-expanded": "false", id: "export-button" });
  const menu = document.createElement("div");
  menu.className = "menu";
  menu.setAttribute("role", "menu");
  menu.setAttribute("aria-labelledby", "export-button");
  menu.hidden = true;
  const downloads = EXPORTS.map(({ format, label, title }) => ({
    text: label.startsWith("ui.") ? t(label) : label,
    title: title ? t(title) : null,
    format,
    run: () => download(requestBody, format, status, state),
  }));
  const items = [...downloads, ...extra].map(({ text, title, format = null, testid = null, run }) => {
    const item = h("button", { type: "button", text, role: "menuitem", "data-format": format, "data-testid": testid, tabindex: "-1", title });
    item.addEventListener("click", () => {
      close(true);
      run();
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
    const i = items.indexOf(menu.getRootNode().activeElement);
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


/**
 * The status line and the Export menu in `container`; `requestBody()`: the current /api/graph
 * body; `extra`: entries after the downloads ({text, title, testid, run}).
 */
export function mountExportMenu(container, scope, { requestBody, extra = [] }) {
  const status = h("span", { class: "share-status", role: "status" });
  container.prepend(status); // the header's actions open with what an export is doing
  container.append(exportMenu(requestBody, status, scope.store.state, extra));
}
