// A student's page in a live class (`/c/<code>`): it follows the teacher (live-class/apply.js),
// says so in a status line (`class-status`, data-state following | paused | free | connecting |
// offline (the connection or the class's store lost) | ended | removed (by the teacher) | full |
// locked (joining closed) | unknown), answers the
// teacher's questions and shows, on the reveal, whether the answer was right and the board.
//
// The student's id is the server's (given at the first join) and kept for this tab
// (sessionStorage): a reload is the same student, with the same answer. An answer is shown as
// sent only once the server acknowledged it; until then it is sent again on every reconnection.

import { apiUrl } from "../core/api.js";
import { h, richText } from "../core/dom.js";
import { compactText, preciseText } from "../core/format.js";
import { isClose, parseGuess } from "../labs/guess.js";
import { lang, t } from "../core/i18n.js";
import { HIDE_KEYS } from "../core/links.js";
import { createFollower } from "./apply.js";
import { barOf, DIAGNOSES, drawBoard } from "./board.js";
import { cellWords } from "./questions.js";
import { openClassSocket } from "./socket.js";

const NAME_KEY = "chainrule.class.nickname";
const STATUS = {
  connecting: "ui.class.status.connecting",
  offline: "ui.class.status.offline",
  following: "ui.class.status.following",
  paused: "ui.class.status.paused",
  free: "ui.class.status.free",
  ended: "ui.class.status.ended",
  removed: "ui.class.status.removed",
};
// A refusal before joining: the status line's state for each (final: the page stops trying).
const REFUSED = { NoClass: "unknown", RateLimited: "unknown", ClassFull: "full", ClassLocked: "locked", Removed: "removed" };

/** This tab's id in class `code` (the same across reloads): the one the server gave at the first join, or null before. */
const studentKey = (code) => `chainrule.class.${code}.student`;

// While the teacher drives, the page shows the graph and the narration alone (core/links.js HIDE_KEYS).
const FOLLOWING_HIDES = HIDE_KEYS.filter((key) => key !== "narration");

/** The class bar of a student's page (mounted before the workspace) and the pane's "eyes on the board" cover. */
function studentBar(code) {
  const status = h("p", { class: "class-status", "data-testid": "class-status", "data-state": "connecting", role: "status" });
  const name = h("input", {
    type: "text", maxlength: "24", autocomplete: "nickname", "data-testid": "class-name",
    placeholder: t("ui.class.name_placeholder"), "aria-label": t("ui.class.name_label"),
  });
  const codeChip = h("span", { class: "class-code-chip", text: code });
  const prompt = h("label", { class: "class-prompt", for: "class-answer" });
  const answer = h("input", { id: "class-answer", type: "text", inputmode: "decimal", autocomplete: "off", spellcheck: "false", "data-testid": "class-answer" });
  const send = h("button", { type: "submit", class: "primary", "data-testid": "class-answer-send", text: t("ui.class.answer_send") });
  const answerStatus = h("p", { class: "class-answer-status", "data-testid": "class-answer-status", role: "status" });
  const form = h("form", { class: "class-answer-form" }, prompt, answer, send);
  const hint = h("p", { class: "class-cell-hint", "data-testid": "class-cell-hint", hidden: true });
  const verdict = h("p", { class: "class-verdict", "data-testid": "class-verdict", role: "status" });
  const board = h("section", { class: "class-board", "data-testid": "class-board", hidden: true });
  const question = h("section", { class: "class-question", "data-testid": "class-question", hidden: true }, form, hint, answerStatus, verdict, board);
  const joinCode = h("input", { type: "text", autocomplete: "off", spellcheck: "false", maxlength: "16", "data-testid": "class-join-code", "aria-label": t("ui.class.join_label") });
  const join = h("form", { class: "class-join-form", hidden: true }, joinCode, h("button", { type: "submit", text: t("ui.class.join") }));
  join.addEventListener("submit", (event) => {
    event.preventDefault();
    const typed = joinCode.value.trim();
    if (typed) window.location.assign(apiUrl(`c/${encodeURIComponent(typed)}`));
  });
  const paused = h("div", { class: "class-paused", "data-testid": "class-paused", hidden: true },
    h("p", { text: t("ui.class.paused_title") }), h("p", { class: "class-paused-hint", text: t("ui.class.paused_hint") }));
  const bar = h("section", { class: "class-bar student", "data-testid": "class-bar", "aria-label": t("ui.class.bar_label") },
    h("div", { class: "class-bar-row" }, status, codeChip, name), join, question);
  return { bar, status, name, prompt, answer, form, hint, answerStatus, verdict, board, question, paused, join };
}

