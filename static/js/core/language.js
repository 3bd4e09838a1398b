// The header's language menu (English, Русский, Eesti, each named in itself). Choosing one opens
// this view's link in that language: the page is the server's, rendered in the language of
// `?lang=` (app/http/pages.py), and the link carries everything a share link does (core/links.js
// URL_FIELDS: program, values, step, lesson and stop, the Train lab, what is hidden), so the
// program, its values and the step survive while every word, the narration and the messages
// change. The link keeps `lang`, so it opens in the same language for whoever it is sent to.

import { shareUrl } from "../io/share.js";

/** Switch the page to the language `select` names (its value: en, ru, et), keeping `scope`'s view. */
export function mountLanguageMenu(select, scope) {
  select.addEventListener("change", () => {
    window.location.assign(shareUrl(scope.store.state, { lang: select.value }));
  });
}
