// The 3D view's camera: a small orbit around the graph, clamped so that the graph stays readable.
// Drag turns it a little (yaw and pitch within a few tens of degrees), Shift+drag or the right
// button pans, the wheel zooms towards the pointer, a double-click goes back to the fitted view.
// Knows nothing of three.js beyond the camera object it moves (position, up, lookAt).

const MAX_YAW = 0.6; // rad (~34°) either way: beyond it the cards' text foreshortens badly
const MAX_PITCH = 0.42; // rad (~24°)
const HOME = { yaw: -0.22, pitch: 0.14 }; // a slight turn, so that depth shows from the start
const MIN_ZOOM = 0.06; // distance as a share of the fitted one: a card fills the pane
const MAX_ZOOM = 1.6; // the whole graph small in the middle, never a dot
const DRAG_PER_PX = 0.005; // rad per pixel of drag
const RESET_MS = 320;

const clamp = (x, lo, hi) => Math.min(hi, Math.max(lo, x));

/** Unit vector from the target towards the camera. */
function direction(yaw, pitch) {
  return [Math.sin(yaw) * Math.cos(pitch), Math.sin(pitch), Math.cos(yaw) * Math.cos(pitch)];
}

/**
 * The distance at which every corner of `box` ({x0, x1, y0, y1, z0, z1}) is inside the view,
 * looking from `yaw`/`pitch` at `target`, with `insets` ({x, y}: fractions of half the view kept
 * clear at each side) — each corner gives a bound on the distance; the farthest one wins.
 */
export function fitDistance(box, target, { yaw, pitch, fov, aspect, insets = { x: 0, y: 0 } }) {
  const { back, right, up } = axes(yaw, pitch);
  const tanY = Math.tan(fov / 2) * (1 - insets.y);
  const tanX = Math.tan(fov / 2) * aspect * (1 - insets.x);
  let distance = 1;
  for (const x of [box.x0, box.x1]) {
    for (const y of [box.y0, box.y1]) {
      for (const z of [box.z0, box.z1]) {
        const d = [x - target[0], y - target[1], z - target[2]];
        const dot = (v) => d[0] * v[0] + d[1] * v[1] + d[2] * v[2];
        const towards = dot(back); // how much nearer the camera this corner is than the target
        distance = Math.max(distance, towards + Math.abs(dot(right)) / tanX, towards + Math.abs(dot(up)) / tanY);
      }
    }
  }
  return distance;
}

/** The camera's axes looking from `yaw`/`pitch`: back (towards the camera), right and up. */
function axes(yaw, pitch) {
  const back = direction(yaw, pitch);
  const right = [Math.cos(yaw), 0, -Math.sin(yaw)];
  const up = [back[1] * right[2] - back[2] * right[1], back[2] * right[0] - back[0] * right[2], back[0] * right[1] - back[1] * right[0]];
  return { back, right, up };
}

/**
 * Orbit `camera` (a three.js PerspectiveCamera) with pointer input on `element`. `onChange()` is
 * called whenever the camera moved (the caller renders). `reducedMotion()` true: no animation.
 */
class Orbit {
  constructor(element, camera, { onChange, reducedMotion = () => false }) {
    Object.assign(this, { element, camera, onChange, reducedMotion });
    this.box = { x0: -1, x1: 1, y0: -1, y1: 1, z0: 0, z1: 0 };
    this.insets = { x: 0, y: 0 };
    this.fitted = 1; // the fitted distance (head-on), which the zoom range is measured against
    this.view = { yaw: HOME.yaw, pitch: HOME.pitch, distance: 1, target: [0, 0, 0] };
    this.home = { ...this.view };
    this.animation = 0; // the running reset's id: a newer move stops an older animation
    this.height = 1; // the view's height in CSS pixels (setHeight; read here, not from the DOM, per frame)
    this.drag = null;
    this.lastDragged = false; // whether the last press became a drag: its click is then no pick
    this.listen();
  }

