// The SVG helpers every drawing layer shares: make an element, set an attribute or a text only
// when it changed, and a keyed enter/update/exit join. No drawing knowledge here.

import { writeText } from "./dom.js";

const SVG = "http://www.w3.org/2000/svg";
const joins = new WeakMap(); // layer element → Map key → element
const written = new WeakMap(); // element → {attrs: {name: text}, text}: what attr() and text() last wrote
let writes = 0; // attributes and texts actually written since the last takeWrites()

/** How many attributes and texts were written since the last call (the page's cost meter). */
export function takeWrites() {
  const count = writes;
  writes = 0;
  return count;
}

export function svgElement(tag, attrs = {}, className = "") {
  const el = document.createElementNS(SVG, tag);
  if (className) el.setAttribute("class", className);
  for (const [name, value] of Object.entries(attrs)) el.setAttribute(name, value);
  return el;
}

function writtenTo(el) {
  let record = written.get(el);
  if (!record) written.set(el, (record = { attrs: {}, text: undefined }));
  return record;
}

/** setAttribute, skipped when the value is unchanged (keeps 1,000-node updates cheap). */
export function attr(el, name, value) {
  const cache = writtenTo(el).attrs;
  const text = value === null || value === undefined ? null : String(value);
  if (cache[name] === text) return;
  cache[name] = text;
  writes += 1;
  if (text === null) el.removeAttribute(name);
  else el.setAttribute(name, text);
}

export function text(el, value) {
  const record = writtenTo(el);
  if (record.text === value) return;
  record.text = value;
  writes += 1;
  writeText(el, value);
}

const shapes = new WeakMap(); // element → the shape of the item it was made for

/** The element a join made for `key` in `layer`, or undefined. */
export function joined(layer, key) {
  return joins.get(layer)?.get(key);
}

/**
 * Keyed join: `enter(item)` makes an element, `update(el, item)` refreshes it, leftovers go. An
 * element made for an item of another shape (`shape(item)` differs from the one it was made for:
 * a card of another size) is made again.
 */
export function join(layer, items, key, enter, update, shape = () => "") {
  let elements = joins.get(layer);
  if (!elements) joins.set(layer, (elements = new Map()));
  const seen = new Set();
  for (const item of items) {
    const k = key(item);
    let el = elements.get(k);
    if (el && shapes.get(el) !== shape(item)) {
      el.remove();
      el = undefined;
    }
    if (!el) {
      el = enter(item);
      shapes.set(el, shape(item));
      elements.set(k, el);
      layer.appendChild(el);
    }
    update(el, item);
    seen.add(k);
  }
  for (const [k, el] of elements) {
    if (!seen.has(k)) {
      el.remove();
      elements.delete(k);
    }
  }
}

const CLICK_SLOP_PX = 4; // a press that moves further than this is a drag (a pan), not a click

/**
 * Call `onClick(pressed, event)` for each click on `svg` that was no drag, where `pressed` is the
 * element the press began on: panning captures the pointer, so the click itself lands on the SVG.
 */
export function onPlainClick(svg, onClick) {
  let down = null;
  svg.addEventListener("pointerdown", (event) => {
    down = { element: event.target, x: event.clientX, y: event.clientY };
  }, true);
  svg.addEventListener("click", (event) => {
    if (!down || Math.hypot(event.clientX - down.x, event.clientY - down.y) > CLICK_SLOP_PX) return;
    onClick(down.element, event);
  });
}
