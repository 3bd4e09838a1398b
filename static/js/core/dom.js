// Small DOM helpers: elements built with createElement and textContent only.

/** `h("button", {class, text, type, onclick, "aria-label": ...}, ...children)`. */
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") el.className = value;
    else if (key === "text") el.textContent = value;
    else if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  el.append(...children.flat().filter((c) => c !== null && c !== undefined && c !== false));
  return el;
}

// The writers below write only a change. Chromium restyles an element whenever one of these is
// written, even with the value it already had. The page writes them on every slider move, so
// unchanged writes add up (issue 25).

/** Write `el`'s text: its one text node rewritten in place (textContent removes it and makes
 *  another, both laid out again: thousands per redraw of a big graph). */
export function writeText(el, text) {
  const only = el.firstChild;
  if (only && only === el.lastChild && only.nodeType === Node.TEXT_NODE) only.data = text;
  else el.textContent = text;
}

/** Set `el`'s text. */
export function setText(el, text) {
  if (el.textContent !== text) writeText(el, text);
}

// A preformatted text (white-space: pre) past this many lines is written in parts of this many:
// each a block the browser lays out only near the screen (`.text-part`, content-visibility:
// auto), its size off screen said beforehand from its lines and its longest line (a monospace
// font's `ch`). micrograd's demo's program, 3,861 lines and 2.2 MB, was laid out whole before the
// player's first paint: 114 ms, in a box that shows twelve lines (issue 42).
const TEXT_PART_LINES = 100;
const preTexts = new WeakMap(); // element → the text setPreText last wrote in it

/** Set `el`'s preformatted text, `text`, in parts when it is long (TEXT_PART_LINES): the same
 *  textContent either way. */
export function setPreText(el, text) {
  // Compared with the text last written, not read back: a text in parts is read back by joining
  // them (2.2 MB on every slider move of micrograd's demo, whose trace keeps its source).
  if (preTexts.get(el) === text) return;
  preTexts.set(el, text);
  const lines = text.split("\n");
  if (lines.length <= TEXT_PART_LINES) {
    writeText(el, text);
    return;
  }
  const parts = [];
  for (let first = 0; first < lines.length; first += TEXT_PART_LINES) {
    const part = lines.slice(first, first + TEXT_PART_LINES);
    const last = first + TEXT_PART_LINES >= lines.length;
    const span = h("span", { class: "text-part", text: part.join("\n") + (last ? "" : "\n") });
    span.style.setProperty("--lines", String(part.length));
    span.style.setProperty("--columns", String(Math.max(...part.map((line) => line.length))));
    parts.push(span);
  }
  el.replaceChildren(...parts);
}

/** Set `el`'s class attribute. */
export function setClass(el, className = "") {
  if (el.className !== className) el.className = className;
}

/** Show or hide `el`. */
export function setHidden(el, hidden) {
  if (el.hidden !== hidden) el.hidden = hidden;
}

/** Set `el`'s attribute `name` to `value` (a string). */
export function setAttr(el, name, value) {
  if (el.getAttribute(name) !== value) el.setAttribute(name, value);
}

/** Set `el`'s properties (`disabled`, `value`, `max`…) to those of `props`: {name: value}. */
export function setProps(el, props) {
  for (const key in props) if (el[key] !== props[key]) el[key] = props[key];
}

/** Set the `data-*` attributes of `el` to those of `data`: {name: string} (dataset's names). */
export function setData(el, data) {
  for (const key in data) if (el.dataset[key] !== data[key]) el.dataset[key] = data[key];
}

/** Put `children` in `parent` in this order after its first `skip` children, moving only what is
 *  out of place (a child is moved when one that was not there is put before it: keepChildren). */
export function arrange(parent, children, skip = 0) {
  children.forEach((child, i) => {
    const at = parent.children[skip + i];
    if (at !== child) parent.insertBefore(child, at ?? null);
  });
}

/** `parent`'s children made `children`: the others removed first, then `arrange`d, so a child
 *  kept in its order is never taken out (a button taken out and put back between its mousedown
 *  and mouseup gets no click: Chromium drops it). */
export function keepChildren(parent, children) {
  const kept = new Set(children);
  for (const child of [...parent.children]) if (!kept.has(child)) child.remove();
  arrange(parent, children);
}

/** `text` with `backticks` as <code> spans: DOM nodes only, never HTML from a string. */
export function richText(element, text) {
  element.replaceChildren(...text.split("`").map((part, i) => {
    if (i % 2 === 0) return document.createTextNode(part);
    return h("code", { class: "math", text: part });
  }));
}

/**
 * A switch (role="switch" button: Enter and Space toggle it) between two named positions.
 * `onChange(on)` is called on user toggles; `set(on)` shows a state without calling it.
 */
export function toggleSwitch({ off, on, label, testId, onChange }) {
  const button = h("button", {
    type: "button", role: "switch", class: "lab-switch", "aria-checked": "false",
    "aria-label": label, "data-testid": testId,
  }, h("span", { class: "lab-switch-side off", text: off }), h("span", { class: "lab-switch-track", "aria-hidden": "true" },
    h("span", { class: "lab-switch-thumb" })), h("span", { class: "lab-switch-side on", text: on }));
  button.addEventListener("click", () => onChange(button.getAttribute("aria-checked") !== "true"));
  return {
    element: button,
    set(value) {
      button.setAttribute("aria-checked", String(Boolean(value)));
    },
  };
}
