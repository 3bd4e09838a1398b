// The gradient map (the "gradient map" toggle, state.gradMap, `gradmap=1` in a link): every card
// coloured by |grad| at the frame shown, so the weights that matter stand out at the end of the
// backward pass. The scale is logarithmic and relative to the largest |grad| shown: six steps of
// half a decade (viridis, perceptually uniform and colour-blind safe, sampled into real-size.css's
// --gm-* properties, darkest for the largest on a light theme, brightest on a dark one). The
// sign is a badge on the card (+ or −), not colour alone; a card whose gradient has not arrived
// yet shows as "not yet". The legend prints the scale's numbers.
//
// A collapsed statement's card (group-view.js) is coloured as its root, whose numbers it shows.
//
// Owner of: the cards' data-gradmap (the bucket: "1"…"6", "zero", "none" for not yet, "nan")
// and data-grad-sign ("+", "-" or none), their .gradmap-sign badge, the graph's `gradmap` class,
// the legend's gradmap entry, and the toggle's checked state.

import { compactText } from "./format.js";
import { t } from "./i18n.js";
import { state, subscribe, update } from "./state.js";
import { attr, svgElement } from "./svg.js";
import { viewAt } from "./timeline.js";

/** Lower edges of buckets 6, 5, … 2 as fractions of the largest |grad|; below them, bucket 1. */
export const BUCKET_EDGES = [10 ** -0.5, 1e-1, 10 ** -1.5, 1e-2, 10 ** -2.5];
const TOP = BUCKET_EDGES.length + 1;

const magnitude = (grad) => (grad === "Infinity" || grad === "-Infinity" ? Infinity : typeof grad === "number" ? Math.abs(grad) : NaN);
const signOf = (grad) => (grad === "-Infinity" || (typeof grad === "number" && grad < 0) ? "-" : grad === "Infinity" || grad > 0 ? "+" : "");

/**
 * The bucket of `grad` (a number, an API non-finite string, or undefined: not arrived) when the
 * largest finite |grad| shown is `largest`.
 */
export function gradBucket(grad, largest) {
  if (grad === undefined || grad === null) return "none";
  const size = magnitude(grad);
  if (Number.isNaN(size)) return "nan";
  if (size === 0) return "zero";
  if (!Number.isFinite(size) || !(largest > 0)) return String(TOP);
  const ratio = size / largest;
  const below = BUCKET_EDGES.findIndex((edge) => ratio >= edge * (1 - 1e-12));
  return String(below === -1 ? 1 : TOP - below);
}

/** {buckets: Map id → {bucket, sign}, largest} for the non-constant nodes of `trace` at frame `i`. */
export function gradBuckets(trace, i, { finalGrads = false } = {}) {
  const view = viewAt(trace, i, { finalGrads });
  const grads = [];
  let largest = 0;
  for (const node of trace.nodes) {
    if (node.kind === "const") continue; // constants' gradients are not shown
    const grad = view.grad.get(node.id);
    grads.push([node.id, grad]);
    const size = magnitude(grad);
    if (Number.isFinite(size) && size > largest) largest = size;
  }
  const buckets = new Map(grads.map(([id, grad]) => [id, { bucket: gradBucket(grad, largest), sign: grad === undefined ? "" : signOf(grad) }]));
  return { buckets, largest };
}

/** The sign badge of a card: a circle with a + or − drawn as strokes (so it shows at any zoom). */
function signBadge(card) {
  if (card._gradSign) return card._gradSign;
  const height = Number(card.querySelector(".card")?.getAttribute("height")) || 40;
  const width = Number(card.querySelector(".card")?.getAttribute("width")) || 80;
  const r = Math.min(9, height * 0.2);
  const badge = svgElement("g", { transform: `translate(${width},${0})` }, "gradmap-sign");
  badge.append(svgElement("circle", { r }), svgElement("path", { d: "" }));
  badge._r = r;
  card.append(badge);
  card._gradSign = badge;
  return badge;
}

function drawSign(card, sign) {
  attr(card, "data-grad-sign", sign || null);
  if (!sign && !card._gradSign) return;
  const badge = signBadge(card);
  const arm = badge._r * 0.55;
  const d = sign === "-" ? `M${-arm},0H${arm}` : sign === "+" ? `M${-arm},0H${arm}M0,${-arm}V${arm}` : "";
  attr(badge.lastChild, "d", d);
  attr(badge, "visibility", sign ? null : "hidden");
}