  apply() {
    const { camera, view, box } = this;
    const [dx, dy, dz] = direction(view.yaw, view.pitch);
    const [tx, ty, tz] = view.target;
    camera.position.set(tx + dx * view.distance, ty + dy * view.distance, tz + dz * view.distance);
    camera.up.set(0, 1, 0);
    camera.lookAt(tx, ty, tz);
    camera.near = Math.max(0.5, view.distance / 50);
    camera.far = view.distance * 4 + (box.x1 - box.x0) + (box.y1 - box.y0);
    camera.updateProjectionMatrix();
    this.onChange();
  }

  clampView() {
    const { view, box, fitted } = this;
    view.yaw = clamp(view.yaw, -MAX_YAW, MAX_YAW);
    view.pitch = clamp(view.pitch, -MAX_PITCH, MAX_PITCH);
    view.distance = clamp(view.distance, fitted * MIN_ZOOM, fitted * MAX_ZOOM);
    view.target[0] = clamp(view.target[0], box.x0, box.x1);
    view.target[1] = clamp(view.target[1], box.y0, box.y1);
  }

  goHome() {
    Object.assign(this.view, { ...this.home, target: [...this.home.target] });
  }

  /** Fit `box` (graph units) into the view, with `insets` kept clear, and go there. */
  fit(box, insets = this.insets) {
    Object.assign(this, { box, insets });
    const center = [(box.x0 + box.x1) / 2, (box.y0 + box.y1) / 2, (box.z0 + box.z1) / 2];
    const options = { fov: (this.camera.fov * Math.PI) / 180, aspect: this.camera.aspect, insets };
    const headOn = fitDistance(box, center, { ...options, yaw: 0, pitch: 0 });
    this.home = { ...HOME, target: center, distance: fitDistance(box, center, { ...options, ...HOME }) };
    this.fitted = Math.max(headOn, this.home.distance);
    this.animation += 1;
    this.goHome();
    this.apply();
  }

  /** Back to the fitted view: animated (unless reduced motion asks for none). */
  reset() {
    const token = ++this.animation;
    const { view, home } = this;
    const from = { ...view, target: [...view.target] };
    if (this.reducedMotion()) {
      this.goHome();
      this.apply();
      return;
    }
    const t0 = performance.now();
    const frame = (now) => {
      if (token !== this.animation) return;
      const t = Math.min(1, (now - t0) / RESET_MS);
      const e = t * t * (3 - 2 * t);
      const mix = (a, b) => a + (b - a) * e;
      view.yaw = mix(from.yaw, home.yaw);
      view.pitch = mix(from.pitch, home.pitch);
      view.distance = from.distance * (home.distance / from.distance) ** e;
      view.target = from.target.map((a, i) => mix(a, home.target[i]));
      if (t === 1) this.goHome(); // exactly home: atHome()
      this.apply();
      if (t < 1) requestAnimationFrame(frame);
    };
    requestAnimationFrame(frame);
  }

  /** The point of the plane z = target z under client point (cx, cy). */
  planePoint(cx, cy) {
    const { camera, view } = this;
    const rect = this.element.getBoundingClientRect();
    const ndc = [((cx - rect.left) / rect.width) * 2 - 1, 1 - ((cy - rect.top) / rect.height) * 2];
    const tanY = Math.tan((camera.fov * Math.PI) / 360);
    const { back, right, up } = axes(view.yaw, view.pitch);
    const ray = [0, 1, 2].map((i) => -back[i] + right[i] * ndc[0] * tanY * camera.aspect + up[i] * ndc[1] * tanY);
    const origin = [0, 1, 2].map((i) => view.target[i] + back[i] * view.distance);
    const t = (view.target[2] - origin[2]) / (ray[2] || 1e-9);
    return [origin[0] + ray[0] * t, origin[1] + ray[1] * t];
  }

