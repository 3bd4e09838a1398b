// The 3D view's edges: one mesh for every edge of the graph, built once per layout. Each edge is a
// flat ribbon along its curve with an arrowhead at each end; a step restyles only the edges it
// lights (colour, width, dashes, which arrowhead shows) by rewriting their share of three small
// vertex attributes. Widths and dashes are drawn by the shader, edges smoothed there too (no MSAA
// needed), and the ends follow their cards as those turn to face the camera (`side`).

import * as THREE from "../../vendor/three/three.module.js";

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

/** Vertex buffers for `n` vertices and `put`, which writes the next vertex. */
function vertexBuffers(n) {
  const b = {
    position: new Float32Array(n * 3), offset: new Float32Array(n * 2), side: new Float32Array(n),
    across: new Float32Array(n), bary: new Float32Array(n * 3), dist: new Float32Array(n), index: [], v: 0,
  };
  b.put = (p, [ox, oy], a, corner, d) => {
    b.position.set(p.slice(0, 3), b.v * 3);
    b.offset.set([ox, oy], b.v * 2);
    b.side[b.v] = p[3];
    b.across[b.v] = a;
    b.bary.set(corner, b.v * 3);
    b.dist[b.v] = d;
    b.v += 1;
  };
  return b;
}

/** An edge's ribbon into `b`: two vertices per sample, offset along its normal. Returns {arc, length}. */
function putRibbon(b, points) {
  const start = b.v;
  let length = 0;
  const arc = [];
  points.forEach((p, i) => {
    if (i > 0) length += Math.hypot(p[0] - points[i - 1][0], p[1] - points[i - 1][1], p[2] - points[i - 1][2]);
    arc.push(length);
    const a = points[Math.max(0, i - 1)];
    const c = points[Math.min(points.length - 1, i + 1)];
    const norm = Math.hypot(c[0] - a[0], c[1] - a[1]) || 1;
    const normal = [-(c[1] - a[1]) / norm, (c[0] - a[0]) / norm];
    b.put(p, normal, 1, [0, 0, 0], length);
    b.put(p, [-normal[0], -normal[1]], -1, [0, 0, 0], length);
    if (i > 0) {
      const [q, r, s, t] = [start + 2 * i - 2, start + 2 * i - 1, start + 2 * i, start + 2 * i + 1];
      b.index.push(q, r, s, s, r, t);
    }
  });
  return { arc, length };
}

/** Arrowheads into `b`: at the consumer's end (forward, idle) and at the input's end (backward). */
function putArrowheads(b, points) {
  const last = points.length - 1;
  for (const [tip, before] of [[points[last], points[last - 1]], [points[0], points[1]]]) {
    const norm = Math.hypot(tip[0] - before[0], tip[1] - before[1]) || 1;
    const dir = [(tip[0] - before[0]) / norm, (tip[1] - before[1]) / norm];
    const first = b.v;
    b.put(tip, [0, 0], 0, [1, 0, 0], 0);
    b.put(tip, [-dir[0] - dir[1] * 0.45, -dir[1] + dir[0] * 0.45], 0, [0, 1, 0], 0);
    b.put(tip, [-dir[0] + dir[1] * 0.45, -dir[1] - dir[0] * 0.45], 0, [0, 0, 1], 0);
    b.index.push(first, first + 1, first + 2);
  }
}

/**
 * The geometry of every edge (`all`: each edge's samples), with the attributes restyle() writes:
 * {geometry, attributes: {tint, width, dash}, ranges: per edge {start, count, arc, length}}.
 */
function ribbonGeometry(all) {
  const n = all.reduce((sum, points) => sum + verticesOf(points.length), 0);
  const b = vertexBuffers(n);
  const ranges = all.map((points) => {
    const start = b.v;
    const { arc, length } = putRibbon(b, points);
    putArrowheads(b, points);
    return { start, count: b.v - start, arc, length };
  });
  const geometry = new THREE.BufferGeometry();
  for (const [name, size] of [["position", 3], ["offset", 2], ["side", 1], ["across", 1], ["bary", 3], ["dist", 1]]) {
    geometry.setAttribute(name, new THREE.BufferAttribute(b[name], size));
  }
  const dynamic = (size) => new THREE.BufferAttribute(new Float32Array(n * size), size).setUsage(THREE.DynamicDrawUsage);
  const attributes = { tint: dynamic(3), width: dynamic(1), dash: dynamic(2) };
  for (const [name, attribute] of Object.entries(attributes)) geometry.setAttribute(name, attribute);
  geometry.setIndex(n > 65535 ? new THREE.Uint32BufferAttribute(b.index, 1) : new THREE.Uint16BufferAttribute(b.index, 1));
  return { geometry, attributes, ranges };
}

/**
 * The edge layer. `build(edges, pointsOf)` makes the geometry for a layout (`pointsOf(edge)`:
 * [x, y, z, side] samples, input end first, at least two, as many as its length on screen
 * needs); `restyle(index, style)` sets edge `index`'s look:
 * {tint: {r, g, b} (sRGB, 0–1), halfWidth, dash: [on, off] | null, arrow: "end" | "start",
 * head} (graph units), or null to hide it; `commit()` sends what was restyled to the GPU.
 */
class EdgeLayer {
  constructor() {
    this.uniforms = { sideVector: { value: new THREE.Vector3() }, pad: { value: 0 } };
    this.material = new THREE.ShaderMaterial({
      uniforms: this.uniforms, vertexShader: VERTEX_SHADER, fragmentShader: FRAGMENT_SHADER,
      transparent: true, depthWrite: false, side: THREE.DoubleSide,
    });
    this.mesh = new THREE.Mesh(new THREE.BufferGeometry(), this.material);
    this.mesh.frustumCulled = false;
    this.attributes = null;
    this.ranges = []; // per edge: {start (first vertex), count (vertices), arc (arc length at each sample), length}
    this.changed = []; // edges restyled since the last commit
  }

  build(edges, pointsOf) {
    const { geometry, attributes, ranges } = ribbonGeometry(edges.map(pointsOf));
    Object.assign(this, { attributes, ranges, changed: [] });
    this.mesh.geometry.dispose();
    this.mesh.geometry = geometry;
  }

  restyle(k, style) {
    const { start, count, arc, length } = this.ranges[k];
    const samples = arc.length - 1;
    const { tint, width, dash } = this.attributes;
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
    this.changed.push(k);
  }

  /** Send the restyled edges to the GPU: their ranges alone when few, else the whole arrays. */
  commit() {
    if (!this.changed.length) return;
    const few = this.changed.length * 8 < this.ranges.length;
    const { tint, width, dash } = this.attributes;
    for (const [attribute, size] of [[tint, 3], [width, 1], [dash, 2]]) {
      attribute.clearUpdateRanges();
      if (few) for (const k of this.changed) attribute.addUpdateRange(this.ranges[k].start * size, this.ranges[k].count * size);
      attribute.needsUpdate = true;
    }
    this.changed = [];
  }

  /** Where the edges' ends go as the cards turn (see view-3d/scene.js frame). */
  setSideVector(vector) {
    this.uniforms.sideVector.value.copy(vector);
  }

  /** Graph units per screen pixel at the camera's target: thin lines are grown by half of it. */
  setPixelSize(units) {
    this.uniforms.pad.value = units * 0.5;
  }

  dispose() {
    this.mesh.geometry.dispose();
    this.material.dispose();
  }
}

export function createEdgeLayer() {
  return new EdgeLayer();
}
