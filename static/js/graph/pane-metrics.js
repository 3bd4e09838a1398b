// The graph pane's measurements, for the views that place things in it at every step (follow,
// the minimap): read from the layout once and kept until something changes size.

/**
 * The pane's measurements, read from the layout once and kept until the pane, the legend or the
 * window change size or the page scrolls: follow and the minimap need them at every step and
 * every frame of a glide, where reading the layout would force it to be recomputed.
 *   box: the visible part of the SVG (graph/zoom.js visibleBox, SVG-local px);
 *   covers: {top, bottom}, how much of the pane's top and bottom edges the zoom buttons and the
 *           legend cover (px); overlays: their boxes {left, top, right, bottom} (px);
 *   rem: the root font size (px); width, height: the pane's (px).
 */
function paneMetrics({ wrap, zoom, legend, refit }) {
  let metrics = null;
  const forget = () => {
    metrics = null;
  };
  new ResizeObserver(forget).observe(wrap);
  // The legend's width changes with its numbers, step by step: only its height matters here. A
  // taller legend (the gradient map's scale) would cover a fitted graph's bottom row: refit it.
  let legendHeight = -1;
  new ResizeObserver(([entry]) => {
    const height = entry.borderBoxSize?.[0]?.blockSize ?? entry.contentRect.height;
    if (height !== legendHeight) {
      forget();
      if (legendHeight >= 0) refit();
    }
    legendHeight = height;
  }).observe(legend);
  window.addEventListener("resize", forget);
  window.addEventListener("scroll", forget, { capture: true, passive: true });
  return () => {
    if (metrics) return metrics;
    const rem = parseFloat(getComputedStyle(document.documentElement).fontSize) || 16;
    const tools = wrap.querySelector(".pane-tools, .graph-tools"); // the row of both bars (group-view.js), or the zoom bar
    // Boxes in the pane's own pixels (a bar inside the row of tools is placed in that row).
    const paneBox = wrap.getBoundingClientRect();
    const boxOf = (el) => {
      if (!el?.offsetHeight) return null;
      const r = el.getBoundingClientRect();
      const [left, top] = [r.left - paneBox.left - wrap.clientLeft, r.top - paneBox.top - wrap.clientTop];
      return { left, top, right: left + r.width, bottom: top + r.height };
    };
    const measured = {
      box: zoom.visibleBox(),
      covers: {
        top: (boxOf(tools)?.bottom ?? 0) + (tools ? rem / 2 : 0),
        bottom: legend.offsetHeight ? wrap.clientHeight - legend.offsetTop + rem / 2 : 0,
      },
      overlays: [...wrap.querySelectorAll(".graph-tools, .group-tools"), legend].map(boxOf).filter(Boolean),
      rem,
      width: wrap.clientWidth,
      height: wrap.clientHeight,
    };
    // A pane not laid out yet measures nothing, and is not kept: a notebook renders its output
    // before attaching it, and JupyterLab delays the ResizeObservers of a notebook's outputs, so
    // a zero box kept would hold until long after the pane has its size (issue 39: Follow moved
    // the root of the first view to the pane's corner, out of sight).
    if (measured.box.width > 0 && measured.box.height > 0) metrics = measured;
    return measured;
  };
}

/**
 * The measurements of `graph`'s pane (graph/view.js mountGraph), with `legend`: a view still as
 * the last fit left it is refitted when the legend changes height (the gradient map's scale).
 */
export function mountPaneMetrics(graph, legend) {
  let fitted = null;
  graph.zoom.onChange((transform, how) => {
    fitted = how === "fit" ? transform : fitted;
  });
  const stillFitted = () => fitted && ["x", "y", "k"].every((key) => Math.abs(fitted[key] - graph.zoom.transform[key]) < 1e-6);
  return paneMetrics({ wrap: graph.wrap, zoom: graph.zoom, legend, refit: () => stillFitted() && graph.fit() });
}
