// Light / dark / automatic (the system's prefers-color-scheme) theme, remembered per browser.

import { t } from "./i18n.js";

const MODES = ["auto", "light", "dark"];
const LABELS = { auto: "ui.theme.auto", light: "ui.theme.light", dark: "ui.theme.dark" };

function read() {
  try {
    return localStorage.getItem("chainrule-theme") || "auto";
  } catch {
    return "auto";
  }
}

function apply(button, mode) {
  if (mode === "auto") delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = mode;
  button.setAttribute("aria-label", t("ui.theme.label", { mode: t(LABELS[mode]) }));
  button.title = t("ui.theme.title", { mode: t(LABELS[mode]) });
}

export function mountTheme(button) {
  let mode = MODES.includes(read()) ? read() : "auto";
  apply(button, mode);
  button.addEventListener("click", () => {
    mode = MODES[(MODES.indexOf(mode) + 1) % MODES.length];
    try {
      localStorage.setItem("chainrule-theme", mode);
    } catch {
      // storage may be disabled; the choice then lasts for this page only
    }
    apply(button, mode);
  });
}
