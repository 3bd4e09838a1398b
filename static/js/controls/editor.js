// The program editor: a textarea over a mirrored backdrop (line numbers, the error span and the
// hovered node's span are marked there), the error box, and the presets menu. Everything the user
// typed reaches the DOM through textContent only.

import { t } from "../core/i18n.js";
import { traceIndex } from "../core/frames.js";

const DEBOUNCE_MS = 300;

/** Character offset of a 1-based (line, column) in `source`. */
export function offsetOf(source, line, column) {
  let offset = 0;
  for (let l = 1; l < line; l++) {
    const next = source.indexOf("\n", offset);
    if (next === -1) return source.length;
    offset = next + 1;
  }
  return advanceCodePoints(source, offset, Math.max(0, column - 1));
}

const SURROGATE = /[\uD800-\uDFFF]/;

/**
 * The string index `count` code points after index `from`. The server counts positions in code
 * points (Python), JavaScript strings in UTF-16 units: they differ after an emoji in a comment.
 */
export function advanceCodePoints(source, from, count) {
  if (!SURROGATE.test(source)) return from + count;
  let index = from;
  let left = count;
  while (left > 0 && index < source.length) {
    index += source.codePointAt(index) > 0xffff ? 2 : 1;
    left -= 1;
  }
  return index + left;
}

/** A server span (code points) as string indices. */
function spanInSource(source, span) {
  const start = advanceCodePoints(source, 0, span[0]);
  return [start, advanceCodePoints(source, start, span[1] - span[0])];
}

/** [start, end) of an API error in `source`, or null when it has no position. */
export function errorSpan(source, error) {
  if (!error || !error.line || !error.column) return null;
  const start = offsetOf(source, error.line, error.column);
  let end;
  if (error.end_line && error.end_column) end = offsetOf(source, error.end_line, error.end_column);
  else end = start + Math.max(1, (error.caret ?? "").replace(/[^^]/g, "").length);
  return [start, Math.max(end, start + 1)];
}

/** Fill `backdrop` with `source`, wrapping each [start, end) of `marks` ({span, className}). */
function renderBackdrop(backdrop, source, marks) {
  const cuts = new Set([0, source.length]);
  for (const { span } of marks) cuts.add(Math.min(span[0], source.length)).add(Math.min(span[1], source.length));
  const points = [...cuts].sort((a, b) => a - b);
  const parts = [];
  for (let i = 0; i + 1 < points.length; i++) {
    const [from, to] = [points[i], points[i + 1]];
    const classes = marks.filter((m) => m.span[0] <= from && m.span[1] >= to).map((m) => m.className);
    const piece = source.slice(from, to);
    if (classes.length === 0) {
      parts.push(document.createTextNode(piece));
    } else {
      const mark = document.createElement("mark");
      mark.className = classes.join(" ");
      mark.textContent = piece;
      parts.push(mark);
    }
  }
  // An error past the end of a line (`a +`: input ends too early) gets a one-space mark there.
  for (const { span, className } of marks) {
    if (span[0] >= source.length || source[span[0]] === "\n") {
      const mark = document.createElement("mark");
      mark.className = `${className} at-end`;
      mark.textContent = " ";
      const afterIndex = parts.findIndex((_, i) => points[i] >= span[0]);
      if (afterIndex === -1 || span[0] >= source.length) parts.push(mark);
      else parts.splice(afterIndex, 0, mark);
    }
  }
  parts.push(document.createTextNode("\n ")); // keeps the backdrop as tall as the textarea
  backdrop.replaceChildren(...parts);
}

/**
 * The line numbers in `gutter`, one a line of `source`, each as tall as its line is drawn in
 * `backdrop` (the textarea wraps long lines, and the backdrop wraps them the same way): a number
 * stays beside the first row of its line.
 */
function renderGutter(gutter, backdrop, source) {
  const lineCount = source.split("\n").length;
  if (gutter.childElementCount !== lineCount) {
    const lines = [];
    for (let i = 1; i <= lineCount; i++) {
      const div = document.createElement("div");
      div.textContent = String(i);
      lines.push(div);
    }
    gutter.replaceChildren(...lines);
  }
  const tops = lineTops(backdrop, source);
  [...gutter.children].forEach((div, i) => {
    const height = i + 1 < tops.length ? `${tops[i + 1] - tops[i]}px` : "";
    if (div.style.height !== height) div.style.height = height;
  });
}

/** The top (px, from the backdrop's top) of each line of `source` as `backdrop` draws it. */
function lineTops(backdrop, source) {
  const starts = [0];
  for (let i = source.indexOf("\n"); i !== -1; i = source.indexOf("\n", i + 1)) starts.push(i + 1);
  // The text of the source: not the one-space mark of an error past a line's end (renderBackdrop).
  const walker = document.createTreeWalker(backdrop, NodeFilter.SHOW_TEXT, {
    acceptNode: (text) => (text.parentElement.classList.contains("at-end") ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT),
  });
  const range = document.createRange();
  const origin = backdrop.getBoundingClientRect().top - backdrop.scrollTop;
  const tops = [];
  let node = walker.nextNode();
  let from = 0; // the offset in the source where `node` starts
  for (const start of starts) {
    while (node && from + node.length <= start) {
      from += node.length;
      node = walker.nextNode();
    }
    if (!node) break;
    // The line's first character (an empty line's is its "\n"): its box is on the line's first row.
    range.setStart(node, start - from);
    range.setEnd(node, start - from + 1);
    const rect = range.getClientRects()[0] ?? range.getBoundingClientRect();
    tops.push(rect.top - origin);
  }
  return tops;
}

