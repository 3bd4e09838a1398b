// The 3D view's edges: one mesh for every edge of the graph, built once per layout. Each edge is a
// flat ribbon along its curve with an arrowhead at each end; a step restyles only the edges it
// lights (colour, width, dashes, which arrowhead shows) by rewriting their share of three small
// vertex attributes. Widths and dashes are drawn by the shader, edges smoothed there too (no MSAA
// needed), and the ends follow their cards as those turn to face the camera (`side`).

import * as THREE from "../vendor/three/three.module.js";

const VERTEX_SHADER = `
attribute vec2 offset;  // ribbon: the unit normal (either side); arrowhead: the corner in head lengths
attribute float side;   // the card's signed half width this point moves with (see sideVector)
attribute float across; // ribbon: -1 / +1 across it; arrowhead: 0
attribute vec3 bary;    // arrowhead: barycentric corner; ribbon: 0
attribute float dist;   // arc length from the edge's input end
attribute vec3 tint;
attribute float width;  // ribbon: half width; arrowhead: length (0: not drawn)
attribute vec2 dash;    // on, off (0, 0: solid)
uniform vec3 sideVector;
uniform float pad;      // graph units added each side so thin ribbons still cover pixels
varying vec3 vTint;
varying float vAcross;
varying vec3 vBary;
varying float vDist;
varying vec2 vDash;
varying float vArrow;
void main() {
  vArrow = step(0.5, bary.x + bary.y + bary.z);
  float grown = width > 0.0 ? width + (1.0 - vArrow) * pad : 0.0;
  vAcross = across * grown / max(width, 1e-6);
  vBary = bary;
  vDist = dist;
  vDash = dash;
  vTint = tint;
  vec3 p = position + vec3(offset * grown, 0.0) + side * sideVector;
  gl_Position = projectionMatrix * modelViewMatrix * vec4(p, 1.0);
}`;

const FRAGMENT_SHADER = `
varying vec3 vTint;
varying float vAcross;
varying vec3 vBary;
varying float vDist;
varying vec2 vDash;
varying float vArrow;
void main() {
  if (vDash.x > 0.0 && vArrow < 0.5 && mod(vDist, vDash.x + vDash.y) > vDash.x) discard;
  float pixels; // distance to the shape's border, in pixels
  if (vArrow > 0.5) {
    vec3 d = vBary / max(fwidth(vBary), vec3(1e-6));
    pixels = min(min(d.x, d.y), d.z);
  } else {
    pixels = (1.0 - abs(vAcross)) / max(fwidth(vAcross), 1e-6);
  }
  float coverage = clamp(pixels + 0.5, 0.0, 1.0);
  if (coverage <= 0.0) discard;
  gl_FragColor = vec4(vTint, coverage);
}`;

/** Vertices of an edge of `points` samples: two per sample of the ribbon, three per arrowhead. */
const verticesOf = (points) => 2 * points + 6;

/**
 * The edge layer. `build(edges, pointsOf)` makes the geometry for a layout (`pointsOf(edge)`:
 * [x, y, z, side] samples, input end first, at least two, as many as its length on screen
 * needs); `restyle(index, style)` sets edge `index`'s look:
 * {tint: {r, g, b} (sRGB, 0–1), halfWidth, dash: [on, off] | null, arrow: "end" | "start",
 * head} (graph units), or null to hide it; `commit()` sends what was restyled to the GPU.
 */
