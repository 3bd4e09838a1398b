// The teacher's side of a live class: the Class button starts one (POST /api/class with the
// view shown), the join dialog shows the code, the link and its QR code big enough for the back
// row, and the class bar drives it: Pause, Free, Bring back, Ask (a value the pulse has not
// shown yet), the live count of answers, Reveal (the board), End. Every move of this page's
// view (program, values, toggles, 2D/3D, lesson stop, step) goes to the class, at most every
// SEND_EVERY_MS. The token lives in this tab only (sessionStorage): a reload drives on.

import { apiUrl, withLang } from "../core/api.js";
import { h } from "../core/dom.js";
import { countText } from "../core/format.js";
import { lang, t } from "../core/i18n.js";
import { createDialog, showModal } from "../core/keys.js";
import { currentLesson } from "../lessons/stops.js";
import { drawBoard } from "./board.js";
import { askable } from "./questions.js";
import { qrSvg } from "./qr.js";
import { openClassSocket } from "./socket.js";
import { sandboxProgram } from "../sandbox/sandbox.js";

const STORE_KEY = "chainrule.class.teacher";
const SEND_EVERY_MS = 50;
const VIEW_KEYS = ["trace", "source", "values", "presetId", "expandDerived", "finalGrads", "foldConstants", "gradMap", "view3d", "lessonId", "lessonStop", "step"];

/**
 * The view the class follows, or null while the program typed is not the one shown. Code that
 * ran in the sandbox is followed as the straight-line program its run was read as: the class
 * (and the server) never get the code, and a student's page runs nothing.
 */
export function currentView(s) {
  const source = sandboxProgram(s) ?? s.source;
  if (!s.trace || s.trace.source !== source) return null;
  return {
    source, values: { ...s.values }, presetId: s.presetId, expandDerived: s.expandDerived,
    finalGrads: s.finalGrads, foldConstants: s.foldConstants, gradMap: s.gradMap, view3d: s.view3d,
    lessonId: s.lessonId, lessonStop: s.lessonStop, step: s.step,
  };
}

async function createClass(view) {
  const response = await fetch(apiUrl("api/class"), {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json" },
    body: JSON.stringify(withLang({ view })),
  });
  const payload = await response.json().catch(() => null);
  if (!response.ok) throw new Error(payload?.error?.message ?? `HTTP ${response.status}`);
  return payload;
}

const askKey = (a) => `${a.kind}:${a.node}:${a.edge}`;

function button(text, testid, extra = {}) {
  return h("button", { type: "button", text, "data-testid": testid, ...extra });
}

/** The join dialog in `host`: the code, the link, the QR code and the class's size. */
function joinDialog(info, host) {
  const url = apiUrl(info.join_path.slice(1));
  const { dialog } = createDialog("class-join", t("ui.class.join_title"), "class-join-dialog", host);
  const close = button(t("ui.action.close"), "class-join-close");
  close.addEventListener("click", () => dialog.close());
  dialog.append(
    h("p", { class: "class-join-code", "data-testid": "class-code", text: info.shown_code }),
    h("p", { class: "class-join-url", "data-testid": "class-url", text: url }),
    h("div", { class: "class-qr", "data-testid": "class-qr" }, qrSvg(url, t("ui.class.qr_label", { url }))),
    h("p", { class: "class-join-note", text: t("ui.class.join_note", { max: countText(info.max_students) }) }),
    h("div", { class: "dialog-buttons" }, close),
  );
  return dialog;
}

/** The board's dialog in `host` (opened at each reveal, and by the Board button). */
function boardDialog(host) {
  const { dialog } = createDialog("class-board-dialog", t("ui.class.board.title"), "class-board-dialog", host);
  const board = h("section", { class: "class-board", "data-testid": "class-board", hidden: true });
  const close = button(t("ui.action.close"), "class-board-close");
  close.addEventListener("click", () => dialog.close());
  dialog.append(board, h("div", { class: "dialog-buttons" }, close));
  return { dialog, board };
}

