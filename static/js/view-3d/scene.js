// The 3D view's scene (three.js): the same graph as the SVG, at the same coordinates in the plane
// (leaves left, root right; y flipped to point up), with the layout's columns a little apart in
// depth. Cards are textured panels that turn to face the camera, edges are ribbons with
// arrowheads (view-3d/edges.js), the chain rule's labels sit beside the lit edges as in the SVG, and
// the pulse dots travel along them on a 2D canvas laid over the WebGL one (view-3d/pulses.js). The cards
// are drawn together (view-3d/cards.js), so a frame costs a handful of draw calls whatever the size.
//
// draw(trace, view, options) takes everything it shows as arguments (view: core/frames.js viewAt);
// a step repaints and restyles only what it changed. WebGL frames are drawn on demand: after a
// draw, a camera move, a resize or a theme change.

import * as THREE from "../../vendor/three/three.module.js";
import { cardModel, readPalette } from "./card-paint.js";
import { createCardLayer } from "./cards.js";
import { createEdgeLayer } from "./edges.js";
import { edgeGeometry, graphBounds } from "../graph/geometry.js";
import { createLabelLayer } from "./labels.js";
import { createOrbit } from "./orbit.js";
import { createPulseOverlay } from "./pulses.js";
import { traceIndex } from "../core/frames.js";

const LAYER_DEPTH = 48; // graph units between neighbouring columns (cards are ~64 units tall)
// An edge is drawn as a polyline of segments about this long on screen (within the bounds).
const SEGMENT_PX = 12;
const MIN_SEGMENTS = 6;
const MAX_SEGMENTS = 32;
const TEXTURE_BUDGET = 24e6; // texels for all the cards' pictures together (~100 MB at most)
const EDGE_PICK_PX = 7;
const FIELD_OF_VIEW = 22; // degrees, vertical: enough perspective to show depth, little distortion

// Edge styles by timeline state; widths and dashes in screen pixels at the fitted view, as the
// SVG's strokes (app.css .edge.*).
const EDGE_STYLES = {
  idle: { color: "edge", width: 1.5, dash: null },
  forward: { color: "forward", width: 1.75, dash: null },
  "forward-active": { color: "forward", width: 3.5, dash: null },
  backward: { color: "backward", width: 1.75, dash: [7, 5] },
  "backward-active": { color: "backward", width: 3.5, dash: [9, 5] },
};

const smooth = (t) => t * t * (3 - 2 * t);

/** Depth of each node: the layout's columns (distinct x centres) alternate, every other one behind. */
function depthsOf(trace) {
  const xs = [...new Set(trace.nodes.map((n) => Math.round(n.x)))].sort((a, b) => a - b);
  const column = new Map(xs.map((x, i) => [x, i]));
  return new Map(trace.nodes.map((n) => [n.id, column.get(Math.round(n.x)) % 2 ? -LAYER_DEPTH : 0]));
}

/**
 * The edge's samples [x, y, z, side] in the scene, input end first (`side`: see view-3d/edges.js),
 * enough for segments of about SEGMENT_PX at `pixelsPerUnit`.
 */
function edgePoints(trace, edge, at, depths, pixelsPerUnit) {
  const { nodeById } = traceIndex(trace);
  const [z0, z1] = [depths.get(edge.source) ?? 0, depths.get(edge.target) ?? 0];
  const [s0, s1] = [nodeById.get(edge.source).width / 2, -nodeById.get(edge.target).width / 2];
  let length = 0;
  for (let i = 1; i <= 8; i++) {
    const [[ax, ay], [bx, by]] = [at((i - 1) / 8), at(i / 8)];
    length += Math.hypot(bx - ax, by - ay);
  }
  const segments = Math.min(MAX_SEGMENTS, Math.max(MIN_SEGMENTS, Math.ceil((length * pixelsPerUnit) / SEGMENT_PX)));
  const points = [];
  for (let i = 0; i <= segments; i++) {
    const t = i / segments;
    const [x, y] = at(t);
    points.push([x, -y, z0 + (z1 - z0) * smooth(t), s0 + (s1 - s0) * t]);
  }
  return points;
}

function segmentDistance([px, py], [ax, ay], [bx, by]) {
  const [dx, dy] = [bx - ax, by - ay];
  const length2 = dx * dx + dy * dy;
  const t = length2 ? Math.max(0, Math.min(1, ((px - ax) * dx + (py - ay) * dy) / length2)) : 0;
  return Math.hypot(px - (ax + t * dx), py - (ay + t * dy));
}

