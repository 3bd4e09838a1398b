// The Train lab's loss curve: root value against step as a small SVG line chart, with axes and
// ticks, a linear/log scale, the current step marked and the values under the pointer. Our own
// SVG (about as long as wiring a charting library, and nothing to vendor).
//
// Before descent, the learner's tries (train/guess.js) are a second series on the left, one
// point per try, and their best loss a dashed line across the chart: descent, on the right,
// starts from that best guess, so the line shows what descent gained over it. A legend names
// the series whenever there is more than one.

import { compactText } from "../core/format.js";
import { h } from "../core/dom.js";
import { t } from "../core/i18n.js";
import { svgElement } from "../core/svg.js";

const WIDTH = 360;
const HEIGHT = 200;
const PAD = { left: 52, right: 12, top: 12, bottom: 30 };
const GAP = 26; // between the tries and the steps

/** About `count` round tick values from lo to hi (1, 2, 5 × a power of ten apart). */
export function niceTicks(lo, hi, count = 5) {
  if (!(hi > lo)) return [lo];
  const raw = (hi - lo) / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw) ?? 10 * power;
  const ticks = [];
  for (let t = Math.ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) ticks.push(Number(t.toPrecision(12)));
  return ticks;
}

const finite = (v) => typeof v === "number" && Number.isFinite(v);

/** The vertical scale of `values`: {lo, hi, ticks} (log: powers of ten, in decades). */
function verticalScale(values, log) {
  let [lo, hi] = values.length ? [Math.min(...values), Math.max(...values)] : [0, 1];
  if (!log) lo = Math.min(lo, 0);
  if (hi - lo < 1e-12) [lo, hi] = [lo - 1, hi + 1];
  const ticks = log ? niceTicks(Math.floor(lo), Math.ceil(hi), 4).filter(Number.isInteger) : niceTicks(lo, hi, 4);
  if (log && ticks.length) [lo, hi] = [Math.min(lo, ticks[0]), Math.max(hi, ticks.at(-1))];
  return { lo, hi, ticks };
}

/**
 * Where each series lies across the plot: {tries, steps}, each {left, right, x(i)} or null.
 * With both, the tries take a share of the width that grows with their count (a quarter to
 * a little under half); the steps the rest.
 */
function regions(tryCount, stepCount) {
  const [left, right] = [PAD.left, WIDTH - PAD.right];
  const region = (from, to, n) => ({ left: from, right: to, x: (i) => from + (n > 0 ? i / n : 0.5) * (to - from) });
  if (tryCount === 0) return { tries: null, steps: region(left, right, Math.max(1, stepCount - 1)) };
  if (stepCount === 0) return { tries: region(left, right, Math.max(1, tryCount - 1)), steps: null };
  const share = Math.min(0.45, Math.max(0.25, tryCount / (tryCount + stepCount)));
  const split = left + share * (right - left);
  return {
    tries: region(left, split - GAP / 2, Math.max(1, tryCount - 1)),
    steps: region(split + GAP / 2, right, Math.max(1, stepCount - 1)),
  };
}

function tickLabel(plot, x, text, anchor = "middle") {
  const label = svgElement("text", { x, y: HEIGHT - PAD.bottom + 14, "text-anchor": anchor }, "loss-tick");
  label.textContent = text;
  plot.append(label);
}

/** The axes, the grid and tick labels, the divider between tries and steps, and the captions. */
function drawAxes(plot, { y, yTicks, areas, stepCount, tryCount, log }) {
  plot.append(svgElement("path", { d: `M${PAD.left},${PAD.top}V${HEIGHT - PAD.bottom}H${WIDTH - PAD.right}`, class: "loss-axis" }));
  for (const tick of yTicks) {
    plot.append(svgElement("line", { x1: PAD.left - 4, x2: WIDTH - PAD.right, y1: y(tick), y2: y(tick) }, "loss-grid"));
    const text = svgElement("text", { x: PAD.left - 7, y: y(tick), "text-anchor": "end", "dominant-baseline": "central" }, "loss-tick");
    text.textContent = log ? `1e${tick}` : compactText(tick);
    plot.append(text);
  }
  if (areas.steps) {
    for (const tick of niceTicks(0, Math.max(1, stepCount - 1), areas.tries ? 3 : 5).filter(Number.isInteger)) tickLabel(plot, areas.steps.x(tick), String(tick));
    const caption = svgElement("text", { x: WIDTH - PAD.right, y: HEIGHT - 3, "text-anchor": "end" }, "loss-caption");
    caption.textContent = t(log ? "ui.chart.step_log" : "ui.chart.step");
    plot.append(caption);
  }
  if (areas.tries) {
    const last = tryCount - 1;
    tickLabel(plot, areas.tries.x(0), "1");
    if (last > 0) tickLabel(plot, areas.tries.x(last), String(tryCount));
    const caption = svgElement("text", { x: areas.tries.left, y: HEIGHT - 3, "text-anchor": "start" }, "loss-caption");
    caption.textContent = t("ui.chart.tries");
    plot.append(caption);
  }
  if (areas.tries && areas.steps) {
    const x = (areas.tries.right + areas.steps.left) / 2;
    plot.append(svgElement("line", { x1: x, x2: x, y1: PAD.top, y2: HEIGHT - PAD.bottom }, "loss-divider"));
  }
}