/** Show `error` ({type, message, line, column, snippet, caret}) in `box`; null empties and hides it. */
export function renderError(box, error) {
  box.hidden = !error;
  if (!error) {
    box.replaceChildren();
    return;
  }
  const message = document.createElement("p");
  message.className = "error-message";
  message.textContent = error.message;
  const parts = [message];
  if (error.line) {
    const where = document.createElement("p");
    where.className = "error-where";
    where.textContent = t("ui.error.where", { line: error.line, column: error.column });
    parts.push(where);
  }
  if (error.snippet !== null && error.snippet !== undefined && error.caret) {
    const pre = document.createElement("pre");
    pre.className = "error-snippet";
    pre.textContent = `${error.snippet}\n${error.caret}`;
    parts.push(pre);
  }
  box.replaceChildren(...parts);
}

// Below this width the header's note would say a letter or two and an ellipsis ("Н…" beside the
// Russian header's wider buttons at 1,280 px): it is not shown then (its menu names the preset).
const NOTE_MIN_PX = 96;

/** Hide `note` (keeping its place: its width is the header's leftover, not its text's) when the
 *  header leaves it too little room to say anything. */
function hideWhenCramped(note) {
  new ResizeObserver(() => note.classList.toggle("cramped", note.clientWidth < NOTE_MIN_PX)).observe(note);
}

/** The presets' menu and the preset's note follow the state. */
function writePresets({ presetSelect, presetNote }, s, changed) {
  if (changed.has("presets")) {
    const options = [new Option(t("ui.presets.menu"), "")];
    for (const preset of s.presets) options.push(new Option(preset.title, preset.id));
    presetSelect.replaceChildren(...options);
  }
  if (changed.has("presets") || changed.has("presetId")) {
    presetSelect.value = s.presetId;
    const preset = s.presets.find((p) => p.id === s.presetId);
    presetSelect.title = preset?.title ?? t("ui.presets.menu"); // a narrow header cuts it: the whole of it on hover
    presetNote.textContent = preset?.note ?? "";
    presetNote.title = preset?.note ?? ""; // the header cuts a long note: the whole of it on hover
  }
}

/** The marks in the source: the error's span, and the span of the node under the pointer. */
function sourceMarks(s) {
  const marks = [];
  const span = s.error ? errorSpan(s.source, s.error) : null;
  if (span) marks.push({ span, className: "error-mark" });
  // A tensor program's card (tensor/view.js) points at its expression as a node's card does.
  const shown = s.trace ?? s.tensor;
  const nodeOf = (id) => (s.trace ? traceIndex(s.trace).nodeById.get(id) : s.tensor.nodes.find((n) => n.id === id));
  const node = s.hoverNode && shown && !s.error ? nodeOf(s.hoverNode) : null;
  if (node?.span && shown.source === s.source) marks.push({ span: spanInSource(s.source, node.span), className: "hover-mark" });
  return marks;
}

/**
 * The editor on its elements, for `scope`. `onProgram()` is called after a typing pause (or at
 * once on Ctrl/Cmd+Enter), `onPreset(id)` when a preset is chosen.
 */
export function mountEditor(elements, scope, { onProgram, onPreset }) {
  const { textarea, gutter, backdrop, errorBox, presetSelect, presetNote } = elements;
  const { subscribe, update } = scope.store;
  if (presetNote) hideWhenCramped(presetNote);
  let timer = null;
  let markedSource = null; // the program and the marks last drawn behind it
  let markedMarks = null;

  const syncScroll = () => {
    backdrop.scrollTop = textarea.scrollTop;
    backdrop.scrollLeft = textarea.scrollLeft;
    gutter.scrollTop = textarea.scrollTop;
  };
  textarea.addEventListener("scroll", syncScroll);
  textarea.addEventListener("input", () => {
    update({ source: textarea.value, presetId: "", values: {} });
    clearTimeout(timer);
    timer = setTimeout(onProgram, DEBOUNCE_MS);
  });
  textarea.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      clearTimeout(timer);
      onProgram();
    }
  });
  presetSelect.addEventListener("change", () => {
    if (presetSelect.value) onPreset(presetSelect.value);
  });

  subscribe((s, changed) => {
    writePresets(elements, s, changed);
    if (changed.has("source") && textarea.value !== s.source) textarea.value = s.source;
    if (changed.has("error")) renderError(errorBox, s.error);
    if (!["source", "error", "hoverNode", "trace", "tensor"].some((key) => changed.has(key))) return;
    // New numbers of the same program (a slider move) change neither: nothing is drawn again,
    // and the program is compared as it is, not written into a key (20 KB a move at 1,000 nodes).
    const marks = sourceMarks(s);
    const marksKey = JSON.stringify(marks);
    if (s.source === markedSource && marksKey === markedMarks) return;
    markedSource = s.source;
    markedMarks = marksKey;
    renderBackdrop(backdrop, s.source, marks);
    renderGutter(gutter, backdrop, s.source);
    syncScroll();
  });
  // A narrower or wider editor wraps its lines again: the numbers follow.
  let width = 0;
  new ResizeObserver(() => {
    if (backdrop.clientWidth === width) return;
    width = backdrop.clientWidth;
    renderGutter(gutter, backdrop, scope.store.state.source);
  }).observe(backdrop);
}