/** The edges' colours (three.js RGB) from the palette's CSS colours. */
function tintsOf(palette) {
  const rgb = (css) => new THREE.Color(css || "#888888").getRGB({}, THREE.SRGBColorSpace);
  return Object.fromEntries(["edge", "forward", "backward"].map((k) => [k, rgb(palette[k])]));
}

/** An edge's style for the scene at timeline state `state` (null: not drawn). */
function edgeStyle(state, tints, strokeUnit) {
  const style = EDGE_STYLES[state];
  return style && {
    tint: tints[style.color], halfWidth: (style.width / 2) * strokeUnit,
    dash: style.dash?.map((d) => d * strokeUnit) ?? null,
    arrow: state.startsWith("backward") ? "start" : "end", head: Math.max(8, 5 * strokeUnit),
  };
}

/**
 * The scene on `canvas`, whose WebGL2 context `context` the caller made (view-3d/view.js checks for
 * WebGL before loading three.js), with `overlay` (a 2D canvas over it) for the pulse dots.
 * `reducedMotion()`: no camera animation. `onRender()` is called after each WebGL frame.
 */
class Graph3d {
  constructor(canvas, context, overlay, { reducedMotion, onRender }) {
    Object.assign(this, { canvas, overlay, onRender });
    this.renderer = new THREE.WebGLRenderer({ canvas, context, alpha: true });
    this.renderer.setClearColor(0x000000, 0);
    this.scene = new THREE.Scene();
    this.camera = new THREE.PerspectiveCamera(FIELD_OF_VIEW, 1, 1, 10000);
    this.edges = createEdgeLayer();
    this.cardLayer = createCardLayer(this.renderer);
    this.labelLayer = createLabelLayer();
    this.pulses = createPulseOverlay(overlay);
    this.scene.add(this.edges.mesh, this.cardLayer.group, this.labelLayer.group);
    Object.assign(this, { renderCount: 0, pending: 0, sceneDirty: true, paletteVersion: 0, sharpenTimer: 0 });
    this.palette = readPalette(canvas); // the colours the canvas inherits (the page's theme)
    this.tints = tintsOf(this.palette);
    this.orbit = createOrbit(canvas, this.camera, { onChange: () => this.cameraMoved(), reducedMotion });
    // What is drawn: the trace and its layout, the cards, the edges' states, the labels, the dots.
    this.drawn = { trace: null, view: null, layout: null, foldConstants: null };
    this.cards = new Map(); // node id → {index (in trace.nodes and the card layer), node, model, key}
    this.depths = new Map();
    this.points = new Map(); // edge id → samples, for the layout drawn
    this.edgeIndex = new Map(); // edge id → its index in the edge layer
    this.hidden = new Set(); // node ids not drawn (constants folded into their consumers)
    this.edgeStates = new Map(); // edge id → the state key its style was set from
    this.strokeUnit = 1; // graph units per screen pixel of stroke at the fitted view
    this.textureScale = 1; // canvas pixels per graph unit of the card textures
    this.insets = { x: 0, y: 0 };
    this.sideVector = new THREE.Vector3();
    this.projected = new THREE.Vector3();
  }

  cameraMoved() {
    this.sceneDirty = true;
    this.pulses.invalidate();
    this.invalidate();
    clearTimeout(this.sharpenTimer);
    this.sharpenTimer = setTimeout(() => this.sharpen(), 200);
  }

  invalidate() {
    if (!this.pending) this.pending = requestAnimationFrame((now) => this.frame(now));
  }

  frame(now) {
    this.pending = 0;
    if (this.sceneDirty) {
      this.sceneDirty = false;
      this.cardLayer.face(this.camera);
      this.labelLayer.face(this.camera);
      this.sideVector.set(1, 0, 0).applyQuaternion(this.camera.quaternion).sub(new THREE.Vector3(1, 0, 0));
      this.edges.setSideVector(this.sideVector);
      this.edges.setPixelSize(1 / Math.max(1e-6, this.orbit.pixelsPerUnit()));
      this.renderer.render(this.scene, this.camera);
      this.renderCount += 1;
      this.onRender();
    }
    const radius = Math.max(5, 4 * this.strokeUnit);
    if (this.pulses.draw(now, { camera: this.camera, sideVector: this.sideVector, radius, palette: this.palette })) this.invalidate();
  }

  // ---- size and sharpness -------------------------------------------------------------------