export function createEdgeLayer() {
  const uniforms = { sideVector: { value: new THREE.Vector3() }, pad: { value: 0 } };
  const material = new THREE.ShaderMaterial({
    uniforms, vertexShader: VERTEX_SHADER, fragmentShader: FRAGMENT_SHADER,
    transparent: true, depthWrite: false, side: THREE.DoubleSide,
  });
  const mesh = new THREE.Mesh(new THREE.BufferGeometry(), material);
  mesh.frustumCulled = false;
  let attributes = null;
  let ranges = []; // per edge: {start (first vertex), count (vertices), arc (arc length at each sample), length}
  let changed = []; // edges restyled since the last commit

  function build(edges, pointsOf) {
    const all = edges.map(pointsOf);
    const n = all.reduce((sum, points) => sum + verticesOf(points.length), 0);
    const position = new Float32Array(n * 3);
    const offset = new Float32Array(n * 2);
    const side = new Float32Array(n);
    const across = new Float32Array(n);
    const bary = new Float32Array(n * 3);
    const dist = new Float32Array(n);
    const index = [];
    ranges = [];
    let v = 0;
    all.forEach((points) => {
      const samples = points.length - 1;
      const start = v;
      const put = (p, [ox, oy], a, b, d) => {
        position.set(p.slice(0, 3), v * 3);
        offset.set([ox, oy], v * 2);
        side[v] = p[3];
        across[v] = a;
        bary.set(b, v * 3);
        dist[v] = d;
        v += 1;
      };
      let length = 0;
      const arc = [];
      points.forEach((p, i) => {
        if (i > 0) length += Math.hypot(p[0] - points[i - 1][0], p[1] - points[i - 1][1], p[2] - points[i - 1][2]);
        arc.push(length);
        const a = points[Math.max(0, i - 1)];
        const b = points[Math.min(points.length - 1, i + 1)];
        const norm = Math.hypot(b[0] - a[0], b[1] - a[1]) || 1;
        const normal = [-(b[1] - a[1]) / norm, (b[0] - a[0]) / norm];
        put(p, normal, 1, [0, 0, 0], length);
        put(p, [-normal[0], -normal[1]], -1, [0, 0, 0], length);
        if (i > 0) {
          const [c, d, e, f] = [start + 2 * i - 2, start + 2 * i - 1, start + 2 * i, start + 2 * i + 1];
          index.push(c, d, e, e, d, f);
        }
      });
      // Arrowheads: at the consumer's end (forward, idle) and at the input's end (backward).
      for (const [tip, before] of [[points[samples], points[samples - 1]], [points[0], points[1]]]) {
        const norm = Math.hypot(tip[0] - before[0], tip[1] - before[1]) || 1;
        const dir = [(tip[0] - before[0]) / norm, (tip[1] - before[1]) / norm];
        const first = v;
        put(tip, [0, 0], 0, [1, 0, 0], 0);
        put(tip, [-dir[0] - dir[1] * 0.45, -dir[1] + dir[0] * 0.45], 0, [0, 1, 0], 0);
        put(tip, [-dir[0] + dir[1] * 0.45, -dir[1] - dir[0] * 0.45], 0, [0, 0, 1], 0);
        index.push(first, first + 1, first + 2);
      }
      ranges.push({ start, count: v - start, arc, length });
    });
    const geometry = new THREE.BufferGeometry();
    geometry.setAttribute("position", new THREE.BufferAttribute(position, 3));
    geometry.setAttribute("offset", new THREE.BufferAttribute(offset, 2));
    geometry.setAttribute("side", new THREE.BufferAttribute(side, 1));
    geometry.setAttribute("across", new THREE.BufferAttribute(across, 1));
    geometry.setAttribute("bary", new THREE.BufferAttribute(bary, 3));
    geometry.setAttribute("dist", new THREE.BufferAttribute(dist, 1));
    attributes = {
      tint: new THREE.BufferAttribute(new Float32Array(n * 3), 3).setUsage(THREE.DynamicDrawUsage),
      width: new THREE.BufferAttribute(new Float32Array(n), 1).setUsage(THREE.DynamicDrawUsage),
      dash: new THREE.BufferAttribute(new Float32Array(n * 2), 2).setUsage(THREE.DynamicDrawUsage),
    };
    for (const [name, attribute] of Object.entries(attributes)) geometry.setAttribute(name, attribute);
    geometry.setIndex(n > 65535 ? new THREE.Uint32BufferAttribute(index, 1) : new THREE.Uint16BufferAttribute(index, 1));
    mesh.geometry.dispose();
    mesh.geometry = geometry;
    changed = [];
  }

  function restyle(k, style) {
    const { start, count, arc, length } = ranges[k];
    const samples = arc.length - 1;
    const { tint, width, dash } = attributes;
    const head = style?.head ?? 0;
    for (let i = 0; i <= samples; i++) {
      // The ribbon narrows to nothing under the arrowhead, so no blunt end shows past its tip.
      const fromTip = style?.arrow === "start" ? arc[i] : length - arc[i];
      const half = !style ? 0 : fromTip < head * 0.6 ? style.halfWidth * (fromTip / (head * 0.6)) : style.halfWidth;
      for (const v of [start + 2 * i, start + 2 * i + 1]) width.array[v] = half;
    }
    const ends = start + 2 * (samples + 1);
    for (let v = ends; v < ends + 3; v++) width.array[v] = style?.arrow === "end" ? head : 0;
    for (let v = ends + 3; v < ends + 6; v++) width.array[v] = style?.arrow === "start" ? head : 0;
    for (let v = start; v < start + count; v++) {
      if (style) tint.array.set([style.tint.r, style.tint.g, style.tint.b], v * 3);
      dash.array.set(style?.dash ?? [0, 0], v * 2);
    }
    changed.push(k);
  }

  /** Send the restyled edges to the GPU: their ranges alone when few, else the whole arrays. */
  function commit() {
    if (!changed.length) return;
    const few = changed.length * 8 < ranges.length;
    for (const [attribute, size] of [[attributes.tint, 3], [attributes.width, 1], [attributes.dash, 2]]) {
      attribute.clearUpdateRanges();
      if (few) for (const k of changed) attribute.addUpdateRange(ranges[k].start * size, ranges[k].count * size);
      attribute.needsUpdate = true;
    }
    changed = [];
  }

  return {
    mesh,
    build,
    restyle,
    commit,
    /** Where the edges' ends go as the cards turn (see graph-3d.js frame). */
    setSideVector: (vector) => uniforms.sideVector.value.copy(vector),
    /** Graph units per screen pixel at the camera's target: thin lines are grown by half of it. */
    setPixelSize: (units) => {
      uniforms.pad.value = units * 0.5;
    },
    dispose() {
      mesh.geometry.dispose();
      material.dispose();
    },
  };
}
