// A student's page in a live class (`/c/<code>`): it follows the teacher (live-class-apply.js),
// says so in a status line (`class-status`, data-state following | paused | free | connecting |
// offline | ended | full | unknown), answers the teacher's questions and shows, on the reveal,
// whether the answer was right and the class's board.
//
// The student's id is random and kept for this tab (sessionStorage): a reload is the same
// student, with the same answer. An answer is shown as sent only once the server acknowledged
// it; until then it is sent again on every reconnection.

import { apiUrl } from "./api.js";
import { barOf, DIAGNOSES, drawBoard } from "./live-class-board.js";
import { createFollower } from "./live-class-apply.js";
import { openClassSocket } from "./live-class-socket.js";
import { compactText, preciseText } from "./format.js";
import { lang, t } from "./i18n.js";
import { h } from "./lab-dom.js";
import { isClose, parseGuess } from "./lab-predict.js";
import { richText } from "./lesson.js";
import { HIDE_KEYS, update } from "./state.js";

const NAME_KEY = "chainrule.class.nickname";
const STATUS = {
  connecting: "ui.class.status.connecting",
  offline: "ui.class.status.offline",
  following: "ui.class.status.following",
  paused: "ui.class.status.paused",
  free: "ui.class.status.free",
  ended: "ui.class.status.ended",
};

function randomId() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** This tab's id in class `code` (the same across reloads). */
function studentId(code) {
  const key = `chainrule.class.${code}.student`;
  let id = sessionStorage.getItem(key);
  if (!id) {
    id = randomId();
    sessionStorage.setItem(key, id);
  }
  return id;
}

/** The class bar of a student's page, mounted before the workspace. */
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
  const verdict = h("p", { class: "class-verdict", "data-testid": "class-verdict", role: "status" });
  const board = h("section", { class: "class-board", "data-testid": "class-board", hidden: true });
  const question = h("section", { class: "class-question", "data-testid": "class-question", hidden: true }, form, answerStatus, verdict, board);
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
  return { bar, status, name, prompt, answer, form, answerStatus, verdict, board, question, paused, join };
}

/** Join class `code` as a student; `recompute` is main.js's (see live-class-apply.js). */
export function mountStudent(code, { recompute }) {
  const ui = studentBar(code);
  document.querySelector(".workspace").before(ui.bar);
  document.getElementById("graph-wrap").append(ui.paused);
  document.body.classList.add("class-student");
  ui.name.value = localStorage.getItem(NAME_KEY) ?? "";

  const follower = createFollower({ recompute });
  const student = studentId(code);
  let snapshot = null;   // the last state of the class
  let mine = null;       // {question, value, seq, acked} — this student's answer
  let seq = 0;
  let connection = "connecting";

  function setStatus(state, text) {
    ui.status.dataset.state = state;
    ui.status.textContent = text;
    document.body.dataset.classState = state;
    ui.join.hidden = !["unknown", "ended"].includes(state);
  }

  function showStatus() {
    if (connection !== "open") {
      if (connection !== "closed") setStatus(snapshot ? "offline" : "connecting", t(snapshot ? STATUS.offline : STATUS.connecting));
      return;
    }
    if (!snapshot) return;
    const shown = { follow: "following", paused: "paused", free: "free" }[snapshot.mode];
    setStatus(shown, t(STATUS[shown]));
    ui.paused.hidden = shown !== "paused";
  }

  function showQuestion() {
    const q = snapshot?.question;
    ui.question.hidden = !q;
    if (!q) return;
    ui.question.dataset.question = q.id;
    ui.question.dataset.open = String(q.open);
    ui.prompt.textContent = t("ui.class.prompt", { label: q.label });
    ui.form.hidden = !q.open;
    const answered = mine && mine.question === q.id ? mine : null;
    ui.answerStatus.textContent = !answered || !q.open ? "" // revealed: the verdict says it
      : answered.acked ? t("ui.class.answer_sent", { value: preciseText(answered.value) })
        : t("ui.class.answer_sending", { value: preciseText(answered.value) });
    ui.answerStatus.dataset.acked = String(Boolean(answered?.acked));
    showVerdict(q, answered);
    drawBoard(ui.board, snapshot.board?.question === q.id ? snapshot.board : null, q);
  }

  function showVerdict(q, answered) {
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
    const match = snapshot.board ? barOf(snapshot.board, answered.value, isClose) : null;
    const why = match?.diagnosis && DIAGNOSES[match.diagnosis] ? t(DIAGNOSES[match.diagnosis]) : "";
    richText(ui.verdict, why
      ? t("ui.class.verdict.wrong_because", { label: q.label, truth, guess: compactText(answered.value), mistake: why })
      : t("ui.class.verdict.wrong", { label: q.label, truth, guess: compactText(answered.value) }));
  }

  function apply(next) {
    if (snapshot && next.version <= snapshot.version) return;
    snapshot = next;
    const open = next.question?.open ? next.question : null;
    if (next.mode === "free") {
      follower.stop();
      update({ hide: [] });
    } else {
      update({ hide: HIDE_KEYS.filter((key) => key !== "narration") });
      follower.follow(next.view, open);
    }
    showStatus();
    showQuestion();
  }

  function sendAnswer() {
    if (mine && !mine.acked) socket.send({ type: "answer", question: mine.question, value: mine.value, seq: mine.seq });
  }

  if (!code) { // `/c` alone, or a code that cannot be one: ask for it
    setStatus("unknown", t("ui.class.type_code"));
    return;
  }
  const socket = openClassSocket(code, {
    hello: () => ({ type: "hello", role: "student", student, name: ui.name.value, lang: lang() }),
    onConnection: (state) => {
      connection = state;
      showStatus();
    },
    onMessage: (message) => {
      if (message.type === "welcome") {
        if (message.answer) mine = { ...message.answer, seq: -1, acked: true };
        sendAnswer();
      } else if (message.type === "snapshot") {
        apply(message);
      } else if (message.type === "ack" && mine && message.seq === mine.seq) {
        mine.acked = true;
        showQuestion();
      } else if (message.type === "ended") {
        follower.stop();
        setStatus("ended", t(STATUS.ended));
        ui.paused.hidden = true;
      } else if (message.type === "error") {
        const final = ["NoClass", "ClassFull", "RateLimited"].includes(message.error.type) && !snapshot;
        if (final) setStatus(message.error.type === "ClassFull" ? "full" : "unknown", message.error.message);
        else ui.answerStatus.textContent = message.error.message;
      }
    },
  });

  ui.form.addEventListener("submit", (event) => {
    event.preventDefault();
    const q = snapshot?.question;
    const guess = parseGuess(ui.answer.value);
    if (!q?.open) return;
    if (typeof guess === "number" && Number.isNaN(guess)) {
      ui.answerStatus.textContent = t("ui.class.not_a_number");
      return;
    }
    seq += 1;
    mine = { question: q.id, value: guess, seq, acked: false }; // ∞ and NaN as the API names them
    sendAnswer();
    showQuestion();
  });
  ui.name.addEventListener("change", () => {
    localStorage.setItem(NAME_KEY, ui.name.value);
    socket.send({ type: "name", name: ui.name.value });
  });
  showStatus();
}
