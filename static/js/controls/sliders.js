// One slider per leaf (range + number box + editable min/max), keyed by leaf name so a recompute
// updates rows in place. Moving a slider sets `state.values[name]` and asks for a recompute.
// Read-only sliders (`readOnly`) show the values, disabled.
// With many leaves the rows are compact, grouped (by where they live, else by name prefix) and
// filtered (controls/leaf-groups.js).

import { groupLeaves, groupTitle, MANY_LEAVES, passesFilter, placeOf } from "./leaf-groups.js";
import { arrange, h } from "../core/dom.js";
import { t } from "../core/i18n.js";
import { leafName } from "../core/names.js";
import { sameDrawing } from "../compute/merge-numbers.js";

/** A default range around `value` (±max(2|v|, 5)) on a round step grid. */
export function defaultRange(value) {
  const v = Number.isFinite(value) ? value : 0;
  const reach = Math.max(2 * Math.abs(v), 5);
  const step = 10 ** Math.floor(Math.log10((2 * reach) / 200));
  const round = (x) => Number(x.toPrecision(12));
  return {
    min: round(Math.floor((v - reach) / step) * step),
    max: round(Math.ceil((v + reach) / step) * step),
    step: round(step),
  };
}

/**
 * The range's `min`: at or below `lo`, and a whole number of steps below `value`, so that the
 * range's grid (min + n·step) goes through `value`: 6.8813735870195432 in steps of 0.1 from -6.9
 * would be shown at 6.9. (A range keeps about 15 digits; the leaf's value is kept by stepFrom.)
 */
export function alignedMin(value, lo, step) {
  if (!Number.isFinite(value) || !Number.isFinite(lo) || !(step > 0) || value < lo) return String(lo);
  let min = value - Math.ceil((value - lo) / step - 1e-9) * step;
  if (min > lo) min -= step;
  return String(min);
}

/**
 * The value a move of `range` means: whole steps from `anchor`, the exact value it moved from,
 * when that has more digits than the range holds (15); at its ends, the end.
 */
export function stepFrom(anchor, range) {
  const [moved, step] = [range.valueAsNumber, Number(range.step)];
  // A value of up to 15 digits the range holds exactly, and steps in decimal (2 → 2.01 → 2, where
  // adding doubles would give 1.9999999999999998): its own value is then the one meant.
  if (!Number.isFinite(anchor) || !(step > 0) || Number(anchor.toPrecision(15)) === anchor) return moved;
  const steps = Math.round((moved - anchor) / step);
  const value = steps === 0 ? anchor : anchor + steps * step;
  return value < Number(range.min) || value > Number(range.max) ? moved : value;
}

const anchors = new WeakMap(); // range → the exact value its last move or write was

const SLIDER_KEYS = new Set(["ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown", "Home", "End", "PageUp", "PageDown"]);

const numberInput = (className, label) => h("input", { type: "number", step: "any", class: className, "aria-label": label });

/**
 * Name a row's slider by the leaf's display label (`x1*w1`, `α`: what its card shows), in its
 * caption and its inputs' names for screen readers; the row stays keyed by the leaf's name.
 */
function caption(row, shown) {
  if (row.dataset.caption === shown) return;
  row.dataset.caption = shown;
  row.querySelector(".slider-name").textContent = shown;
  row.querySelector(".slider-range").setAttribute("aria-label", t("ui.slider.value", { name: shown }));
  for (const [className, key] of [["slider-value", "ui.slider.number"], ["slider-min", "ui.slider.min"], ["slider-max", "ui.slider.max"]]) {
    row.querySelector(`.${className}`).setAttribute("aria-label", t(key, { name: shown }));
  }
}

/** Say `message` under a row's slider (what was wrong with what was typed), or nothing (null). */
function said(row, message) {
  const note = row.querySelector(".slider-note");
  const box = row.querySelector(".slider-value");
  note.textContent = message ?? "";
  note.hidden = message === null;
  if (message === null) box.removeAttribute("aria-invalid");
  else box.setAttribute("aria-invalid", "true");
}