  /** The pane is `width`×`height` CSS pixels; `pixelInsets` {top, bottom, side} stay clear of the graph. */
  resize({ width, height, insets: pixelInsets }) {
    if (width < 1 || height < 1) return;
    const ratio = Math.min(2, window.devicePixelRatio || 1);
    const wasHome = this.orbit.atHome();
    this.renderer.setPixelRatio(ratio);
    this.renderer.setSize(width, height, false);
    this.overlay.width = Math.round(width * ratio);
    this.overlay.height = Math.round(height * ratio);
    this.camera.aspect = width / height;
    this.orbit.setHeight(height);
    this.insets = {
      x: Math.min(0.4, (2 * pixelInsets.side) / width),
      y: Math.min(0.5, (2 * Math.max(pixelInsets.top, pixelInsets.bottom)) / height),
    };
    if (wasHome) this.fitGraph();
    else this.orbit.apply();
  }

  /** Fit the graph into the pane, from the home angle; line widths follow the fitted scale. */
  fitGraph() {
    if (!this.drawn.trace) return;
    const b = graphBounds(this.drawn.trace);
    this.orbit.fit({ x0: b.x, x1: b.x + b.width, y0: -(b.y + b.height), y1: -b.y, z0: -LAYER_DEPTH, z1: 0 }, this.insets);
    const typeScale = (parseFloat(getComputedStyle(document.documentElement).fontSize) || 16) / 16;
    this.strokeUnit = typeScale / Math.max(1e-6, this.orbit.fittedPixelsPerUnit());
    this.sharpen(true);
  }

  /** Texture pixels per graph unit for what the camera shows now (√2 steps, within budget). */
  wantedScale() {
    const needed = this.orbit.pixelsPerUnit() * this.renderer.getPixelRatio() * 1.25;
    let scale = Math.min(8, 2 ** (Math.ceil(2 * Math.log2(Math.max(0.25, needed))) / 2));
    const nodes = this.drawn.trace?.nodes ?? [];
    while (scale > 0.25 && this.cardLayer.texels(nodes, scale) > TEXTURE_BUDGET) scale /= Math.SQRT2;
    return scale;
  }

  /**
   * When the zoom has changed enough (or `force`): repaint the cards and labels at the resolution
   * it needs, and cut the edges into segments of a few pixels at it.
   */
  sharpen(force = false) {
    const scale = this.wantedScale();
    if (!this.drawn.trace || (!force && scale === this.textureScale)) return;
    this.textureScale = scale;
    this.cardLayer.setScale(scale);
    for (const entry of this.cards.values()) if (entry.model) this.repaintCard(entry);
    this.buildEdges(this.drawn.trace);
    this.restyleEdges(this.drawn.trace, this.drawn.view, null, true);
    this.drawLabels(true);
    this.sceneDirty = true;
    this.invalidate();
  }

  /** The labels over the edges (view-3d/labels.js) for what is drawn; `repaint`: every one again. */
  drawLabels(repaint = false) {
    const { trace, view, options } = this.drawn;
    this.labelLayer.draw(trace, view, {
      points: this.points, hidden: this.hidden, palette: this.palette, paletteVersion: this.paletteVersion,
      scale: this.textureScale, strokeUnit: this.strokeUnit, camera: this.camera, repaint,
      marks: options?.edgeMarks ?? null,
    });
  }

  // ---- cards ----------------------------------------------------------------------------------

  repaintCard(entry) {
    this.cardLayer.paint(entry.index, entry.model, this.palette);
  }

  /** A new layout: the card layer lays the cards out, at the resolution the view needs. */
  placeCards(trace) {
    this.cards = new Map(trace.nodes.map((node, index) => [node.id, { index, node, model: null, key: null }]));
    this.cardLayer.place(trace.nodes, this.depths);
    this.textureScale = 0; // the pictures are made once fit() knows the zoom (sharpen)
  }

  /** Repaint the cards `ids` (all when null) whose model (what they show) changed. */
  drawCards(trace, view, options, ids) {
    const { nodeById } = traceIndex(trace);
    const shared = { ...options, nodeById, root: trace.root };
    for (const id of ids ?? this.cards.keys()) {
      const entry = this.cards.get(id);
      if (!entry) continue;
      entry.node = nodeById.get(id);
      const model = cardModel(entry.node, view, { ...shared, hovered: options.hovered === id, lab: options.lab?.get(id) });
      const key = JSON.stringify(model);
      if (key === entry.key) continue;
      entry.model = model;
      entry.key = key;
      this.repaintCard(entry);
    }
  }

  // ---- edges ----------------------------------------------------------------------------------