  /** Zoom by `factor` (> 1 nearer), keeping the graph point under (cx, cy) where it is. */
  zoomBy(factor, cx = null, cy = null) {
    const { view } = this;
    this.animation += 1;
    const before = cx === null ? null : this.planePoint(cx, cy);
    view.distance = clamp(view.distance / factor, this.fitted * MIN_ZOOM, this.fitted * MAX_ZOOM);
    if (before) {
      const after = this.planePoint(cx, cy);
      view.target[0] += before[0] - after[0];
      view.target[1] += before[1] - after[1];
    }
    this.clampView();
    this.apply();
  }

  /** A drag by (dx, dy) pixels: turns the camera, or (a pan) slides the target in the graph's plane. */
  dragBy(dx, dy, pan) {
    const { view } = this;
    if (pan) {
      // The target slides in the graph's plane (near enough to the screen's at these angles).
      const perPixel = (2 * view.distance * Math.tan((this.camera.fov * Math.PI) / 360)) / this.height;
      view.target[0] -= dx * perPixel;
      view.target[1] += dy * perPixel;
    } else {
      view.yaw -= dx * DRAG_PER_PX;
      view.pitch += dy * DRAG_PER_PX;
    }
    this.clampView();
    this.apply();
  }

  onPointerMove(event) {
    const { drag } = this;
    if (!drag || event.pointerId !== drag.id) return;
    const [dx, dy] = [event.clientX - drag.x, event.clientY - drag.y];
    if (!drag.moved && Math.hypot(dx, dy) < 4) return; // a click, not yet a drag
    if (!drag.moved) this.element.setPointerCapture?.(event.pointerId);
    Object.assign(drag, { moved: true, x: event.clientX, y: event.clientY });
    this.dragBy(dx, dy, drag.pan);
  }

  listen() {
    const { element } = this;
    element.addEventListener("pointerdown", (event) => {
      if (event.button !== 0 && event.button !== 2) return;
      this.animation += 1;
      this.drag = { x: event.clientX, y: event.clientY, pan: event.shiftKey || event.button === 2, id: event.pointerId, moved: false };
    });
    element.addEventListener("pointermove", (event) => this.onPointerMove(event));
    const release = (event) => {
      if (!this.drag || event.pointerId !== this.drag.id) return;
      this.lastDragged = this.drag.moved;
      this.drag = null;
    };
    element.addEventListener("pointerup", release);
    element.addEventListener("pointercancel", release);
    element.addEventListener("contextmenu", (event) => event.preventDefault());
    element.addEventListener("wheel", (event) => {
      event.preventDefault();
      const lines = event.deltaMode === 1 ? 16 : event.deltaMode === 2 ? 400 : 1;
      this.zoomBy(Math.exp(-event.deltaY * lines * 0.0015), event.clientX, event.clientY);
    }, { passive: false });
    element.addEventListener("dblclick", (event) => {
      event.preventDefault();
      this.reset();
    });
  }

  /** Whether the last pointer press became a drag (then its click is no pick). */
  dragged() {
    return this.lastDragged;
  }

  /** Whether the camera is where the last fit put it (a resize then refits). */
  atHome() {
    const { view, home } = this;
    return view.yaw === home.yaw && view.pitch === home.pitch && view.distance === home.distance
      && view.target.every((v, i) => v === home.target[i]);
  }

  /** The view is `pixels` CSS pixels tall (the caller's resize tells). */
  setHeight(pixels) {
    this.height = Math.max(1, pixels);
  }

  /** Screen pixels per graph unit at the target, head-on (line widths are set from it). */
  pixelsPerUnit() {
    return this.height / (2 * this.view.distance * Math.tan((this.camera.fov * Math.PI) / 360));
  }

  fittedPixelsPerUnit() {
    return this.height / (2 * this.home.distance * Math.tan((this.camera.fov * Math.PI) / 360));
  }
}

export function createOrbit(element, camera, options) {
  return new Orbit(element, camera, options);
}