/** The status line's state and words: the connection's while it is not open, else the class's mode. */
function statusOf(connection, snapshot, storeDown) {
  if (connection === "closed") return null; // the last words stay (ended, refused)
  if (connection !== "open" || storeDown) {
    return snapshot || storeDown ? ["offline", STATUS.offline] : ["connecting", STATUS.connecting];
  }
  if (!snapshot) return null;
  const shown = { follow: "following", paused: "paused", free: "free" }[snapshot.mode];
  return [shown, STATUS[shown]];
}

/** Whether `answered` (this student's answer, or null) to the revealed question `q` was right, and why not. */
function showVerdict(ui, q, answered, board) {
  const revealed = !q.open && q.truth !== null;
  ui.verdict.hidden = !revealed;
  if (!revealed) return;
  const truth = compactText(q.truth);
  if (!answered) {
    ui.verdict.dataset.verdict = "none";
    ui.verdict.textContent = t("ui.class.verdict.none", { label: q.label, truth });
    return;
  }
  const right = isClose(answered.value, q.truth);
  ui.verdict.dataset.verdict = right ? "right" : "wrong";
  if (right) {
    ui.verdict.textContent = t("ui.class.verdict.right", { label: q.label, truth });
    return;
  }
  const match = board ? barOf(board, answered.value, isClose) : null;
  const why = match?.diagnosis && DIAGNOSES[match.diagnosis] ? t(DIAGNOSES[match.diagnosis]) : "";
  const guess = compactText(answered.value);
  richText(ui.verdict, why
    ? t("ui.class.verdict.wrong_because", { label: q.label, truth, guess, mistake: why })
    : t("ui.class.verdict.wrong", { label: q.label, truth, guess }));
}

/** The question card for the class's state `snapshot` and this student's answer `mine`; `reply` the tensor program shown, if any (a cell's question says what its gradient is). */
function showQuestion(ui, snapshot, mine, reply) {
  const q = snapshot?.question;
  ui.question.hidden = !q;
  if (!q) return;
  ui.question.dataset.question = q.id;
  ui.question.dataset.open = String(q.open);
  ui.prompt.textContent = t("ui.class.prompt", { label: q.label });
  const words = cellWords(reply, q);
  ui.hint.hidden = !words;
  ui.hint.textContent = words ? t("ui.class.cell_hint", words) : "";
  ui.form.hidden = !q.open;
  const answered = mine && mine.question === q.id ? mine : null;
  ui.answerStatus.textContent = !answered || !q.open ? "" // revealed: the verdict says it
    : answered.acked ? t("ui.class.answer_sent", { value: preciseText(answered.value) })
      : t("ui.class.answer_sending", { value: preciseText(answered.value) });
  ui.answerStatus.dataset.acked = String(Boolean(answered?.acked));
  const board = snapshot.board?.question === q.id ? snapshot.board : null;
  showVerdict(ui, q, answered, board);
  drawBoard(ui.board, board, q);
}

/** The status line says `state` in `text`; the root's data-class-state (live-class.css) follows it. */
function setStatus(ui, root, state, text) {
  ui.status.dataset.state = state;
  ui.status.textContent = text;
  root.dataset.classState = state; // this page's own controls rest while the teacher drives
  ui.join.hidden = !["unknown", "ended"].includes(state);
}

/** The status line and the paused cover for `session`'s connection and class. */
function showStatus(ui, root, session) {
  const status = statusOf(session.connection, session.snapshot, session.storeDown);
  if (!status) return;
  setStatus(ui, root, status[0], t(status[1]));
  if (session.connection === "open" && !session.storeDown) ui.paused.hidden = status[0] !== "paused";
}

/**
 * The class's state `next` (a snapshot, newer than the last) on this page: free, it is the
 * student's (nothing hidden); otherwise it follows the teacher's view, the open question held.
 */
function applySnapshot(next, { ui, root, session, store }) {
  if (session.snapshot && next.version <= session.snapshot.version) return;
  session.snapshot = next;
  if (next.mode === "free") {
    session.follower.stop();
    store.update({ hide: [] });
  } else {
    store.update({ hide: FOLLOWING_HIDES });
    session.follower.follow(next.view, next.question?.open ? next.question : null);
  }
  showStatus(ui, root, session);
  showQuestion(ui, session.snapshot, session.mine, store.state.tensor);
}

/** The class is over (`how`: "ended", or "removed" by the teacher): the page says so and is
 *  the student's again, on the last program shown. */