function createRow(name, { onValue, readOnly }, { state, update }) {
  const row = h("div", { class: "slider", "data-testid": `slider-${name}` });
  const label = h("span", { class: "slider-name" });
  const range = h("input", { type: "range", class: "slider-range" });
  const [box, min, max] = ["slider-value", "slider-min", "slider-max"].map((className) => numberInput(className, ""));
  const bounds = document.createElement("div");
  bounds.className = "slider-bounds";
  bounds.append(min, max);
  const note = h("span", { class: "slider-note", "data-testid": "slider-note", role: "status", hidden: true });
  row.append(label, range, box, bounds, note);
  caption(row, name);
  for (const input of [range, box, min, max]) input.disabled = readOnly;

  // A focused slider keeps its own keys (they move it), as a number box does: the document's
  // timeline keys (core/keys.js) must not step the timeline and cancel the move.
  range.addEventListener("keydown", (event) => {
    if (SLIDER_KEYS.has(event.key) && !event.ctrlKey && !event.metaKey && !event.altKey) event.stopPropagation();
  });
  range.addEventListener("input", () => {
    const value = stepFrom(anchors.get(range), range);
    anchors.set(range, value);
    box.value = String(value);
    onValue(name, value);
  });
  // What is typed is a value while it is typed: `1e40` on the way to `1e400`, then `3`. The
  // range widens to hold a value typed past its ends (around it, as a value from elsewhere), and
  // returns to the bounds it had before (`home`) once a value typed is back inside them.
  let home = null; // the bounds before typing widened them; null while they are not widened
  box.addEventListener("input", () => {
    const value = box.valueAsNumber;
    if (!Number.isFinite(value)) return; // said when the box is left (`change`)
    said(row, null);
    const [lo, hi] = (home ?? [min.value, max.value]).map(Number);
    const inside = lo <= value && value <= hi;
    if (!inside && home === null) home = [min.value, max.value];
    if (inside) home = null;
    const bounds = inside ? { min: lo, max: hi } : defaultRange(value);
    [min.value, max.value] = [String(bounds.min), String(bounds.max)];
    setRange(row, bounds.min, bounds.max, value);
    range.value = String(value);
    anchors.set(range, value);
    onValue(name, value);
  });
  // A box left holding no finite number (`1e400`, `-`, empty) says so, and shows the leaf's value.
  box.addEventListener("change", () => {
    if (Number.isFinite(box.valueAsNumber)) return;
    const kept = anchors.get(range);
    said(row, t("ui.slider.not_finite", { name: row.dataset.caption, value: String(kept) }));
    box.value = String(kept);
  });
  const onBounds = () => {
    const [lo, hi] = [min.valueAsNumber, max.valueAsNumber];
    if (!Number.isFinite(lo) || !Number.isFinite(hi) || lo >= hi) return;
    home = null; // the user's own bounds
    setRange(row, lo, hi, box.valueAsNumber);
    update({ ranges: { ...state.ranges, [name]: { min: lo, max: hi } } });
  };
  min.addEventListener("change", onBounds);
  max.addEventListener("change", onBounds);
  return row;
}

/** The range from `lo` to `hi` on a round step, holding `value` exactly (alignedMin). */
function setRange(row, lo, hi, value) {
  const range = row.querySelector(".slider-range");
  const step = Math.min(defaultRange((lo + hi) / 2).step, (hi - lo) / 100);
  range.min = alignedMin(value, lo, step);
  range.max = String(hi);
  range.step = String(step);
}

function showValue(row, value, userRange) {
  const [range, box, min, max] = ["range", "value", "min", "max"].map((k) => row.querySelector(`.slider-${k}`));
  const inside = Number(range.min) <= value && value <= Number(range.max) && range.min !== "";
  if (!inside) {
    const { min: lo, max: hi } = userRange && userRange.min <= value && value <= userRange.max
      ? userRange : defaultRange(value);
    min.value = String(lo);
    max.value = String(hi);
    setRange(row, lo, hi, value);
  }
  // Never fight the user: a field being edited keeps what they typed.
  const focused = row.getRootNode().activeElement; // the document's, or a shadow root's
  if (focused !== box) writeValue(box, String(value));
  if (focused !== range) {
    anchors.set(range, value);
    writeValue(range, String(value));
    // A value off the range's steps (typed, or a program's 6.8813735870195432): steps from it.
    if (range.valueAsNumber !== value) {
      setRange(row, Number(min.value), Number(max.value), value);
      range.value = String(value);
      written.set(range, [String(value), range.value]);
    }
  }
}

