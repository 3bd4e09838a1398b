// A teacher's link hides parts of the page (`hide=editor,sliders,…`; state.hide, HIDE_KEYS):
// a class on the body per part, and lessons.css takes those parts out of view and so out of the
// tab order. This module is the only writer of those classes; it also keeps the panel area on
// a tab that is still there.

import { HIDE_KEYS, subscribe } from "./state.js";

export function mountHiding() {
  subscribe((s, changed) => {
    if (!changed.has("hide")) return;
    for (const key of HIDE_KEYS) document.body.classList.toggle(`hide-${key}`, s.hide.includes(key));
    const tabs = [...document.querySelectorAll("#panel-tabs [role=tab]")];
    const current = tabs.find((tab) => tab.getAttribute("aria-selected") === "true");
    if (current && current.offsetParent === null) tabs.find((tab) => tab.offsetParent !== null)?.click();
  });
}