/** A series' line through its finite points, with a dot on each (tries) or on the last (steps: the current one). */
function drawSeries(plot, series, { x, y }, { className, dots }) {
  const points = series.map((v, i) => [i, v]).filter(([, v]) => v !== null);
  if (!points.length) return;
  const d = points.map(([i, v], k) => `${k ? "L" : "M"}${x(i).toFixed(2)},${y(v).toFixed(2)}`).join("");
  plot.append(svgElement("path", { d, class: `${className}-line` }));
  const marked = dots === "all" ? points : [points.at(-1)];
  for (const [i, v] of marked) plot.append(svgElement("circle", { cx: x(i), cy: y(v), r: dots === "all" ? 3 : 4.5, class: dots === "all" ? `${className}-dot` : "loss-current" }));
}

/** The dashed line of the best guess's loss, across the whole plot. */
function drawBest(plot, best, y) {
  if (best === null) return;
  plot.append(svgElement("line", { x1: PAD.left, x2: WIDTH - PAD.right, y1: y(best), y2: y(best) }, "loss-best"));
}

/** The chart's elements in `container`: {svg, plot, hover: {group, rule, dot, label}, legend}. */
function chartElements(container) {
  const svg = svgElement("svg", {
    viewBox: `0 0 ${WIDTH} ${HEIGHT}`, class: "loss-chart", "data-testid": "loss-chart", role: "img",
    "data-losses": "[]", "data-tries": "[]", "data-best": "",
  });
  const plot = svgElement("g");
  const hover = { group: svgElement("g", { class: "loss-hover", visibility: "hidden" }), rule: svgElement("line", { y1: PAD.top, y2: HEIGHT - PAD.bottom }), dot: svgElement("circle", { r: 4 }), label: svgElement("text", { y: PAD.top + 10 }) };
  hover.group.append(hover.rule, hover.dot, hover.label);
  svg.append(plot, hover.group);
  const legend = h("ul", { class: "chart-legend", "data-testid": "loss-legend" });
  container.append(svg, legend);
  return { svg, plot, hover, legend };
}

/** A legend entry: a small drawing of the series' mark, then its name. */
export function legendItem(kind, text) {
  const swatch = svgElement("svg", { viewBox: "0 0 24 12", width: 24, height: 12, "aria-hidden": "true" }, "legend-swatch");
  const marks = {
    tries: [svgElement("line", { x1: 1, x2: 23, y1: 6, y2: 6 }, "loss-tries-line"), svgElement("circle", { cx: 12, cy: 6, r: 3 }, "loss-tries-dot")],
    steps: [svgElement("line", { x1: 1, x2: 23, y1: 6, y2: 6 }, "loss-line"), svgElement("circle", { cx: 19, cy: 6, r: 3.5 }, "loss-current")],
    best: [svgElement("line", { x1: 1, x2: 23, y1: 6, y2: 6 }, "loss-best")],
    guess: [svgElement("path", { d: "M12,1L17,6L12,11L7,6Z" }, "landscape-guess")],
    path: [svgElement("line", { x1: 1, x2: 23, y1: 6, y2: 6 }, "landscape-path"), svgElement("circle", { cx: 19, cy: 6, r: 2.5 }, "landscape-step")],
    handle: [svgElement("circle", { cx: 12, cy: 6, r: 4.5 }, "landscape-handle-ring")],
    nan: [svgElement("rect", { x: 4, y: 1, width: 16, height: 10 }, "landscape-nan")],
  };
  swatch.append(...marks[kind]);
  return h("li", { "data-series": kind }, swatch, h("span", { text }));
}

