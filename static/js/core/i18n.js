// The words the page shows, in its language: the `ui.*` templates of one catalogue
// (locales/<lang>.json; English is the source, Russian and Estonian have the same keys and
// placeholders). The server embeds them in the page as the JSON data block #ui-text,
// `{"lang": "ru", "text": {key after "ui." → template}, "sentences": {key → template}}`
// (engine/i18n.py ui_catalogue); an embedded player is given the same object (embed.js
// mountPlayer's `ui`) and calls useCatalogue. `sentences` are the engine's own sentences that
// the page also writes, by their whole keys (`descent.*`: the Train lab's descent in the page,
// train/descend.js), filled as the engine fills them.
//
//   import { t } from "./i18n.js";
//   button.textContent = t("ui.transport.play");
//   label.textContent = t("ui.slider.value", { name });   // "{name} value" filled
//
// Keys are written whole, as literals (tests/browser/test_languages.py checks that every one is
// in the catalogue and that the catalogue has no other). A key the catalogue lacks shows as the
// key itself (a visible slip, never an empty label) and is reported once on the console.
// Numbers are formatted before they are filled in (core/format.js): the catalogue holds only words.

const PLACEHOLDER = /\{([A-Za-z_]\w*)\}/g;

let catalogue = null;
const reported = new Set();

/** Use `ui` ({lang, text, sentences}) from now on: an embedded player's words. */
export function useCatalogue(ui) {
  catalogue = { lang: ui?.lang ?? "en", text: ui?.text ?? {}, sentences: ui?.sentences ?? {} };
}

/** The page's catalogue, read from its data block the first time a word is needed. */
function current() {
  if (catalogue) return catalogue;
  const block = typeof document === "undefined" ? null : document.getElementById("ui-text");
  useCatalogue(block ? JSON.parse(block.textContent) : null);
  return catalogue;
}

function report(problem) {
  if (reported.has(problem)) return;
  reported.add(problem);
  console.error(`chainrule i18n: ${problem}`);
}

/** The language of the words shown (`en`, `ru`, `et`). */
export function lang() {
  return current().lang;
}

/**
 * The template `key` ("ui.…") of the page's language with its `{name}` placeholders filled from
 * `params` (numbers and texts, written as they are). A missing key gives the key; a missing
 * parameter leaves its placeholder; both are reported on the console.
 */
export function t(key, params = {}) {
  const { text, sentences } = current();
  const template = key.startsWith("ui.") ? text[key.slice(3)] : sentences[key];
  if (template === undefined) {
    report(`no text for ${key} in the ${current().lang} catalogue`);
    return key;
  }
  const parts = partsOf(template);
  let out = parts[0];
  for (let i = 1; i < parts.length; i += 2) {
    const name = parts[i];
    if (Object.hasOwn(params, name)) out += String(params[name]);
    else {
      report(`${key} needs {${name}}`);
      out += `{${name}}`;
    }
    out += parts[i + 1];
  }
  return out;
}

const parsedTemplates = new Map(); // template → [text, name, text, …, name, text]

/** A template split at its placeholders, once (a slider move fills 1,000 cards' labels). */
function partsOf(template) {
  let parts = parsedTemplates.get(template);
  if (!parts) parsedTemplates.set(template, (parts = template.split(PLACEHOLDER)));
  return parts;
}