function endClass({ ui, root, session, store }, how = "ended") {
  session.follower.stop();
  session.ended = true;
  store.update({ hide: [] });
  setStatus(ui, root, how, t(STATUS[how]));
  ui.paused.hidden = true;
  ui.form.hidden = true;
}

/** What the class says (docs/live-class.md, Messages) on this page; `sendAnswer()` resends an unacknowledged answer. */
function onClassMessage(message, context) {
  const { ui, root, session, sendAnswer } = context;
  if (message.type === "welcome") {
    context.keepId(message.student);
    if (message.answer) session.mine = { ...message.answer, seq: -1, acked: true };
    sendAnswer();
  } else if (message.type === "snapshot") {
    applySnapshot(message, context);
  } else if (message.type === "ack" && session.mine && message.seq === session.mine.seq) {
    session.mine.acked = true;
    showQuestion(ui, session.snapshot, session.mine, context.store.state.tensor);
  } else if (message.type === "ended" || message.type === "removed") {
    endClass(context, message.type);
  } else if (message.type === "store") { // the class's store lost, or back: an unacknowledged answer goes again
    session.storeDown = !message.up;
    showStatus(ui, root, session);
    if (message.up) sendAnswer();
  } else if (message.type === "error") {
    const refused = REFUSED[message.error.type];
    if (refused && !session.snapshot) {
      setStatus(ui, root, refused, message.error.message);
      context.refused(); // the page is the visitor's: it opens on a preset, not an empty pane
    }
    else ui.answerStatus.textContent = message.error.message;
  }
}

/**
 * Join class `code` as a student on `scope`: the class bar goes before `workspace`, the paused
 * cover over `pane`; `recompute` and `paint` are main.js's (see live-class/apply.js);
 * `refused()` is called when the class refuses this page before showing it anything (no such
 * class, full, locked, this tab removed).
 */
export function mountStudent(code, { workspace, pane }, scope, { recompute, paint, refused = () => {} }) {
  const { root, store } = scope;
  const ui = studentBar(code);
  workspace.before(ui.bar);
  pane.append(ui.paused);
  store.update({ classRole: "student" });
  ui.name.value = localStorage.getItem(NAME_KEY) ?? "";
  if (!code) { // `/c` alone, or a code that cannot be one: ask for it
    setStatus(ui, root, "unknown", t("ui.class.type_code"));
    refused();
    return;
  }
  const key = studentKey(code);
  // The last state of the class, this student's answer ({question, value, seq, acked}), the socket's state.
  const session = { snapshot: null, mine: null, seq: 0, connection: "connecting", follower: createFollower(store, { recompute, paint }) };
  const sendAnswer = () => {
    const { mine } = session;
    if (mine && !mine.acked) socket.send({ type: "answer", question: mine.question, value: mine.value, seq: mine.seq });
  };
  const context = { ui, root, session, store, sendAnswer, refused, keepId: (id) => sessionStorage.setItem(key, id) };
  const socket = openClassSocket(code, {
    hello: () => ({ type: "hello", role: "student", student: sessionStorage.getItem(key), name: ui.name.value, lang: lang() }),
    onConnection: (connection, code) => {
      session.connection = connection;
      if (connection === "open") session.storeDown = false; // a new connection is told again if it still is
      if (connection === "closed" && code === 1000 && !session.ended) endClass(context); // the end, even if its word was lost
      else showStatus(ui, root, session);
    },
    onMessage: (message) => onClassMessage(message, context),
  });
  listenToAnswers(ui, { socket, question: () => session.snapshot?.question, answer(value) {
    session.seq += 1;
    session.mine = { question: session.snapshot.question.id, value, seq: session.seq, acked: false }; // ∞ and NaN as the API names them
    sendAnswer();
    showQuestion(ui, session.snapshot, session.mine, store.state.tensor);
  } });
  // The tensor program a question is about may arrive after the question: its words then.
  store.subscribe((s, changed) => {
    if (changed.has("tensor")) showQuestion(ui, session.snapshot, session.mine, s.tensor);
  });
  showStatus(ui, root, session);
}

/** The answer form (`answer(value)` for a number typed while a question is open) and the nickname. */
function listenToAnswers(ui, { socket, question, answer }) {
  ui.form.addEventListener("submit", (event) => {
    event.preventDefault();
    const guess = parseGuess(ui.answer.value);
    if (!question()?.open) return;
    if (typeof guess === "number" && Number.isNaN(guess)) {
      ui.answerStatus.textContent = t("ui.class.not_a_number");
      return;
    }
    answer(guess);
  });
  ui.name.addEventListener("change", () => {
    localStorage.setItem(NAME_KEY, ui.name.value);
    socket.send({ type: "name", name: ui.name.value });
  });
}