const written = new WeakMap(); // input → [the text writeValue wrote, the value the input made of it]

/** Set `input`'s value to `text`, unless it shows it already: Chromium lays a range out again on
 *  every write, and a slider move rewrites every leaf's row (a range rounds to its step, so what
 *  it holds is compared with what it made of the last write). */
function writeValue(input, text) {
  const last = written.get(input);
  if (last && last[0] === text && last[1] === input.value) return;
  input.value = text;
  written.set(input, [text, input.value]);
}

function createGroup(group) {
  const section = document.createElement("section");
  section.className = "leaf-group";
  section.dataset.testid = "leaf-group";
  section.dataset.prefix = group.prefix;
  if (group.place) section.dataset.place = "true";
  const heading = document.createElement("h3");
  heading.className = "leaf-group-title";
  const title = document.createElement("span");
  title.textContent = groupTitle(group);
  const count = document.createElement("span");
  count.className = "leaf-group-count";
  heading.append(title, count);
  section.append(heading);
  return section;
}

function createFilter(onInput) {
  const box = h("div", { class: "leaf-filter-box", hidden: true });
  const input = h("input", {
    type: "search", class: "leaf-filter", "data-testid": "leaf-filter", placeholder: t("ui.leaves.filter_placeholder"),
    "aria-label": t("ui.leaves.filter_label"), autocomplete: "off", spellcheck: "false",
  });
  const count = h("span", { class: "leaf-filter-count", "aria-live": "polite" });
  input.addEventListener("input", onInput);
  input.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && input.value) {
      input.value = "";
      onInput();
      event.stopPropagation();
    }
  });
  box.append(input, count);
  return { box, input, count };
}

/** The rows of `leaves` in `rows` (made, shown, dropped), each showing its leaf's value. */
// Each row's value and range as showValue last showed them, with what its inputs then held: a
// slider move changes one leaf, and the other rows are passed over while their inputs still hold
// it (micrograd's demo: 537 rows, each re-stepped every move for a value off its range's grid).
const shownRows = new WeakMap();

function unchanged(row, value, userRange) {
  const last = shownRows.get(row);
  return last !== undefined && Object.is(last.value, value) && last.userRange === userRange
    && last.range.value === last.rangeText && last.box.value === last.boxText;
}

function showRows(rows, leaves, s, makeRow) {
  const seen = new Set();
  for (const leaf of leaves) {
    let row = rows.get(leaf.name);
    if (!row) rows.set(leaf.name, (row = makeRow(leaf.name)));
    const userRange = s.ranges[leaf.name];
    seen.add(leaf.name);
    // The leaf object it last showed (a slider move keeps every other leaf's: compute/merge-numbers.js),
    // its inputs as they were: nothing to write.
    const last = shownRows.get(row);
    if (last?.leaf === leaf && unchanged(row, last.value, userRange)) continue;
    if (row.dataset.leafId !== leaf.id) row.dataset.leafId = leaf.id;
    caption(row, leafName(leaf));
    const value = typeof leaf.value === "number" ? leaf.value : Number(leaf.value);
    if (unchanged(row, value, userRange)) {
      last.leaf = leaf;
      continue;
    }
    showValue(row, value, userRange);
    const { range, box } = last ?? { range: row.querySelector(".slider-range"), box: row.querySelector(".slider-value") };
    shownRows.set(row, { leaf, value, userRange, range, box, rangeText: range.value, boxText: box.value });
  }
  for (const [name, row] of rows) {
    if (!seen.has(name)) {
      row.remove();
      rows.delete(name);
    }
  }
}

/** Show a row's caption whole, or, under the heading of the place that holds it, only its own
 *  part (`w[0]` under `n.layers[0].neurons[1]`); the whole label is its tooltip (a long one is
 *  cut with an ellipsis). */
function showPart(row, part) {
  const name = row.querySelector(".slider-name");
  const text = part ?? row.dataset.caption;
  if (name.textContent !== text) name.textContent = text;
  const title = row.dataset.caption;
  if (name.title !== title) name.title = title;
}

