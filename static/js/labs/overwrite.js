// The = bug: a switch between accumulating (+=) and overwriting (=) gradients, and a summary of
// what the overwrite lost on this program.

import { compactText } from "../core/format.js";
import { t } from "../core/i18n.js";
import { h, toggleSwitch } from "../core/dom.js";
import { nodeName } from "../core/names.js";
import { contributionsOf, nodeById, wrongNodes } from "./contributions.js";

/** One sentence per lost contribution: who passed it, who overwrote it. */
export function lostSentences(trace) {
  const { items } = contributionsOf(trace);
  const sentences = [];
  for (const item of items) {
    if (!item.c.lost || item.overwrittenAt === null) continue;
    const by = items.find((other) => other.frame === item.overwrittenAt);
    const target = nodeName(nodeById(trace, item.c.to));
    sentences.push(t("ui.overwrite.lost", {
      contribution: compactText(item.c.contribution), consumer: nodeName(nodeById(trace, item.consumer)), target,
      by: compactText(by.c.contribution), other: nodeName(nodeById(trace, by.consumer)),
    }));
  }
  return sentences;
}

/** Lines "grad[a] = 3, correct 4" for every wrong gradient. */
export function wrongSentences(trace) {
  return wrongNodes(trace).map((n) => t("ui.lab.wrong_grad", { name: nodeName(n), grad: compactText(n.grad), correct: compactText(n.correct_grad) }));
}

/** The = bug's lab card on `scope`; `setLab(lab)` makes a lab the active one. */
export function overwriteSection(scope, setLab) {
  const toggle = toggleSwitch({
    off: t("ui.overwrite.off"), on: t("ui.overwrite.on"), label: t("ui.overwrite.label"),
    testId: "lab-overwrite", onChange: (on) => setLab(on ? "overwrite" : null),
  });
  const result = h("div", { class: "lab-result", "data-testid": "lab-overwrite-result", "aria-live": "polite" });
  const section = h("section", { class: "lab-card", "aria-labelledby": "lab-overwrite-title" },
    h("h3", { id: "lab-overwrite-title", text: t("ui.overwrite.title") }),
    h("p", { class: "lab-hint", text: t("ui.overwrite.hint") }),
    toggle.element, result);

  scope.store.subscribe((s, changed) => {
    if (!["lab", "mode", "trace"].some((k) => changed.has(k))) return;
    toggle.set(s.lab === "overwrite");
    section.classList.toggle("active", s.lab === "overwrite");
    const trace = s.trace;
    if (s.lab !== "overwrite" || !trace || trace.mode !== "overwrite") {
      result.replaceChildren();
      return;
    }
    const wrong = wrongSentences(trace);
    const lost = lostSentences(trace);
    if (wrong.length === 0) {
      result.replaceChildren(h("p", { class: "lab-ok", text: t("ui.overwrite.ok") }));
      return;
    }
    result.replaceChildren(
      h("p", { class: "lab-bad", text: t("ui.overwrite.wrong", { count: wrong.length, list: wrong.join("; ") }) }),
      ...lost.map((sentence) => h("p", { class: "lab-detail", text: sentence })),
    );
  });
  return section;
}
