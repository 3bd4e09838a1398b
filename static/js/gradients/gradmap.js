// The gradient map (the "gradient map" toggle, state.gradMap, `gradmap=1` in a link): every card
// coloured by |grad| at the frame shown, so the weights that matter stand out at the end of the
// backward pass. The scale is logarithmic and relative to the largest |grad| shown: six steps of
// half a decade (viridis, perceptually uniform and colour-blind safe, sampled into real-size.css's
// --gm-* properties, darkest for the largest on a light theme, brightest on a dark one). The
// sign is a badge on the card (+ or −), not colour alone; a card whose gradient has not arrived
// yet shows as "not yet". The legend prints the scale's numbers.
//
// A mark (graph/marks.js): it owns the cards' data-gradmap (the bucket: "1"…"6", "zero", "none" for not
// yet, "nan") and data-grad-sign ("+", "-" or none), its layer of sign badges, the legend's
// gradmap entry; a collapsed statement's card (graph/group-cards.js) is coloured as its root, whose
// numbers it shows. The toggle's checked state follows the state (mountGradmapToggle).

import { setHidden, setText } from "../core/dom.js";
import { compactText } from "../core/format.js";
import { groupIndex } from "../graph/groups.js";
import { t } from "../core/i18n.js";
import { attr, join, svgElement } from "../core/svg.js";
import { viewAt } from "../core/frames.js";

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

const lastBuckets = { trace: null, key: "", result: null }; // the minimap asks for the same frame

/** {buckets: Map id → {bucket, sign}, largest} for the non-constant nodes of `trace` at frame `i`. */
export function gradBuckets(trace, i, { finalGrads = false } = {}) {
  const key = `${i}|${finalGrads}`;
  if (lastBuckets.trace === trace && lastBuckets.key === key) return lastBuckets.result;
  const result = computeBuckets(trace, i, finalGrads);
  Object.assign(lastBuckets, { trace, key, result });
  return result;
}

function computeBuckets(trace, i, finalGrads) {
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

/** The sign badges' places: one per card drawn for a node with a gradient, on its top-right corner. */
function badgePlaces(frame, buckets) {
  const { byId } = groupIndex(frame.trace);
  const places = [];
  for (const card of frame.shown.nodes) {
    const id = card.kind === "group" ? byId.get(card.id)?.root : card.id;
    const sign = buckets.get(id)?.sign;
    if (!sign) continue;
    places.push({ key: card.id, id, sign, x: card.x + card.width / 2, y: card.y - card.height / 2, r: Math.min(9, card.height * 0.2) });
  }
  return places;
}

function enterBadge() {
  const badge = svgElement("g", {}, "gradmap-sign");
  badge.append(svgElement("circle"), svgElement("path"));
  return badge;
}

/** A badge: a circle with a + or − drawn as strokes (so it shows at any zoom). */
function updateBadge(badge, place) {
  const arm = place.r * 0.55;
  attr(badge, "transform", `translate(${place.x},${place.y})`);
  attr(badge, "data-node-id", place.id);
  attr(badge.firstChild, "r", place.r);
  attr(badge.lastChild, "d", place.sign === "-" ? `M${-arm},0H${arm}` : `M${-arm},0H${arm}M0,${-arm}V${arm}`);
}

/** The legend's scale for `largest` (the numbers change with the frame). */
function writeLegend({ item, numbers }, largest) {
  for (const [bucket, text] of legendTexts(largest)) {
    setText(numbers.get(bucket), text);
  }
  item.dataset.largest = String(largest);
}

/**
 * The gradient map's mark, its scale added to `legend` (the pane's legend list, so Fit keeps clear
 * of it as of the rest of the legend).
 */
export function gradmapMark({ legend }) {
  const scale = createLegend();
  legend.append(scale.item);
  return {
    name: "gradmap",
    keys: ["gradMap"],
    owns: { card: ["data-gradmap", "data-grad-sign"] },
    layer: "over",
    render(frame, layer) {
      const { state } = frame;
      setHidden(scale.item, !state.gradMap);
      if (!state.gradMap) {
        join(layer, [], (place) => place.key, enterBadge, updateBadge);
        return null;
      }
      const { buckets, largest } = gradBuckets(frame.trace, frame.view.frame, { finalGrads: state.finalGrads });
      join(layer, badgePlaces(frame, buckets), (place) => place.key, enterBadge, updateBadge);
      writeLegend(scale, largest);
      const cards = new Map();
      for (const [id, shown] of buckets) cards.set(id, { "data-gradmap": shown.bucket, "data-grad-sign": shown.sign || null });
      return { cards };
    },
  };
}

/** The gradient map's checkbox, kept in step with the state (a link may switch the map on). */
export function mountGradmapToggle(toggle, scope) {
  const { subscribe, update } = scope.store;
  toggle.addEventListener("change", () => update({ gradMap: toggle.checked }));
  subscribe((s, changed) => {
    if (changed.has("gradMap") && toggle.checked !== s.gradMap) toggle.checked = s.gradMap;
  });
}