const LEGEND_ITEMS = [...Array.from({ length: TOP }, (_, k) => String(TOP - k)), "zero", "none"];

function createLegend() {
  const item = document.createElement("li");
  item.className = "legend-gradmap";
  item.dataset.testid = "gradmap-legend";
  item.hidden = true;
  const title = document.createElement("span");
  title.className = "gradmap-title";
  title.textContent = "|grad|";
  item.append(title);
  const numbers = new Map();
  for (const bucket of LEGEND_ITEMS) {
    const swatch = document.createElement("span");
    swatch.className = "gradmap-swatch";
    swatch.dataset.bucket = bucket;
    const number = document.createElement("span");
    number.className = "gradmap-number";
    swatch.append(number);
    item.append(swatch);
    numbers.set(bucket, number);
  }
  const sign = document.createElement("span");
  sign.className = "gradmap-signs";
  sign.textContent = t("ui.gradmap.signs");
  item.append(sign);
  return { item, numbers };
}

/** A legend's number: two significant digits are enough to read a scale by. */
const roughText = (x) => compactText(Number(x.toPrecision(2)));

/** The legend's numbers for `largest`: each bucket's lower edge (≥ …), then 0 and not yet. */
function legendTexts(largest) {
  const texts = new Map();
  BUCKET_EDGES.forEach((edge, k) => texts.set(String(TOP - k), largest > 0 ? `\u2265${roughText(edge * largest)}` : ""));
  texts.set("1", largest > 0 ? `<${roughText(BUCKET_EDGES[BUCKET_EDGES.length - 1] * largest)}` : "");
  texts.set("zero", "0");
  texts.set("none", t("ui.gradmap.not_yet"));
  return texts;
}

/**
 * `svg`: the graph; `toggle`: the gradient map checkbox; `legend`: the pane's legend list (the
 * scale is added to it, so Fit keeps clear of it as of the rest of the legend).
 */
export function mountGradmap({ svg, toggle, legend }) {
  const { item, numbers } = createLegend();
  legend.append(item);
  toggle.addEventListener("change", () => update({ gradMap: toggle.checked }));
  let painted = new Set(); // cards that carry a bucket now
  let shownBuckets = null; // Map node id → bucket at the frame painted, null while off

  function clear() {
    for (const card of painted) {
      attr(card, "data-gradmap", null);
      drawSign(card, "");
    }
    painted = new Set();
    shownBuckets = null;
  }

  function paint(s) {
    const { buckets, largest } = gradBuckets(s.trace, s.step, { finalGrads: s.finalGrads });
    shownBuckets = new Map([...buckets].map(([id, shown]) => [id, shown.bucket]));
    const next = new Set();
    for (const card of svg.querySelectorAll(".layer-nodes [data-node-id], .layer-group-cards [data-root]")) {
      const shown = buckets.get(card.getAttribute("data-node-id") ?? card.getAttribute("data-root"));
      if (!shown) continue;
      attr(card, "data-gradmap", shown.bucket);
      drawSign(card, shown.sign);
      next.add(card);
    }
    for (const card of painted) {
      if (!next.has(card)) {
        attr(card, "data-gradmap", null);
        drawSign(card, "");
      }
    }
    painted = next;
    for (const [bucket, text] of legendTexts(largest)) {
      if (numbers.get(bucket).textContent !== text) numbers.get(bucket).textContent = text;
    }
    item.dataset.largest = String(largest);
  }

  subscribe((s, changed) => {
    if (changed.has("gradMap")) {
      if (toggle.checked !== s.gradMap) toggle.checked = s.gradMap;
      svg.classList.toggle("gradmap", s.gradMap);
      item.hidden = !s.gradMap;
      if (!s.gradMap) clear();
    }
    if (!s.gradMap || !s.trace) return;
    if (["gradMap", "trace", "step", "finalGrads"].some((key) => changed.has(key))) paint(s);
  });
  return {
    /** Map node id → the bucket shown (data-gradmap), or null while the map is off. */
    buckets: () => shownBuckets,
    /** Colour the cards again: they were drawn anew (a statement collapsed or expanded). */
    repaint() {
      if (state.gradMap && state.trace) paint(state);
    },
  };
}