/** The rows of `leaves` in `container`: in one list, or under one heading per group (many leaves). */
function placeRows(container, rows, sections, leaves, many) {
  const groups = many ? groupLeaves(leaves) : [];
  const keyOf = (group) => `${group.place ? "place" : "prefix"}:${group.prefix}`;
  for (const group of groups) {
    const key = keyOf(group);
    if (!sections.has(key)) sections.set(key, createGroup(group));
    const section = sections.get(key);
    section.querySelector(".leaf-group-count").textContent = String(group.names.length);
    arrange(section, group.names.map((name) => rows.get(name)), 1);
    for (const name of group.names) {
      const row = rows.get(name);
      showPart(row, group.place ? placeOf(row.dataset.caption).part : null);
    }
  }
  if (!many) for (const leaf of leaves) showPart(rows.get(leaf.name), null);
  if (many) arrange(container, groups.map((group) => sections.get(keyOf(group))));
  else arrange(container, leaves.map((leaf) => rows.get(leaf.name)));
  const kept = new Set(groups.map(keyOf));
  for (const [key, section] of sections) {
    if (!kept.has(key)) {
      section.remove();
      sections.delete(key);
    }
  }
}

/**
 * The leaves panel in `container`. From MANY_LEAVES leaves on (controls/leaf-groups.js): compact rows
 * under one heading per name prefix, and a filter box above them. Each row carries its leaf's
 * node id (data-leaf-id) for the slider ↔ card link (controls/leaf-link.js).
 */
export function mountSliders(container, { onValue, readOnly = false }, scope) {
  const rows = new Map();
  container.dataset.empty = t("ui.leaves.none"); // app.css shows it when there are no leaves
  const sections = new Map(); // "place:…" or "prefix:…" → group section
  const filter = createFilter(() => applyFilter());
  container.before(filter.box);

  /** Hide the rows the filter leaves out, and the groups left empty; each group's count of rows
   *  shown sizes it while it is out of view (--rows: real-size.css), so nothing below it moves
   *  when it is scrolled to and drawn. */
  function applyFilter() {
    const text = filter.input.value;
    let shown = 0;
    for (const [name, row] of rows) {
      const passes = passesFilter(name, text, row.dataset.caption);
      if (row.hidden === passes) row.hidden = !passes;
      if (passes) shown += 1;
    }
    for (const section of sections.values()) {
      const count = [...section.querySelectorAll(".slider")].filter((row) => !row.hidden).length;
      if (section.hidden !== (count === 0)) section.hidden = count === 0;
      if (section.style.getPropertyValue("--rows") !== String(count)) section.style.setProperty("--rows", String(count));
    }
    filter.count.textContent = text.trim() ? t("ui.leaves.filter_count", { shown, total: rows.size }) : "";
  }

  let placed = null; // the trace the rows were last placed for
  let loads = 0; // the program loaded whole (state.loads) the rows are of
  scope.store.subscribe((s, changed) => {
    if (!changed.has("trace") || !s.trace) return;
    if (s.loads !== loads) { // a preset or a lesson: its sliders as a fresh page shows them
      loads = s.loads;
      for (const row of rows.values()) row.remove();
      rows.clear();
      placed = null;
    }
    const leaves = s.trace.leaves ?? [];
    showRows(rows, leaves, s, (name) => createRow(name, { onValue, readOnly }, scope.store));
    // New numbers of the same drawing (a slider move): its leaves, so the rows stay where they are.
    if (sameDrawing(placed, s.trace)) return;
    placed = s.trace;
    const many = leaves.length >= MANY_LEAVES;
    placeRows(container, rows, sections, leaves, many);
    container.classList.toggle("compact", many);
    filter.box.hidden = !many;
    if (!many && filter.input.value) filter.input.value = "";
    applyFilter();
    container.classList.toggle("empty", leaves.length === 0);
  });
}

/**
 * Some leaves' rows in `container`, the leaves panel's own rows (range, number box, editable
 * bounds: the same ranges in state.ranges), each with the test id `${testPrefix}-${name}`: the
 * Train lab's guesses. Returns `show(leaves, state)`, which makes, updates and drops the rows.
 */
export function mountSliderRows(container, { onValue, testPrefix }, store) {
  const rows = new Map();
  return (leaves, s) => {
    showRows(rows, leaves, s, (name) => {
      const row = createRow(name, { onValue, readOnly: false }, store);
      row.dataset.testid = `${testPrefix}-${name}`;
      return row;
    });
    arrange(container, leaves.map((leaf) => rows.get(leaf.name)));
  };
}