/** The values under the pointer at `event`: a rule at the nearest point of a series, its numbers. */
function showHover({ svg, hover }, shown, event) {
  const box = svg.getBoundingClientRect();
  const px = ((event.clientX - box.left) / box.width) * WIDTH;
  const point = shown.pick(px);
  if (!point) return;
  hover.rule.setAttribute("x1", point.x);
  hover.rule.setAttribute("x2", point.x);
  const onChart = point.y !== null;
  hover.dot.setAttribute("visibility", onChart ? "visible" : "hidden");
  if (onChart) {
    hover.dot.setAttribute("cx", point.x);
    hover.dot.setAttribute("cy", point.y);
  }
  hover.label.textContent = point.text;
  const right = point.x > WIDTH / 2;
  hover.label.setAttribute("x", right ? point.x - 6 : point.x + 6);
  hover.label.setAttribute("text-anchor", right ? "end" : "start");
  hover.group.setAttribute("visibility", "visible");
}

/** The nearest point of a series to `px` in `area`: its index, or -1 outside. */
function nearest(area, count, px) {
  if (!area || count === 0 || px < area.left - GAP / 2 || px > area.right + GAP / 2) return -1;
  const n = Math.max(1, count - 1);
  return Math.max(0, Math.min(count - 1, Math.round(((px - area.left) / (area.right - area.left)) * n)));
}

/** What the legend names: the series on the chart, in its order. */
function drawLegend(legend, { tryCount, stepCount, best }) {
  const items = [];
  if (tryCount) items.push(legendItem("tries", t("ui.chart.legend_tries")));
  if (stepCount && tryCount) items.push(legendItem("steps", t("ui.chart.legend_steps")));
  if (best !== null) items.push(legendItem("best", t("ui.chart.legend_best", { loss: compactText(best) })));
  legend.replaceChildren(...items);
  legend.hidden = items.length === 0;
}

/**
 * Mount the chart in `container`; returns `draw(losses, {log, tries, best})` where `losses` are
 * the root values shown, step 0 first, `tries` the learner's guesses' losses in order and
 * `best` the best of them or null (JSON numbers, non-finite ones as the API's strings).
 */
export function mountLossChart(container) {
  const chart = chartElements(container);
  let shown = { pick: () => null };

  function draw(losses, { log = false, tries = [], best = null } = {}) {
    Object.assign(chart.svg.dataset, { losses: JSON.stringify(losses), tries: JSON.stringify(tries), best: best === null ? "" : String(best) });
    chart.plot.replaceChildren();
    chart.hover.group.setAttribute("visibility", "hidden");
    const plotted = (v) => (finite(v) && (!log || v > 0) ? (log ? Math.log10(v) : v) : null);
    const [stepValues, tryValues] = [losses.map(plotted), tries.map(plotted)];
    const bestValue = best === null ? null : plotted(best);
    const all = [...stepValues, ...tryValues, bestValue].filter((v) => v !== null);
    const { lo, hi, ticks } = verticalScale(all, log);
    const y = (v) => HEIGHT - PAD.bottom - ((v - lo) / (hi - lo)) * (HEIGHT - PAD.top - PAD.bottom);
    const areas = regions(tries.length, losses.length);
    drawAxes(chart.plot, { y, yTicks: ticks, areas, stepCount: losses.length, tryCount: tries.length, log });
    drawBest(chart.plot, bestValue, y);
    if (areas.tries) drawSeries(chart.plot, tryValues, { x: areas.tries.x, y }, { className: "loss-tries", dots: "all" });
    if (areas.steps) drawSeries(chart.plot, stepValues, { x: areas.steps.x, y }, { className: "loss", dots: "last" });
    drawLegend(chart.legend, { tryCount: tries.length, stepCount: losses.length, best });
    chart.svg.setAttribute("aria-label", chartLabel(losses, tries, best));
    shown = {
      pick(px) {
        const k = nearest(areas.steps, losses.length, px);
        const i = k < 0 ? nearest(areas.tries, tries.length, px) : -1;
        if (k >= 0) return { x: areas.steps.x(k), y: stepValues[k] === null ? null : y(stepValues[k]), text: t("ui.chart.point", { step: k, value: compactText(losses[k]) }) };
        if (i >= 0) return { x: areas.tries.x(i), y: tryValues[i] === null ? null : y(tryValues[i]), text: t("ui.chart.try_point", { try: i + 1, value: compactText(tries[i]) }) };
        return null;
      },
    };
  }

  chart.svg.addEventListener("pointermove", (event) => showHover(chart, shown, event));
  chart.svg.addEventListener("pointerleave", () => chart.hover.group.setAttribute("visibility", "hidden"));
  return draw;
}

/** The chart said in words, for a screen reader. */
function chartLabel(losses, tries, best) {
  const parts = [];
  if (tries.length) parts.push(t("ui.chart.label_tries", { tries: tries.length, best: compactText(best) }));
  parts.push(losses.length
    ? t("ui.chart.label", { steps: losses.length - 1, first: compactText(losses[0]), now: compactText(losses.at(-1)) })
    : t("ui.chart.empty"));
  return parts.join(" ");
}
