// Pan (pointer drag) and zoom (wheel, pinch-free) of an SVG viewport group, plus fit-to-screen.
// The transform lives here, not in the trace, so a slider recompute keeps the view where it is.
// Whoever moves the view besides the reader (graph/follow.js, graph/minimap.js) listens with onChange: each
// change says how it was made ("wheel", "drag", "zoom" buttons, "fit", or what set() was told:
// "follow", "minimap").

const MIN_SCALE = 0.05;
const MAX_SCALE = 8;
// A press that moves less than this (px) is a click (on a card, an edge), not a pan.
const DRAG_THRESHOLD = 3;

/** The view {x, y, k} that fits `bounds` in `box` (see Zoom.fit). */
function fittedView(box, bounds, maxScale, insets, { minScale, focus }) {
  const margin = Math.min(48, box.width * 0.05);
  const top = Math.max(margin, insets.top ?? 0);
  const bottom = Math.max(margin, insets.bottom ?? 0);
  const room = { width: box.width - 2 * margin, height: box.height - top - bottom };
  const k = Math.max(Math.min(minScale, maxScale), Math.min(maxScale,
    room.width / Math.max(1, bounds.width), room.height / Math.max(1, bounds.height)));
  // Per axis: centre the bounds when they fit; else centre `focus`, keeping the view on them.
  const place = (start, size, from, extent, at) => {
    const centred = start + (size - extent * k) / 2 - from * k;
    if (extent * k <= size || at === undefined) return centred;
    const wanted = start + size / 2 - at * k;
    return Math.min(start - from * k, Math.max(start + size - (from + extent) * k, wanted));
  };
  return {
    k,
    x: place(box.x + margin, room.width, bounds.x ?? 0, bounds.width, focus?.x),
    y: place(box.y + top, room.height, bounds.y ?? 0, bounds.height, focus?.y),
  };
}

/**
 * `viewports`: the groups that move together (the graph and the pulse overlay above it);
 * `onZoom(k)` is told the scale after every change (the graph hides text too small to read);
 * `wheelZooms(event)`: whether a wheel event zooms (else it scrolls the page as usual).
 */
class Zoom {
  constructor(svg, viewports, onZoom, { wheelZooms }) {
    Object.assign(this, { svg, viewports, onZoom, wheelZooms });
    this.view = { x: 0, y: 0, k: 1 };
    this.drag = null;
    this.listeners = new Set();
    this.listen();
  }

  apply(how) {
    const { x, y, k } = this.view;
    const value = `translate(${x},${y}) scale(${k})`;
    for (const viewport of this.viewports) viewport.setAttribute("transform", value);
    this.onZoom(k);
    for (const listener of this.listeners) listener({ ...this.view }, how);
  }

  zoomAt(px, py, factor, how) {
    const { view } = this;
    const k = Math.min(MAX_SCALE, Math.max(MIN_SCALE, view.k * factor));
    const ratio = k / view.k;
    this.view = { k, x: px - (px - view.x) * ratio, y: py - (py - view.y) * ratio };
    this.apply(how);
  }

  localPoint(event) {
    const box = this.svg.getBoundingClientRect();
    return [event.clientX - box.left, event.clientY - box.top];
  }

  listen() {
    const { svg } = this;
    svg.addEventListener("wheel", (event) => {
      if (!this.wheelZooms(event)) return;
      event.preventDefault();
      const [px, py] = this.localPoint(event);
      const delta = event.deltaMode === 1 ? event.deltaY * 16 : event.deltaY;
      this.zoomAt(px, py, Math.exp(-delta * 0.0015), "wheel");
    }, { passive: false });
    svg.addEventListener("pointerdown", (event) => {
      if (event.button !== 0) return;
      this.drag = { id: event.pointerId, x: event.clientX, y: event.clientY, start: { ...this.view } };
      svg.setPointerCapture(event.pointerId);
      svg.classList.add("panning");
    });
    svg.addEventListener("pointermove", (event) => this.dragTo(event));
    const end = (event) => {
      if (!this.drag || this.drag.id !== event.pointerId) return;
      this.drag = null;
      svg.classList.remove("panning");
    };
    svg.addEventListener("pointerup", end);
    svg.addEventListener("pointercancel", end);
  }

  dragTo(event) {
    const { drag } = this;
    if (!drag || drag.id !== event.pointerId) return;
    const [dx, dy] = [event.clientX - drag.x, event.clientY - drag.y];
    if (!drag.moved && Math.hypot(dx, dy) < DRAG_THRESHOLD) return;
    drag.moved = true;
    this.view = { ...drag.start, x: drag.start.x + dx, y: drag.start.y + dy };
    this.apply("drag");
  }

  /**
   * The part of the SVG the reader can see (SVG-local pixels): its box clipped to the window, so
   * a pane scrolled half out of view (a phone) is fitted into the half on screen. A pane almost
   * entirely out of view is fitted whole: it will be seen whole when scrolled back.
   */
  visibleBox() {
    const box = this.svg.getBoundingClientRect();
    const left = Math.max(box.left, 0);
    const top = Math.max(box.top, 0);
    const right = Math.min(box.right, window.innerWidth);
    const bottom = Math.min(box.bottom, window.innerHeight);
    if (right - left < box.width / 4 || bottom - top < box.height / 4) {
      return { x: 0, y: 0, width: box.width, height: box.height };
    }
    return { x: left - box.left, y: top - box.top, width: right - left, height: bottom - top };
  }

  /**
   * Scale and centre the box `bounds` {x, y, width, height} (graph coordinates) in the visible
   * SVG, leaving `insets` ({top, bottom} px) for what sits over the pane's edges (the zoom
   * buttons, the legend). Never below `minScale` (the reading size): then the view keeps that
   * scale and shows the part of `bounds` around `focus` ({x, y}, graph coordinates), as far as
   * the bounds go; the reader pans to the rest.
   */
  fit(bounds, maxScale = 2, insets = {}, { minScale = 0, focus = null } = {}) {
    const box = this.visibleBox();
    if (!bounds || box.width === 0 || box.height === 0) return;
    this.view = fittedView(box, bounds, maxScale, insets, { minScale, focus });
    this.apply("fit");
  }

  /** Zoom about the middle of the visible box (the zoom buttons). */
  zoomBy(factor) {
    const box = this.visibleBox();
    this.zoomAt(box.x + box.width / 2, box.y + box.height / 2, factor, "zoom");
  }

  /** Show the view `{x, y, k}` (k clamped); `how` is passed on to the listeners. */
  set({ x, y, k = this.view.k }, how = "set") {
    this.view = { x, y, k: Math.min(MAX_SCALE, Math.max(MIN_SCALE, k)) };
    this.apply(how);
  }

  /** Call `listener(transform, how)` after every change of the view; returns an unsubscribe. */
  onChange(listener) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get transform() {
    return { ...this.view };
  }
}

export function createZoom(svg, viewports, onZoom = () => {}, { wheelZooms = () => true } = {}) {
  return new Zoom(svg, viewports, onZoom, { wheelZooms });
}