/** The class bar of the teacher's page. */
function teacherBar(info) {
  const students = h("span", { class: "class-count", "data-testid": "class-students", "data-count": "0" });
  const pause = button(t("ui.class.pause"), "class-pause", { "aria-pressed": "false" });
  const free = button(t("ui.class.free"), "class-free", { "aria-pressed": "false" });
  const gather = button(t("ui.class.gather"), "class-gather");
  const what = h("select", { "data-testid": "class-ask-what", "aria-label": t("ui.class.ask_what") });
  const ask = button(t("ui.class.ask"), "class-ask", { class: "primary" });
  const answers = h("span", { class: "class-count", "data-testid": "class-answers", "data-count": "0", hidden: true });
  const names = h("input", { type: "checkbox", "data-testid": "class-names" });
  const reveal = button(t("ui.class.reveal"), "class-reveal", { disabled: true });
  const boardButton = button(t("ui.class.board.open"), "class-board-open", { hidden: true });
  const showCode = button(info.shown_code, "class-show-code", { class: "class-code-chip", title: t("ui.class.show_code") });
  const end = button(t("ui.class.end"), "class-end", { class: "ghost" });
  const hold = h("p", { class: "class-hold", "data-testid": "class-hold", hidden: true });
  const askGroup = h("span", { class: "class-ask-group" }, what, ask);
  const bar = h("section", { class: "class-bar teacher", "data-testid": "class-bar", "aria-label": t("ui.class.bar_label") },
    h("div", { class: "class-bar-row" }, showCode, students, pause, free, gather,
      askGroup, answers, h("label", { class: "toggle" }, names, ` ${t("ui.class.names")}`), reveal, boardButton, end),
    hold);
  return { bar, students, pause, free, gather, what, ask, askGroup, answers, names, reveal, boardButton, showCode, end, hold };
}

/**
 * Mount the Class button into `actions` (the header's) on `scope`; the class bar goes before
 * `workspace`. A class this tab started and has not ended is taken up again at once (a reload).
 */
export function mountTeacher({ actions, workspace }, scope) {
  const start = button(t("ui.class.start"), "class-start", { title: t("ui.class.start_title") });
  const status = h("span", { class: "class-start-status", role: "status" });
  actions.append(start, status);
  const page = { scope, workspace, start, status };
  start.addEventListener("click", async () => {
    const view = currentView(scope.store.state);
    if (!view) return;
    start.disabled = true;
    try {
      const info = await createClass(view);
      sessionStorage.setItem(STORE_KEY, JSON.stringify(info));
      run(info, page, { fresh: true });
    } catch (err) {
      status.textContent = t("ui.class.start_failed", { message: err.message });
      start.disabled = false;
    }
  });
  const kept = sessionStorage.getItem(STORE_KEY);
  if (kept) {
    try {
      run(JSON.parse(kept), page, { fresh: false });
    } catch {
      sessionStorage.removeItem(STORE_KEY);
    }
  }
}

/**
 * The view goes to the class through `socketOf()`: schedule() at most every SEND_EVERY_MS, now()
 * before a question (it is about the view the class has), resend() after a reconnection.
 */
function viewSender(socketOf, state) {
  let sent = "";
  let timer = null;
  let lastSent = 0;

  function now() {
    clearTimeout(timer);
    timer = null;
    const view = currentView(state);
    if (!view) return;
    const text = JSON.stringify(view);
    if (text === sent) return;
    if (socketOf().send({ type: "view", view })) {
      sent = text;
      lastSent = performance.now();
    }
  }

  return {
    now,
    schedule() {
      if (timer === null) timer = setTimeout(now, Math.max(0, lastSent + SEND_EVERY_MS - performance.now()));
    },
    resend() {
      sent = ""; // say where we are again: the class may have moved on without us
    },
    stop: () => clearTimeout(timer),
  };
}

/** The values the class can be asked in state `s`, the open lesson stop's question first. */
function asksAt(s) {
  const asks = askable(s.trace, s.step);
  const lessonQ = currentLesson(s)?.stops[s.lessonStop]?.question;
  if (lessonQ) {
    const i = asks.findIndex((a) => a.kind === lessonQ.of && a.node === lessonQ.node);
    if (i >= 0) asks.unshift({ ...asks.splice(i, 1)[0], lesson: true });
  }
  return asks;
}

/** Fill the Ask menu with `asks`, keeping the value chosen while it can still be asked. */
function fillAskMenu(ui, asks) {
  const chosen = ui.what.value;
  ui.what.replaceChildren(...asks.map((a) => new Option(a.lesson ? t("ui.class.ask_lesson", { label: a.label }) : a.label, askKey(a))));
  if (asks.some((a) => askKey(a) === chosen)) ui.what.value = chosen;
  ui.askGroup.hidden = asks.length === 0; // the pulse has shown everything
}

/** The bar shows the class's state `next` (a snapshot): its mode, the open question, the board's button. */
function showSnapshot(ui, next) {
  ui.pause.setAttribute("aria-pressed", String(next.mode === "paused"));
  ui.free.setAttribute("aria-pressed", String(next.mode === "free"));
  ui.bar.dataset.mode = next.mode;
  const q = next.question;
  const open = Boolean(q?.open);
  ui.reveal.disabled = !open;
  ui.answers.hidden = !q;
  if (open && ui.answers.dataset.question !== q.id) {
    ui.answers.dataset.question = q.id;
    showCount(ui.answers, 0, t("ui.class.answers", { count: "0" }));
  }
  ui.hold.hidden = !open;
  if (open) ui.hold.textContent = t("ui.class.holding", { label: q.label });
  ui.boardButton.hidden = !next.board;
}

