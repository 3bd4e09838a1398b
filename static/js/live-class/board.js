// The board of a question's answers: a histogram (one bar per distinct answer, in order of value,
// the right one marked, a known mistake named under its bar), the count right, and the most
// common wrong answers by name ("forgot the `+=`: 3"). Built with the DOM API only; bar heights
// are a custom property set through CSSOM (the CSP allows no inline style attributes).

import { h, richText } from "../core/dom.js";
import { compactText, countText, fullText } from "../core/format.js";
import { t } from "../core/i18n.js";

// What each known mistake is called (app/live_class/questions.py names them).
export const DIAGNOSES = {
  overwrite: "ui.class.diagnosis.overwrite",
  one_path: "ui.class.diagnosis.one_path",
  missed_path: "ui.class.diagnosis.missed_path",
  upstream: "ui.class.diagnosis.upstream",
  local: "ui.class.diagnosis.local",
  added: "ui.class.diagnosis.added",
  sum_so_far: "ui.class.diagnosis.sum_so_far",
  data: "ui.class.diagnosis.data",
  sign: "ui.class.diagnosis.sign",
};

const diagnosisText = (key) => (DIAGNOSES[key] ? t(DIAGNOSES[key]) : "");

function bar(b, most) {
  const value = b.other ? t("ui.class.board.other") : compactText(b.value);
  const fill = h("span", { class: "board-bar-fill", "aria-hidden": "true" });
  fill.style.setProperty("--share", String(most ? b.count / most : 0));
  const caption = h("span", { class: "board-bar-caption" });
  if (b.right) caption.textContent = t("ui.class.board.right_mark");
  else if (b.diagnosis) richText(caption, diagnosisText(b.diagnosis));
  const item = h("li", {
    class: "board-bar", "data-value": b.other ? "" : fullText(b.value), "data-count": String(b.count),
    "data-right": String(b.right), "data-diagnosis": b.diagnosis ?? "",
  },
  h("span", { class: "board-bar-count", text: countText(b.count) }),
  h("span", { class: "board-bar-track" }, fill),
  h("span", { class: "board-bar-value", text: value }),
  caption);
  if (b.names?.length) item.append(h("span", { class: "board-bar-names", text: b.names.join(", ") }));
  return item;
}

/** Fill `container` with the board of `board` for `question` ({label}); empty it for null. */
export function drawBoard(container, board, question) {
  if (!board || !question) {
    container.replaceChildren();
    container.hidden = true;
    return;
  }
  container.hidden = false;
  container.dataset.total = String(board.total);
  container.dataset.right = String(board.right);
  const most = Math.max(0, ...board.bars.map((b) => b.count));
  const heading = h("h2", { class: "class-board-title", text: `${question.label} = ${compactText(board.truth)}` });
  const summary = h("p", { class: "class-board-summary", text: board.total
    ? t("ui.class.board.summary", { right: countText(board.right), total: countText(board.total) })
    : t("ui.class.board.no_answers") });
  const bars = h("ol", { class: "board-bars", "aria-label": t("ui.class.board.bars") }, board.bars.map((b) => bar(b, most)));
  const mistakes = h("ul", { class: "class-mistakes", "data-testid": "class-mistakes" });
  for (const m of board.mistakes) {
    const line = h("li", { "data-diagnosis": m.diagnosis, "data-count": String(m.count) });
    richText(line, t("ui.class.board.mistake", { mistake: diagnosisText(m.diagnosis), count: countText(m.count), value: compactText(m.value) }));
    mistakes.append(line);
  }
  container.replaceChildren(heading, summary, bars);
  if (board.mistakes.length) container.append(h("h3", { text: t("ui.class.board.mistakes") }), mistakes);
}

/** The bar of the board that `value` falls in, or null. */
export function barOf(board, value, isClose) {
  return board.bars.find((b) => !b.other && isClose(value, b.value)) ?? null;
}
