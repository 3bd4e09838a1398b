// The Train lab's loss curve: root value against step as a small SVG line chart, with axes and
// ticks, a linear/log scale, the current step marked and the values under the pointer. Our own
// SVG (about as long as wiring a charting library, and nothing to vendor).

import { compactText } from "./format.js";
import { t } from "./i18n.js";
import { svgElement } from "./svg.js";

const WIDTH = 360;
const HEIGHT = 200;
const PAD = { left: 52, right: 12, top: 12, bottom: 30 };

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

/** The axes, the grid and tick labels, and the caption, into `plot`. */
function drawAxes(plot, { x, y, yTicks, n, log }) {
  plot.append(svgElement("path", { d: `M${PAD.left},${PAD.top}V${HEIGHT - PAD.bottom}H${WIDTH - PAD.right}`, class: "loss-axis" }));
  for (const tick of yTicks) {
    plot.append(svgElement("line", { x1: PAD.left - 4, x2: WIDTH - PAD.right, y1: y(tick), y2: y(tick) }, "loss-grid"));
    const text = svgElement("text", { x: PAD.left - 7, y: y(tick), "text-anchor": "end", "dominant-baseline": "central" }, "loss-tick");
    text.textContent = log ? `1e${tick}` : compactText(tick);
    plot.append(text);
  }
  for (const tick of niceTicks(0, n, 5).filter(Number.isInteger)) {
    const text = svgElement("text", { x: x(tick), y: HEIGHT - PAD.bottom + 14, "text-anchor": "middle" }, "loss-tick");
    text.textContent = String(tick);
    plot.append(text);
  }
  const caption = svgElement("text", { x: WIDTH - PAD.right, y: HEIGHT - 3, "text-anchor": "end" }, "loss-caption");
  caption.textContent = t(log ? "ui.chart.step_log" : "ui.chart.step");
  plot.append(caption);
}

/** The curve through `points` ([step, loss]) and the current step's dot, into `plot`. */
function drawCurve(plot, points, values, { x, y }) {
  if (!points.length) return;
  const d = points.map(([k], i) => `${i ? "L" : "M"}${x(k).toFixed(2)},${y(values[i]).toFixed(2)}`).join("");
  plot.append(svgElement("path", { d, class: "loss-line" }));
  const [k] = points.at(-1);
  plot.append(svgElement("circle", { cx: x(k), cy: y(values.at(-1)), r: 4.5, class: "loss-current" }));
}

/** The chart's elements in `container`: {svg, plot, hover: {group, rule, dot, label}}. */
function chartElements(container) {
  const svg = svgElement("svg", {
    viewBox: `0 0 ${WIDTH} ${HEIGHT}`, class: "loss-chart", "data-testid": "loss-chart", role: "img",
    "data-losses": "[]",
  });
  const plot = svgElement("g");
  const hover = { group: svgElement("g", { class: "loss-hover", visibility: "hidden" }), rule: svgElement("line", { y1: PAD.top, y2: HEIGHT - PAD.bottom }), dot: svgElement("circle", { r: 4 }), label: svgElement("text", { y: PAD.top + 10 }) };
  hover.group.append(hover.rule, hover.dot, hover.label);
  svg.append(plot, hover.group);
  container.append(svg);
  return { svg, plot, hover };
}

/** The values under the pointer at `event`: a rule at the nearest step, its dot, its numbers. */
function showHover({ svg, hover }, shown, event) {
  const { losses, x } = shown;
  if (losses.length === 0) return;
  const box = svg.getBoundingClientRect();
  const px = ((event.clientX - box.left) / box.width) * WIDTH;
  const n = Math.max(1, losses.length - 1);
  const k = Math.max(0, Math.min(losses.length - 1, Math.round(((px - PAD.left) / (WIDTH - PAD.left - PAD.right)) * n)));
  const v = losses[k];
  hover.rule.setAttribute("x1", x(k));
  hover.rule.setAttribute("x2", x(k));
  const onChart = finite(v) && (!shown.log || v > 0);
  hover.dot.setAttribute("visibility", onChart ? "visible" : "hidden");
  if (onChart) {
    hover.dot.setAttribute("cx", x(k));
    hover.dot.setAttribute("cy", shown.y(v));
  }
  hover.label.textContent = t("ui.chart.point", { step: k, value: compactText(v) });
  const right = x(k) > WIDTH / 2;
  hover.label.setAttribute("x", right ? x(k) - 6 : x(k) + 6);
  hover.label.setAttribute("text-anchor", right ? "end" : "start");
  hover.group.setAttribute("visibility", "visible");
}

/**
 * Mount the chart in `container`; returns `draw(losses, {log})` where `losses` are the root values
 * shown, step 0 first (JSON numbers, non-finite ones as the API's strings).
 */
export function mountLossChart(container) {
  const chart = chartElements(container);
  let shown = { losses: [], x: null, y: null };

  function draw(losses, { log = false } = {}) {
    chart.svg.dataset.losses = JSON.stringify(losses);
    chart.plot.replaceChildren();
    chart.hover.group.setAttribute("visibility", "hidden");
    const points = losses.map((v, k) => [k, v]).filter(([, v]) => finite(v) && (!log || v > 0));
    const n = Math.max(1, losses.length - 1);
    const x = (k) => PAD.left + (k / n) * (WIDTH - PAD.left - PAD.right);
    const values = points.map(([, v]) => (log ? Math.log10(v) : v));
    const { lo, hi, ticks } = verticalScale(values, log);
    const y = (v) => HEIGHT - PAD.bottom - ((v - lo) / (hi - lo)) * (HEIGHT - PAD.top - PAD.bottom);
    drawAxes(chart.plot, { x, y, yTicks: ticks, n, log });
    drawCurve(chart.plot, points, values, { x, y });
    chart.svg.setAttribute("aria-label", losses.length
      ? t("ui.chart.label", { steps: losses.length - 1, first: compactText(losses[0]), now: compactText(losses.at(-1)) })
      : t("ui.chart.empty"));
    shown = { losses, x, y: (v) => y(log ? Math.log10(v) : v), log };
  }

  chart.svg.addEventListener("pointermove", (event) => showHover(chart, shown, event));
  chart.svg.addEventListener("pointerleave", () => chart.hover.group.setAttribute("visibility", "hidden"));
  return draw;
}
