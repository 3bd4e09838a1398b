// Light / dark / automatic (the system's prefers-color-scheme) theme, remembered per browser.

const MODES = ["auto", "light", "dark"];
const LABELS = { auto: "automatic", light: "light", dark: "dark" };

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
  button.setAttribute("aria-label", `Colour theme: ${LABELS[mode]}`);
  button.title = `Colour theme: ${LABELS[mode]} (click to change)`;
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