  buildEdges(trace) {
    const geometry = edgeGeometry(trace);
    const pixelsPerUnit = this.orbit.pixelsPerUnit() * this.renderer.getPixelRatio();
    this.points = new Map(trace.edges.map((e) => [e.id, edgePoints(trace, e, geometry.get(e.id).at, this.depths, pixelsPerUnit)]));
    this.edgeIndex = new Map(trace.edges.map((e, i) => [e.id, i]));
    this.edges.build(trace.edges, (edge) => this.points.get(edge.id));
    this.edgeStates = new Map();
  }

  /** Restyle the edges `ids` (all when null) whose state changed; `force`: every one given. */
  restyleEdges(trace, view, ids = null, force = false) {
    if (!trace) return;
    for (const id of ids ?? this.edgeIndex.keys()) {
      const edge = traceIndex(trace).edgeById.get(id);
      if (!edge) continue;
      const state = this.hidden.has(edge.source) ? "hidden" : view.edges.get(id)?.state ?? "idle";
      if (!force && this.edgeStates.get(id) === state) continue;
      this.edgeStates.set(id, state);
      this.edges.restyle(this.edgeIndex.get(id), edgeStyle(state, this.tints, this.strokeUnit));
    }
    this.edges.commit();
  }

  // ---- picking --------------------------------------------------------------------------------

  toScreen([x, y, z, s], rect) {
    const side = this.sideVector;
    this.projected.set(x + s * side.x, y + s * side.y, z + s * side.z).project(this.camera);
    return [rect.left + ((this.projected.x + 1) / 2) * rect.width, rect.top + ((1 - this.projected.y) / 2) * rect.height];
  }

  /** The card's box on screen (a DOMRect) and its depth, for picking and placing explanations. */
  cardBox(entry, rect) {
    const corners = this.cardLayer.corners(entry.index).map(([x, y, z]) => this.toScreen([x, y, z, 0], rect));
    const xs = corners.map((c) => c[0]);
    const ys = corners.map((c) => c[1]);
    const box = new DOMRect(Math.min(...xs), Math.min(...ys), Math.max(...xs) - Math.min(...xs), Math.max(...ys) - Math.min(...ys));
    box.depth = this.projected.set(...this.cardLayer.center(entry.index)).project(this.camera).z;
    return box;
  }

  /** The nearest card whose box on screen holds client point (cx, cy): {id, depth} or null. */
  cardAt(cx, cy, rect) {
    this.cardLayer.face(this.camera);
    let card = null;
    for (const [id, entry] of this.cards) {
      if (this.cardLayer.isHidden(entry.index)) continue;
      const box = this.cardBox(entry, rect);
      const inside = cx >= box.left && cx <= box.right && cy >= box.top && cy <= box.bottom;
      if (inside && (!card || box.depth < card.depth)) card = { id, depth: box.depth };
    }
    return card;
  }

  /** The nearest edge within a few pixels of client point (cx, cy), or null. */
  edgeAt(cx, cy, rect) {
    let best = null;
    for (const edge of this.drawn.trace.edges) {
      if (this.hidden.has(edge.source)) continue;
      const screen = this.points.get(edge.id).map((point) => this.toScreen(point, rect));
      for (let i = 1; i < screen.length; i++) {
        const distance = segmentDistance([cx, cy], screen[i - 1], screen[i]);
        if (distance <= EDGE_PICK_PX && (!best || distance < best.distance)) best = { id: edge.id, distance };
      }
    }
    return best;
  }

  /**
   * What is under client point (cx, cy): {kind: "node" | "edge", id} or null. The nearest card
   * whose box holds the point (the cards face the camera: their boxes on screen are rectangles),
   * else the nearest edge within a few pixels.
   */
  pick(cx, cy) {
    if (!this.drawn.trace) return null;
    const rect = this.canvas.getBoundingClientRect();
    const card = this.cardAt(cx, cy, rect);
    if (card) return { kind: "node", id: card.id };
    const edge = this.edgeAt(cx, cy, rect);
    return edge && { kind: "edge", id: edge.id };
  }

  // ---- drawing --------------------------------------------------------------------------------

