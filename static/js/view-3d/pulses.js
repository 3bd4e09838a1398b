// The 3D view's travelling dots: drawn on a 2D canvas laid over the WebGL one, at the points of
// the scene the camera projects them to. Like the SVG view's overlay, this is their own layer:
// a dot moving along an edge costs a small 2D drawing per frame, not a WebGL frame of the graph.

import * as THREE from "../../vendor/three/three.module.js";
import { traceIndex } from "../core/frames.js";

/** Where `pulse` is at time `now`, in the scene: [x, y, z, side] (side: see view-3d/edges.js). */
function pulsePoint(pulse, now) {
  // A dot stays at its edge's end until the next step, as in the SVG.
  const t = Math.min(1, Math.max(0, (now - pulse.start) / pulse.duration));
  const segments = pulse.points.length - 1;
  const u = (pulse.backward ? 1 - t : t) * segments;
  const i = Math.max(0, Math.min(segments - 1, Math.floor(u)));
  const [a, b] = [pulse.points[i], pulse.points[i + 1]];
  return { point: a.map((v, k) => v + (b[k] - v) * (u - i)), moving: t < 1 };
}

/** The dots' layer on `overlay` (a 2D canvas the size of the WebGL canvas, in device pixels). */
class PulseOverlay {
  constructor(overlay) {
    this.overlay = overlay;
    this.ctx = overlay.getContext("2d");
    this.projected = new THREE.Vector3();
    this.pulses = []; // {points, backward, start, duration}
    this.dirty = false; // drawn again even with no dot moving (a new step, the camera moved)
    this.frameCount = 0;
  }

  toOverlay(point, camera) {
    this.projected.copy(point).project(camera);
    return [((this.projected.x + 1) / 2) * this.overlay.width, ((1 - this.projected.y) / 2) * this.overlay.height];
  }

  /**
   * Dots along the edges `view` lights with a pulse, travelling for `duration` ms (0: no dots);
   * `points`: edge id → the scene's samples; `hidden`: node ids not drawn.
   */
  start(trace, view, duration, { points, hidden }) {
    this.pulses = [];
    if (duration) {
      const start = performance.now();
      const { edgeById } = traceIndex(trace);
      for (const id of view.active) {
        const shown = view.edges.get(id);
        if (!shown?.pulse || hidden.has(edgeById.get(id).source)) continue;
        this.pulses.push({ points: points.get(id), backward: shown.state.startsWith("backward"), start, duration });
      }
    }
    this.dirty = true;
  }

  /** Draw again at the next frame even if no dot moves (the camera moved). */
  invalidate() {
    this.dirty = true;
  }

  /** One dot at scene point `p` ([x, y, z, side]), `radius` graph units wide on screen. */
  drawDot(p, backward, { camera, sideVector, radius, palette, right }) {
    const { ctx } = this;
    const centre = new THREE.Vector3(p[0], p[1], p[2]).addScaledVector(sideVector, p[3]);
    const [x, y] = this.toOverlay(centre, camera);
    const [x2, y2] = this.toOverlay(centre.clone().addScaledVector(right, radius), camera);
    const r = Math.max(3, Math.hypot(x2 - x, y2 - y));
    ctx.beginPath();
    ctx.arc(x, y, r, 0, 2 * Math.PI);
    ctx.fillStyle = backward ? palette.backward : palette.forward;
    ctx.fill();
    ctx.lineWidth = Math.max(1.5, r * 0.3);
    ctx.strokeStyle = palette.surface;
    ctx.stroke();
  }

  /**
   * Draw the dots for time `now` seen by `camera` (`sideVector`: how the edges' ends follow the
   * turned cards, see view-3d/edges.js; `radius` in graph units); true while any is still travelling.
   */
  draw(now, { camera, sideVector, radius, palette }) {
    if (!this.pulses.length && !this.dirty) return false;
    this.dirty = false;
    this.frameCount += 1;
    this.ctx.setTransform(1, 0, 0, 1, 0, 0);
    this.ctx.clearRect(0, 0, this.overlay.width, this.overlay.height);
    const right = new THREE.Vector3(1, 0, 0).applyQuaternion(camera.quaternion);
    let moving = false;
    for (const pulse of this.pulses) {
      const at = pulsePoint(pulse, now);
      moving ||= at.moving;
      this.drawDot(at.point, pulse.backward, { camera, sideVector, radius, palette, right });
    }
    return moving;
  }

  /** Frames of dots drawn so far (the benchmark's counter). */
  frames() {
    return this.frameCount;
  }
}

export function createPulseOverlay(overlay) {
  return new PulseOverlay(overlay);
}
