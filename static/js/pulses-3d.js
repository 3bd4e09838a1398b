// The 3D view's travelling dots: drawn on a 2D canvas laid over the WebGL one, at the points of
// the scene the camera projects them to. Like the SVG view's overlay, this is their own layer:
// a dot moving along an edge costs a small 2D drawing per frame, not a WebGL frame of the graph.

import * as THREE from "../vendor/three/three.module.js";
import { traceIndex } from "./frames.js";

/** The dots' layer on `overlay` (a 2D canvas the size of the WebGL canvas, in device pixels). */
export function createPulseOverlay(overlay) {
  const ctx = overlay.getContext("2d");
  const projected = new THREE.Vector3();
  let pulses = []; // {points, backward, start, duration}
  let dirty = false; // drawn again even with no dot moving (a new step, the camera moved)
  let frames = 0;

  function toOverlay(point, camera) {
    projected.copy(point).project(camera);
    return [((projected.x + 1) / 2) * overlay.width, ((1 - projected.y) / 2) * overlay.height];
  }

  return {
    /**
     * Dots along the edges `view` lights with a pulse, travelling for `duration` ms (0: no dots);
     * `points`: edge id → the scene's samples; `hidden`: node ids not drawn.
     */
    start(trace, view, duration, { points, hidden }) {
      pulses = [];
      if (duration) {
        const start = performance.now();
        const { edgeById } = traceIndex(trace);
        for (const id of view.active) {
          const shown = view.edges.get(id);
          if (!shown?.pulse || hidden.has(edgeById.get(id).source)) continue;
          pulses.push({ points: points.get(id), backward: shown.state.startsWith("backward"), start, duration });
        }
      }
      dirty = true;
    },
    /** Draw again at the next frame even if no dot moves (the camera moved). */
    invalidate() {
      dirty = true;
    },
    /**
     * Draw the dots for time `now` seen by `camera` (`sideVector`: how the edges' ends follow the
     * turned cards, see edges-3d.js; `radius` in graph units); true while any is still travelling.
     */
    draw(now, { camera, sideVector, radius, palette }) {
      if (!pulses.length && !dirty) return false;
      dirty = false;
      frames += 1;
      ctx.setTransform(1, 0, 0, 1, 0, 0);
      ctx.clearRect(0, 0, overlay.width, overlay.height);
      const right = new THREE.Vector3(1, 0, 0).applyQuaternion(camera.quaternion);
      let moving = false;
      for (const pulse of pulses) {
        // A dot stays at its edge's end until the next step, as in the SVG.
        const t = Math.min(1, Math.max(0, (now - pulse.start) / pulse.duration));
        if (t < 1) moving = true;
        const segments = pulse.points.length - 1;
        const u = (pulse.backward ? 1 - t : t) * segments;
        const i = Math.max(0, Math.min(segments - 1, Math.floor(u)));
        const [a, b] = [pulse.points[i], pulse.points[i + 1]];
        const p = a.map((v, k) => v + (b[k] - v) * (u - i));
        const centre = new THREE.Vector3(p[0], p[1], p[2]).addScaledVector(sideVector, p[3]);
        const [x, y] = toOverlay(centre, camera);
        const [x2, y2] = toOverlay(centre.clone().addScaledVector(right, radius), camera);
        const r = Math.max(3, Math.hypot(x2 - x, y2 - y));
        ctx.beginPath();
        ctx.arc(x, y, r, 0, 2 * Math.PI);
        ctx.fillStyle = pulse.backward ? palette.backward : palette.forward;
        ctx.fill();
        ctx.lineWidth = Math.max(1.5, r * 0.3);
        ctx.strokeStyle = palette.surface;
        ctx.stroke();
      }
      return moving;
    },
    /** Frames of dots drawn so far (the benchmark's counter). */
    frames: () => frames,
  };
}