  /**
   * Draw `trace` as `view` shows it. options: {layout (graph/draw.js layoutKey), foldConstants,
   * hovered, lab (labs/marks.js labCards: what the labs mark on each card, or null), edgeMarks
   * ({frame, finalGrads} of a lab's variant trace, whose lost and late contributions are marked;
   * null), pulseMs (how long the dots travel; 0: none), changed ([node ids, edge ids] that may
   * differ from the last draw of this trace, core/frames.js changedBetween; null: all)}.
   */
  draw(trace, view, options) {
    const layoutChanged = this.drawn.layout !== options.layout;
    const foldChanged = this.drawn.foldConstants !== options.foldConstants;
    this.hidden = new Set(options.foldConstants ? trace.nodes.filter((n) => n.kind === "const").map((n) => n.id) : []);
    this.drawn = { trace, view, options, layout: options.layout, foldConstants: options.foldConstants };
    if (layoutChanged) {
      this.depths = depthsOf(trace);
      this.placeCards(trace);
      this.fitGraph(); // builds the edges and the cards' pictures for the fitted zoom
    }
    for (const [id, entry] of this.cards) this.cardLayer.setHidden(entry.index, this.hidden.has(id));
    const partial = !layoutChanged && !foldChanged && options.changed;
    this.drawCards(trace, view, options, partial ? new Set(options.changed[0]) : null);
    this.restyleEdges(trace, view, partial ? new Set(options.changed[1]) : null);
    this.drawLabels();
    this.pulses.start(trace, view, options.pulseMs, { points: this.points, hidden: this.hidden });
    this.sceneDirty = true;
    this.invalidate();
  }

  /** The theme changed: repaint everything in its colours. */
  repaintAll() {
    this.palette = readPalette(this.canvas);
    this.paletteVersion += 1;
    this.tints = tintsOf(this.palette);
    for (const entry of this.cards.values()) if (entry.model) this.repaintCard(entry);
    if (this.drawn.trace) {
      this.restyleEdges(this.drawn.trace, this.drawn.view, null, true);
      this.drawLabels(true);
    }
    this.sceneDirty = true;
    this.invalidate();
  }

  dispose() {
    cancelAnimationFrame(this.pending);
    clearTimeout(this.sharpenTimer);
    this.cardLayer.dispose();
    this.cards.clear();
    this.labelLayer.dispose();
    this.edges.dispose();
    this.renderer.dispose();
  }
}

/**
 * The 3D scene (see Graph3d) for view-3d/view.js: {draw, resize, pick, repaintAll, targetRect, fit,
 * zoomBy, dragged, cardRects, renders, pulseFrames, drawnNodes, screenPoint, edgePoint, dispose}.
 */
export function createGraph3d(canvas, context, overlay, { reducedMotion = () => false, onRender = () => {} } = {}) {
  const g = new Graph3d(canvas, context, overlay, { reducedMotion, onRender });
  const rect = () => canvas.getBoundingClientRect();
  return {
    draw: (trace, view, options) => g.draw(trace, view, options),
    resize: (size) => g.resize(size),
    pick: (cx, cy) => g.pick(cx, cy),
    repaintAll: () => g.repaintAll(),
    /** A box for the explanation of `target` ({kind, id}) to sit beside: its card, or (cx, cy). */
    targetRect: (target, cx, cy) => (target.kind === "node" && g.cards.has(target.id)
      ? g.cardBox(g.cards.get(target.id), rect()) : new DOMRect(cx - 8, cy - 8, 16, 16)),
    fit: () => g.orbit.reset(),
    zoomBy: (factor) => g.orbit.zoomBy(factor),
    dragged: () => g.orbit.dragged(),
    /** The boxes on screen of the cards drawn (at most 400: explanations are placed clear of them). */
    cardRects() {
      g.cardLayer.face(g.camera);
      return [...g.cards.values()].filter((entry) => !g.cardLayer.isHidden(entry.index)).slice(0, 400).map((entry) => g.cardBox(entry, rect()));
    },
    /** WebGL frames and frames of the travelling dots drawn so far (the benchmark's counters). */
    renders: () => g.renderCount,
    pulseFrames: () => g.pulses.frames(),
    /** Cards drawn (constants folded away are not). */
    drawnNodes: () => (g.drawn.trace ? g.drawn.trace.nodes.length - g.hidden.size : 0),
    /** The screen point at the centre of node `id`'s card (tests click there). */
    screenPoint(id) {
      if (!g.cards.has(id)) return null;
      g.cardLayer.face(g.camera);
      const box = g.cardBox(g.cards.get(id), rect());
      return { x: box.x + box.width / 2, y: box.y + box.height / 2 };
    },
    /** The screen point halfway along edge `id` (tests click there). */
    edgePoint(id) {
      const samples = g.points.get(id);
      if (!samples) return null;
      const [x, y] = g.toScreen(samples[Math.round((samples.length - 1) / 2)], rect());
      return { x, y };
    },
    dispose: () => g.dispose(),
  };
}
