// The teacher's side of a live class: the Class button starts one (POST /api/class with the
// view shown), the join dialog shows the code, the link and its QR code big enough for the back
// row, and the class bar drives it: Pause, Free, Bring back, Ask (a value the pulse has not
// shown yet), the live count of answers, Reveal (the board), the students (who is connected,
// Remove, lock joining: live-class/roster.js), End. Every move of this page's
// view (program, values, toggles, 2D/3D, lesson stop, step) goes to the class, at most every
// SEND_EVERY_MS. The token lives in this tab only (sessionStorage): a reload drives on.

import { apiUrl, withLang } from "../core/api.js";
import { h } from "../core/dom.js";
import { countText } from "../core/format.js";
import { lang, t } from "../core/i18n.js";
import { createDialog, showModal } from "../core/keys.js";
import { currentLesson } from "../lessons/stops.js";
import { drawBoard } from "./board.js";
import { createFollower } from "./apply.js";
import { cellPicker } from "./cell-picker.js";
import { askable, askableCells } from "./questions.js";
import { qrSvg } from "./qr.js";
import { rosterDialog } from "./roster.js";
import { openClassSocket } from "./socket.js";
import { sandboxProgram } from "../sandbox/sandbox.js";

const STORE_KEY = "chainrule.class.teacher";
const LINK_PREFIX = "#teach=";

/** The teacher link of class `info`: this page's address with the code and the token after `#` (a fragment never reaches a server, its logs or a Referer). */
function teacherLink(info) {
  return `${apiUrl("")}${LINK_PREFIX}${info.code}.${info.token}`;
}

/** The class a teacher link opened on this page ({code, token}), or null; the fragment is taken out of the address at once. */
function linkedClass() {
  if (!window.location.hash.startsWith(LINK_PREFIX)) return null;
  const [code, token] = window.location.hash.slice(LINK_PREFIX.length).split(".");
  history.replaceState(null, "", window.location.pathname + window.location.search);
  return code && token ? { code, token } : null;
}

/** The class `linked` ({code, token}) as `run` takes it, from GET /api/class/{code}. */
async function linkedInfo(linked) {
  const response = await fetch(apiUrl(`api/class/${encodeURIComponent(linked.code)}`), { headers: { accept: "application/json" } });
  const payload = await response.json().catch(() => null);
  if (!response.ok) throw new Error(payload?.error?.message ?? `HTTP ${response.status}`);
  return { ...payload, join_path: `/c/${payload.shown_code}`, token: linked.token };
}
const SEND_EVERY_MS = 50;
const VIEW_KEYS = ["trace", "tensor", "source", "values", "presetId", "expandDerived", "finalGrads", "foldConstants", "gradMap", "view3d", "lessonId", "lessonStop", "step"];

/**
 * The view the class follows, or null while the program typed is not the one shown. Code that
 * ran in the sandbox is followed as the straight-line program its run was read as: the class
 * (and the server) never get the code, and a student's page runs nothing.
 */
export function currentView(s) {
  const source = sandboxProgram(s) ?? s.source;
  const shown = s.trace ?? s.tensor; // a tensor program's reply (tensor/view.js) is shown too
  if (!shown || shown.source !== source) return null;
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

const askKey = (a) => (a.tensor != null ? `${a.kind}:${a.tensor}:${a.index.join(",")}` : `${a.kind}:${a.node}:${a.edge}`);

/** The `ask` message of `a` (one of asksAt's): a node, an edge, or a tensor's cell. */
const askMessage = (a) => (a.tensor != null
  ? { type: "ask", kind: a.kind, tensor: a.tensor, index: a.index, label: a.label }
  : { type: "ask", kind: a.kind, node: a.node, edge: a.edge, label: a.label });

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
  const students = button("", "class-students", { class: "class-count ghost", "data-count": "0", title: t("ui.class.roster.open"), "aria-haspopup": "dialog" });
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
  const link = h("a", { class: "class-teacher-link", "data-testid": "class-teacher-link", href: teacherLink(info), target: "_blank", rel: "noopener noreferrer", title: t("ui.class.teacher_link_title"), text: t("ui.class.teacher_link") });
  const hold = h("p", { class: "class-hold", "data-testid": "class-hold", hidden: true });
  const lost = h("p", { class: "class-lost", "data-testid": "class-connection", role: "status", hidden: true, text: t("ui.class.status.offline") });
  const askGroup = h("span", { class: "class-ask-group" }, what, ask);
  const bar = h("section", { class: "class-bar teacher", "data-testid": "class-bar", "aria-label": t("ui.class.bar_label") },
    h("div", { class: "class-bar-row" }, showCode, students, pause, free, gather,
      askGroup, answers, h("label", { class: "toggle" }, names, ` ${t("ui.class.names")}`), reveal, boardButton, link, end),
    lost, hold);
  // askMenu: what the Ask menu was last filled with (fillAskMenu)
  return { bar, lost, students, pause, free, gather, what, ask, askGroup, answers, names, reveal, boardButton, showCode, end, hold, askMenu: null };
}