function showCount(element, count, text) {
  element.dataset.count = String(count);
  element.textContent = text;
}

/** The class's state `next` (a snapshot) on the bar; a new board opens its dialog. */
function showClass(next, { ui, session, boardView }) {
  session.snapshot = next;
  showSnapshot(ui, next);
  const q = next.question;
  if (next.board && q && session.boardShown !== next.board.question) {
    session.boardShown = next.board.question;
    drawBoard(boardView.board, next.board, q);
    showModal(boardView.dialog);
  }
}

/** What the class says to the teacher (docs/live-class.md, Messages). */
function onTeacherMessage(message, { ui, session, views, show }) {
  if (message.type === "welcome") views.schedule();
  else if (message.type === "snapshot") show(message);
  else if (message.type === "students") {
    showCount(ui.students, message.count, t("ui.class.students", { count: countText(message.count), max: countText(message.max) }));
  } else if (message.type === "answers" && session.snapshot?.question?.id === message.question) {
    showCount(ui.answers, message.count, t("ui.class.answers", { count: countText(message.count) }));
  } else if (message.type === "error") {
    ui.hold.hidden = false;
    ui.hold.textContent = message.error.message;
  }
}

/** Drive the class `info` ({code, shown_code, join_path, token, max_students}) from `page`'s scope. */
function run(info, page, { fresh }) {
  const { scope, start, status } = page;
  const { state, subscribe, update } = scope.store;
  start.hidden = true;
  status.textContent = "";
  const ui = teacherBar(info);
  page.workspace.before(ui.bar);
  update({ classRole: "teacher" });
  const join = joinDialog(info, scope.host);
  const boardView = boardDialog(scope.host);
  const session = { snapshot: null, boardShown: null, asks: [] };
  const views = viewSender(() => socket, state);
  const refreshAsks = () => {
    session.asks = asksAt(state);
    fillAskMenu(ui, session.asks);
  };
  const show = (next) => {
    showClass(next, { ui, session, boardView });
    refreshAsks();
  };
  const socket = openClassSocket(info.code, {
    hello: () => ({ type: "hello", role: "teacher", token: info.token, lang: lang() }),
    onConnection: (connection) => {
      ui.bar.dataset.connection = connection;
      if (connection === "open") views.resend();
      if (connection === "closed") finish();
    },
    onMessage: (message) => onTeacherMessage(message, { ui, session, views, show }),
  });
  ui.students.textContent = t("ui.class.students", { count: "0", max: countText(info.max_students) });
  const asked = () => session.asks.find((a) => askKey(a) === ui.what.value);
  listenToBar(ui, { socket, views, join, boardView, mode: () => session.snapshot?.mode, asked, end: () => finish() });

  const unsubscribe = subscribe((s, changed) => {
    if (!VIEW_KEYS.some((key) => changed.has(key))) return;
    views.schedule();
    if (changed.has("trace") || changed.has("step") || changed.has("lessonStop")) refreshAsks();
  });

  let finished = false;
  function finish() {
    if (finished) return;
    finished = true;
    unsubscribe();
    views.stop();
    sessionStorage.removeItem(STORE_KEY);
    [ui.bar, join, boardView.dialog].forEach((element) => element.remove());
    update({ classRole: "" });
    start.hidden = false;
    start.disabled = false;
  }

  if (fresh) showModal(join);
}

/** The bar's buttons: each sends its message to the class (`end()` takes the bar down). */
function listenToBar(ui, { socket, views, join, boardView, mode, asked, end }) {
  ui.pause.addEventListener("click", () => socket.send({ type: "mode", mode: mode() === "paused" ? "follow" : "paused" }));
  ui.free.addEventListener("click", () => socket.send({ type: "mode", mode: "free" }));
  ui.gather.addEventListener("click", () => socket.send({ type: "mode", mode: "follow" }));
  ui.ask.addEventListener("click", () => {
    const a = asked();
    if (!a) return;
    views.now(); // the question is about the view the class has
    socket.send({ type: "ask", kind: a.kind, node: a.node, edge: a.edge, label: a.label });
  });
  ui.reveal.addEventListener("click", () => socket.send({ type: "reveal", names: ui.names.checked }));
  ui.showCode.addEventListener("click", () => showModal(join));
  ui.boardButton.addEventListener("click", () => showModal(boardView.dialog));
  ui.end.addEventListener("click", () => {
    socket.send({ type: "end" });
    socket.close();
    end();
  });
}
