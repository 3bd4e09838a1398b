// The = bug: a switch between accumulating (+=) and overwriting (=) gradients, and a summary of
// what the overwrite lost on this program.

import { compactText } from "./format.js";
import { h, nodeName, toggleSwitch } from "./lab-dom.js";
import { contributionsOf, nodeById, wrongNodes } from "./lab-trace.js";
import { subscribe } from "./state.js";

/** One sentence per lost contribution: who passed it, who overwrote it. */
export function lostSentences(trace) {
  const { items } = contributionsOf(trace);
  const sentences = [];
  for (const item of items) {
    if (!item.c.lost || item.overwrittenAt === null) continue;
    const by = items.find((other) => other.frame === item.overwrittenAt);
    const target = nodeName(nodeById(trace, item.c.to));
    sentences.push(`The ${compactText(item.c.contribution)} that ${nodeName(nodeById(trace, item.consumer))} passed to `
      + `grad[${target}] was overwritten by the ${compactText(by.c.contribution)} from ${nodeName(nodeById(trace, by.consumer))}.`);
  }
  return sentences;
}

/** Lines "grad[a] = 3, correct 4" for every wrong gradient. */
export function wrongSentences(trace) {
  return wrongNodes(trace).map((n) => `grad[${nodeName(n)}] = ${compactText(n.grad)}, correct ${compactText(n.correct_grad)}`);
}

export function overwriteSection({ setLab }) {
  const toggle = toggleSwitch({
    off: "+= add", on: "= overwrite", label: "Overwrite gradients with = instead of accumulating with +=",
    testId: "lab-overwrite", onChange: (on) => setLab(on ? "overwrite" : null),
  });
  const result = h("div", { class: "lab-result", "data-testid": "lab-overwrite-result", "aria-live": "polite" });
  const section = h("section", { class: "lab-card", "aria-labelledby": "lab-overwrite-title" },
    h("h3", { id: "lab-overwrite-title", text: "The = bug" }),
    h("p", { class: "lab-hint", text: "Each contribution replaces the gradient instead of adding to it. Which paths lose?" }),
    toggle.element, result);

  subscribe((s, changed) => {
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
      result.replaceChildren(h("p", { class: "lab-ok", text: "\u2713 No gradient is wrong here: every node gets at most one contribution, so = and += agree." }));
      return;
    }
    result.replaceChildren(
      h("p", { class: "lab-bad", text: `\u2717 ${wrong.length} wrong: ${wrong.join("; ")}` }),
      ...lost.map((sentence) => h("p", { class: "lab-detail", text: sentence })),
    );
  });
  return section;
}