/**
 * Mount the Class button into `actions` (the header's) on `scope`; the class bar goes before
 * `workspace`. A class this tab started and has not ended is taken up again at once (a reload).
 */
export function mountTeacher({ actions, workspace }, scope, { recompute } = {}) {
  const start = button(t("ui.class.start"), "class-start", { title: t("ui.class.start_title") });
  const status = h("span", { class: "class-start-status", role: "status", "data-testid": "class-status", "data-state": "" });
  actions.append(start, status);
  const page = { scope, workspace, start, status, recompute };
  start.addEventListener("click", async () => {
    const view = currentView(scope.store.state);
    if (!view) return;
    start.disabled = true;
    status.dataset.state = "";
    status.textContent = "";
    try {
      const info = await createClass(view);
      sessionStorage.setItem(STORE_KEY, JSON.stringify(info));
      run(info, page, { fresh: true });
    } catch (err) {
      status.textContent = t("ui.class.start_failed", { message: err.message });
      start.disabled = false;
    }
  });
  const linked = linkedClass();
  if (linked) { // a teacher link: this page takes the class
    linkedInfo(linked).then((info) => {
      sessionStorage.setItem(STORE_KEY, JSON.stringify(info));
      run(info, page, { fresh: false, adopt: true });
    }).catch((err) => {
      status.textContent = t("ui.class.start_failed", { message: err.message });
    });
    return;
  }
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
function viewSender(socketOf, state, held = () => false) {
  let sent = "";
  let timer = null;
  let lastSent = 0;

  function now() {
    clearTimeout(timer);
    timer = null;
    if (held()) return; // this page is still taking on the class's view
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

/** The values the class can be asked in state `s`, the open lesson stop's question first; on a tensor program, its cells. */
function asksAt(s) {
  if (s.tensor && !s.trace) return askableCells(s.tensor, s.step);
  const asks = askable(s.trace, s.step);
  const lessonQ = currentLesson(s)?.stops[s.lessonStop]?.question;
  if (lessonQ) {
    const i = asks.findIndex((a) => a.kind === lessonQ.of && a.node === lessonQ.node);
    if (i >= 0) asks.unshift({ ...asks.splice(i, 1)[0], lesson: true });
  }
  return asks;
}

/** Fill the Ask menu with `asks`, keeping the value chosen while it can still be asked; a tensor's cells in a group of their own. */
function fillAskMenu(ui, asks) {
  // New numbers of the same program (a drag) ask the same: the menu stays as it is.
  const shown = asks.map((a) => `${askKey(a)} ${a.label} ${Boolean(a.lesson)}`).join("\n");
  if (ui.askMenu === shown) return;
  ui.askMenu = shown;
  const chosen = ui.what.value;
  const options = [];
  for (const a of asks) {
    const option = new Option(a.lesson ? t("ui.class.ask_lesson", { label: a.label }) : a.label, askKey(a));
    if (!a.group) options.push(option);
    else if (options.at(-1)?.tagName === "OPTGROUP" && options.at(-1).label === a.group) options.at(-1).append(option);
    else options.push(h("optgroup", { label: a.group }, option));
  }
  ui.what.replaceChildren(...options);
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
function onTeacherMessage(message, { ui, session, views, show, roster }) {
  // The view goes once the server has read the hello: until then a message is held to a
  // student's size (app/live_class/connection.py bound_frames), and a long program would be refused.
  if (message.type === "welcome") {
    views.resend();
    views.schedule();
  }
  else if (message.type === "snapshot") show(message);
  else if (message.type === "students") roster(message);
  else if (message.type === "answers" && session.snapshot?.question?.id === message.question) {
    showCount(ui.answers, message.count, t("ui.class.answers", { count: countText(message.count) }));
  } else if (message.type === "ended") {
    session.finish({ ended: true });
  } else if (message.type === "moved") {
    session.finish({ moved: true });
  } else if (message.type === "store") { // the class's store lost, or back: the view goes again
    session.showLost({ storeDown: !message.up });
    if (message.up) {
      views.resend();
      views.schedule();
    }
  } else if (message.type === "error") {
    if (message.error.type === "StoreDown") views.resend(); // refused: sent again once the store is back
    ui.hold.hidden = false;
    ui.hold.textContent = message.error.message;
  }
}

/** Drive the class `info` ({code, shown_code, join_path, token, max_students}) from `page`'s scope. */
function run(info, page, { fresh, adopt = false }) {
  const { scope, start, status } = page;
  const { state, subscribe, update } = scope.store;
  start.hidden = true;
  status.textContent = "";
  const ui = teacherBar(info);
  page.workspace.before(ui.bar);
  update({ classRole: "teacher" });
  const join = joinDialog(info, scope.host);
  const boardView = boardDialog(scope.host);
  const roster = rosterDialog(scope.host, (message) => socket.send(message));
  const showStudents = () => showCount(ui.students, roster.count(), roster.countText());
  const session = { snapshot: null, boardShown: null, asks: [], finish: (how) => finish(how) };
  // "Connection to the class lost" while this page's socket is down or the class's store is away.
  const lostNow = { connection: "connecting", storeDown: false };
  session.showLost = (changes) => {
    for (const [key, value] of Object.entries(changes)) if (value !== undefined) lostNow[key] = value;
    const lost = lostNow.storeDown || lostNow.connection === "retrying";
    ui.lost.hidden = !lost;
    ui.bar.dataset.lost = String(lost);
  };
  // Taken with a teacher link, this page first shows the class's view (its program, values and
  // step), as a student's page would, and only then drives: it never sends its own first.
  const adopting = { on: adopt, follower: null, view: null };
  const views = viewSender(() => socket, state, () => adopting.on);
  const adopted = () => {
    const v = adopting.view;
    const shown = state.trace ?? state.tensor;
    if (!adopting.on || !v || !shown || shown.source !== v.source || state.step !== v.step) return;
    adopting.on = false;
    adopting.follower.stop();
    views.resend();
    views.schedule();
  };
  const picker = cellPicker(page.workspace, ui.what, (key) => session.asks.some((a) => askKey(a) === key));
  const refreshAsks = () => {
    session.asks = asksAt(state);
    fillAskMenu(ui, session.asks);
    picker.mark(asked());
  };
  const show = (next) => {
    if (adopting.on && !adopting.view) {
      adopting.view = next.view;
      adopting.follower = createFollower(scope.store, { recompute: page.recompute });
      adopting.follower.follow(next.view, null);
      adopted();
    }
    showClass(next, { ui, session, boardView });
    roster.lock(Boolean(next.locked));
    showStudents();
    refreshAsks();
  };
  const socket = openClassSocket(info.code, {
    hello: () => ({ type: "hello", role: "teacher", token: info.token, lang: lang() }),
    onConnection: (connection, code) => {
      ui.bar.dataset.connection = connection;
      session.showLost({ connection, storeDown: connection === "open" ? false : undefined });
      if (connection === "closed") finish({ ended: code === 1000 || code === 4404, moved: code === 4409 }); // ended, or gone while this tab was away; or taken by another page
    },
    onMessage: (message) => onTeacherMessage(message, { ui, session, views, show, roster: (m) => { roster.show(m); showStudents(); } }),
  });
  roster.show({ count: 0, max: info.max_students, list: [] });
  showStudents();
  const asked = () => session.asks.find((a) => askKey(a) === ui.what.value);
  ui.what.addEventListener("change", () => picker.mark(asked()));
  listenToBar(ui, { socket, views, join, boardView, roster, mode: () => session.snapshot?.mode, asked, end: () => finish({ ended: true }) });

  const unsubscribe = subscribe((s, changed) => {
    if (adopting.on) adopted();
    if (!VIEW_KEYS.some((key) => changed.has(key))) return;
    views.schedule();
    if (["trace", "tensor", "step", "lessonStop"].some((key) => changed.has(key))) refreshAsks();
  });

  let finished = false;
  /** Take the bar down; `ended`: the class is over (here, or its end, expiry or loss heard), and the header says so. */
  function finish({ ended = false, moved = false } = {}) {
    if (finished) return;
    finished = true;
    socket.close();
    if (ended || moved) {
      status.dataset.state = ended ? "ended" : "moved";
      status.textContent = t(ended ? "ui.class.status.ended" : "ui.class.moved");
    }
    unsubscribe();
    picker.stop();
    views.stop();
    sessionStorage.removeItem(STORE_KEY);
    [ui.bar, join, boardView.dialog, roster.dialog].forEach((element) => element.remove());
    update({ classRole: "" });
    start.hidden = false;
    start.disabled = false;
  }

  if (fresh) showModal(join);
}

/** The bar's buttons: each sends its message to the class (`end()` takes the bar down). */
function listenToBar(ui, { socket, views, join, boardView, roster, mode, asked, end }) {
  ui.pause.addEventListener("click", () => socket.send({ type: "mode", mode: mode() === "paused" ? "follow" : "paused" }));
  ui.free.addEventListener("click", () => socket.send({ type: "mode", mode: "free" }));
  ui.gather.addEventListener("click", () => socket.send({ type: "mode", mode: "follow" }));
  ui.ask.addEventListener("click", () => {
    const a = asked();
    if (!a) return;
    views.now(); // the question is about the view the class has
    socket.send(askMessage(a));
  });
  ui.reveal.addEventListener("click", () => socket.send({ type: "reveal", names: ui.names.checked }));
  ui.showCode.addEventListener("click", () => showModal(join));
  ui.boardButton.addEventListener("click", () => showModal(boardView.dialog));
  ui.students.addEventListener("click", () => showModal(roster.dialog));
  ui.end.addEventListener("click", () => {
    socket.send({ type: "end" });
    socket.close();
    end();
  });
}
