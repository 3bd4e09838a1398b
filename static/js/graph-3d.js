// The 3D view's scene (three.js): the same graph as the SVG, at the same coordinates in the plane
// (leaves left, root right; y flipped to point up), with the layout's columns a little apart in
// depth. Cards are textured panels that turn to face the camera, edges are ribbons with
// arrowheads (edges-3d.js), the chain rule's labels sit beside the lit edges as in the SVG, and
// the pulse dots travel along them on a 2D canvas laid over the WebGL one (pulses-3d.js). The cards
// are drawn together (cards-3d.js), so a frame costs a handful of draw calls whatever the size.
//
// draw(trace, view, options) takes everything it shows as arguments (view: frames.js viewAt);
// a step repaints and restyles only what it changed. WebGL frames are drawn on demand: after a
// draw, a camera move, a resize or a theme change.

import * as THREE from "../vendor/three/three.module.js";
import { cardModel, readPalette } from "./card-paint.js";
import { createCardLayer } from "./cards-3d.js";
import { createEdgeLayer } from "./edges-3d.js";
import { edgeGeometry } from "./graph.js";
import { graphBounds } from "./graph-view.js";
import { createLabelLayer } from "./labels-3d.js";
import { createOrbit } from "./orbit.js";
import { createPulseOverlay } from "./pulses-3d.js";
import { traceIndex } from "./frames.js";

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
 * The edge's samples [x, y, z, side] in the scene, input end first (`side`: see edges-3d.js),
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

/**
 * Mount the scene on `canvas`, whose WebGL2 context `context` the caller made (view-3d.js checks
 * for WebGL before loading three.js), with `overlay` (a 2D canvas over it) for the pulse dots.
 * `reducedMotion()`: no camera animation. `onRender()` is called after each WebGL frame.
 */
export function createGraph3d(canvas, context, overlay, { reducedMotion = () => false, onRender = () => {} } = {}) {
  const renderer = new THREE.WebGLRenderer({ canvas, context, alpha: true });
  renderer.setClearColor(0x000000, 0);
  const scene = new THREE.Scene();
  const camera = new THREE.PerspectiveCamera(FIELD_OF_VIEW, 1, 1, 10000);
  const edges = createEdgeLayer();
  const cardLayer = createCardLayer(renderer);
  const labelLayer = createLabelLayer();
  const pulses = createPulseOverlay(overlay);
  scene.add(edges.mesh, cardLayer.group, labelLayer.group);

  let renders = 0;
  let pending = 0;
  let sceneDirty = true; // the WebGL picture must be drawn again (not only the dots)
  let palette = readPalette(canvas); // the colours the canvas inherits (the page's theme)
  let paletteVersion = 0;
  let tints = {};
  const setTints = () => {
    const rgb = (css) => new THREE.Color(css || "#888888").getRGB({}, THREE.SRGBColorSpace);
    tints = Object.fromEntries(["edge", "forward", "backward"].map((k) => [k, rgb(palette[k])]));
  };
  setTints();

  const orbit = createOrbit(canvas, camera, {
    onChange: () => {
      sceneDirty = true;
      pulses.invalidate();
      invalidate();
      scheduleSharpen();
    },
    reducedMotion,
  });

  // What is drawn: the trace and its layout, the cards, the edges' states, the labels, the dots.
  let drawn = { trace: null, view: null, layout: null, foldConstants: null };
  let cards = new Map(); // node id → {index (in trace.nodes and the card layer), node, model, key}
  let depths = new Map();
  let points = new Map(); // edge id → samples, for the layout drawn
  let edgeIndex = new Map(); // edge id → its index in the edge layer
  let hidden = new Set(); // node ids not drawn (constants folded into their consumers)
  let edgeStates = new Map(); // edge id → the state key its style was set from
  let strokeUnit = 1; // graph units per screen pixel of stroke at the fitted view
  let textureScale = 1; // canvas pixels per graph unit of the card textures

  function invalidate() {
    if (!pending) pending = requestAnimationFrame(frame);
  }

  const sideVector = new THREE.Vector3();
  function frame(now) {
    pending = 0;
    if (sceneDirty) {
      sceneDirty = false;
      cardLayer.face(camera);
      labelLayer.face(camera);
      sideVector.set(1, 0, 0).applyQuaternion(camera.quaternion).sub(new THREE.Vector3(1, 0, 0));
      edges.setSideVector(sideVector);
      edges.setPixelSize(1 / Math.max(1e-6, orbit.pixelsPerUnit()));
      renderer.render(scene, camera);
      renders += 1;
      onRender();
    }
    const radius = Math.max(5, 4 * strokeUnit);
    if (pulses.draw(now, { camera, sideVector, radius, palette })) invalidate();
  }

  // ---- size and sharpness -------------------------------------------------------------------

  let insets = { x: 0, y: 0 };
  /** The pane is `width`×`height` CSS pixels; `pixelInsets` {top, bottom, side} stay clear of the graph. */
  function resize({ width, height, insets: pixelInsets }) {
    if (width < 1 || height < 1) return;
    const ratio = Math.min(2, window.devicePixelRatio || 1);
    const wasHome = orbit.atHome();
    renderer.setPixelRatio(ratio);
    renderer.setSize(width, height, false);
    overlay.width = Math.round(width * ratio);
    overlay.height = Math.round(height * ratio);
    camera.aspect = width / height;
    orbit.setHeight(height);
    insets = {
      x: Math.min(0.4, (2 * pixelInsets.side) / width),
      y: Math.min(0.5, (2 * Math.max(pixelInsets.top, pixelInsets.bottom)) / height),
    };
    if (wasHome) fit();
    else orbit.apply();
  }

  /** Fit the graph into the pane, from the home angle; line widths follow the fitted scale. */
  function fit() {
    if (!drawn.trace) return;
    const b = graphBounds(drawn.trace);
    orbit.fit({ x0: b.x, x1: b.x + b.width, y0: -(b.y + b.height), y1: -b.y, z0: -LAYER_DEPTH, z1: 0 }, insets);
    const typeScale = (parseFloat(getComputedStyle(document.documentElement).fontSize) || 16) / 16;
    strokeUnit = typeScale / Math.max(1e-6, orbit.fittedPixelsPerUnit());
    sharpen(true);
  }

  /** Texture pixels per graph unit for what the camera shows now (√2 steps, within budget). */
  function wantedScale() {
    const needed = orbit.pixelsPerUnit() * renderer.getPixelRatio() * 1.25;
    let scale = Math.min(8, 2 ** (Math.ceil(2 * Math.log2(Math.max(0.25, needed))) / 2));
    const nodes = drawn.trace?.nodes ?? [];
    while (scale > 0.25 && cardLayer.texels(nodes, scale) > TEXTURE_BUDGET) scale /= Math.SQRT2;
    return scale;
  }

  let sharpenTimer = 0;
  function scheduleSharpen() {
    clearTimeout(sharpenTimer);
    sharpenTimer = setTimeout(sharpen, 200);
  }

  /**
   * When the zoom has changed enough (or `force`): repaint the cards and labels at the resolution
   * it needs, and cut the edges into segments of a few pixels at it.
   */
  function sharpen(force = false) {
    const scale = wantedScale();
    if (!drawn.trace || (!force && scale === textureScale)) return;
    textureScale = scale;
    cardLayer.setScale(scale);
    for (const entry of cards.values()) if (entry.model) repaintCard(entry);
    buildEdges(drawn.trace);
    restyleEdges(drawn.trace, drawn.view, null, true);
    drawLabels(true);
    sceneDirty = true;
    invalidate();
  }

  /** The labels over the edges (labels-3d.js) for what is drawn; `repaint`: every one again. */
  function drawLabels(repaint = false) {
    const { trace, view, options } = drawn;
    labelLayer.draw(trace, view, {
      points, hidden, palette, paletteVersion, scale: textureScale, strokeUnit, camera, repaint,
      marks: options?.edgeMarks ?? null,
    });
  }

  // ---- cards ----------------------------------------------------------------------------------

  function repaintCard(entry) {
    cardLayer.paint(entry.index, entry.model, palette);
  }

  /** A new layout: the card layer lays the cards out, at the resolution the view needs. */
  function placeCards(trace) {
    cards = new Map(trace.nodes.map((node, index) => [node.id, { index, node, model: null, key: null }]));
    cardLayer.place(trace.nodes, depths);
    textureScale = 0; // the pictures are made once fit() knows the zoom (sharpen)
  }

  /** Repaint the cards `ids` (all when null) whose model (what they show) changed. */
  function drawCards(trace, view, options, ids) {
    const { nodeById } = traceIndex(trace);
    const shared = { ...options, nodeById, root: trace.root };
    for (const id of ids ?? cards.keys()) {
      const entry = cards.get(id);
      if (!entry) continue;
      entry.node = nodeById.get(id);
      const model = cardModel(entry.node, view, { ...shared, hovered: options.hovered === id, lab: options.lab?.get(id) });
      const key = JSON.stringify(model);
      if (key === entry.key) continue;
      entry.model = model;
      entry.key = key;
      repaintCard(entry);
    }
  }

  // ---- edges ----------------------------------------------------------------------------------

  function buildEdges(trace) {
    const geometry = edgeGeometry(trace);
    const pixelsPerUnit = orbit.pixelsPerUnit() * renderer.getPixelRatio();
    points = new Map(trace.edges.map((e) => [e.id, edgePoints(trace, e, geometry.get(e.id).at, depths, pixelsPerUnit)]));
    edgeIndex = new Map(trace.edges.map((e, i) => [e.id, i]));
    edges.build(trace.edges, (edge) => points.get(edge.id));
    edgeStates = new Map();
  }

  /** Restyle the edges `ids` (all when null) whose state changed; `force`: every one given. */
  function restyleEdges(trace, view, ids = null, force = false) {
    if (!trace) return;
    for (const id of ids ?? edgeIndex.keys()) {
      const edge = traceIndex(trace).edgeById.get(id);
      if (!edge) continue;
      const state = hidden.has(edge.source) ? "hidden" : view.edges.get(id)?.state ?? "idle";
      if (!force && edgeStates.get(id) === state) continue;
      edgeStates.set(id, state);
      const style = EDGE_STYLES[state];
      edges.restyle(edgeIndex.get(id), style && {
        tint: tints[style.color], halfWidth: (style.width / 2) * strokeUnit,
        dash: style.dash?.map((d) => d * strokeUnit) ?? null,
        arrow: state.startsWith("backward") ? "start" : "end", head: Math.max(8, 5 * strokeUnit),
      });
    }
    edges.commit();
  }

  // ---- picking --------------------------------------------------------------------------------

  const projected = new THREE.Vector3();
  function toScreen([x, y, z, s], rect) {
    projected.set(x + s * sideVector.x, y + s * sideVector.y, z + s * sideVector.z).project(camera);
    return [rect.left + ((projected.x + 1) / 2) * rect.width, rect.top + ((1 - projected.y) / 2) * rect.height];
  }

  /** The card's box on screen (a DOMRect) and its depth, for picking and placing explanations. */
  function cardBox(entry, rect) {
    const corners = cardLayer.corners(entry.index).map(([x, y, z]) => toScreen([x, y, z, 0], rect));
    const xs = corners.map((c) => c[0]);
    const ys = corners.map((c) => c[1]);
    const box = new DOMRect(Math.min(...xs), Math.min(...ys), Math.max(...xs) - Math.min(...xs), Math.max(...ys) - Math.min(...ys));
    box.depth = projected.set(...cardLayer.center(entry.index)).project(camera).z;
    return box;
  }

  /**
   * What is under client point (cx, cy): {kind: "node" | "edge", id} or null. The nearest card
   * whose box holds the point (the cards face the camera: their boxes on screen are rectangles),
   * else the nearest edge within a few pixels.
   */
  function pick(cx, cy) {
    if (!drawn.trace) return null;
    const rect = canvas.getBoundingClientRect();
    cardLayer.face(camera);
    let card = null;
    for (const [id, entry] of cards) {
      if (cardLayer.isHidden(entry.index)) continue;
      const box = cardBox(entry, rect);
      const inside = cx >= box.left && cx <= box.right && cy >= box.top && cy <= box.bottom;
      if (inside && (!card || box.depth < card.depth)) card = { id, depth: box.depth };
    }
    if (card) return { kind: "node", id: card.id };
    let best = null;
    for (const edge of drawn.trace.edges) {
      if (hidden.has(edge.source)) continue;
      const screen = points.get(edge.id).map((p) => toScreen(p, rect));
      for (let i = 1; i < screen.length; i++) {
        const distance = segmentDistance([cx, cy], screen[i - 1], screen[i]);
        if (distance <= EDGE_PICK_PX && (!best || distance < best.distance)) best = { id: edge.id, distance };
      }
    }
    return best && { kind: "edge", id: best.id };
  }

  // ---- drawing --------------------------------------------------------------------------------

  /**
   * Draw `trace` as `view` shows it. options: {layout (graph.js layoutKey), foldConstants,
   * hovered, lab (lab-marks.js labCards: what the labs mark on each card, or null), edgeMarks
   * ({frame, finalGrads} of a lab's variant trace, whose lost and late contributions are marked;
   * null), pulseMs (how long
   * the dots travel; 0: none), changed ([node ids, edge ids] that may differ from the last draw
   * of this trace, frames.js changedBetween; null: all)}.
   */
  function draw(trace, view, options) {
    const layoutChanged = drawn.layout !== options.layout;
    const foldChanged = drawn.foldConstants !== options.foldConstants;
    hidden = new Set(options.foldConstants ? trace.nodes.filter((n) => n.kind === "const").map((n) => n.id) : []);
    drawn = { trace, view, options, layout: options.layout, foldConstants: options.foldConstants };
    if (layoutChanged) {
      depths = depthsOf(trace);
      placeCards(trace);
      fit(); // builds the edges and the cards' pictures for the fitted zoom
    }
    for (const [id, entry] of cards) cardLayer.setHidden(entry.index, hidden.has(id));
    const partial = !layoutChanged && !foldChanged && options.changed;
    drawCards(trace, view, options, partial ? new Set(options.changed[0]) : null);
    restyleEdges(trace, view, partial ? new Set(options.changed[1]) : null);
    drawLabels();
    pulses.start(trace, view, options.pulseMs, { points, hidden });
    sceneDirty = true;
    invalidate();
  }

  /** The theme changed: repaint everything in its colours. */
  function repaintAll() {
    palette = readPalette(canvas);
    paletteVersion += 1;
    setTints();
    for (const entry of cards.values()) if (entry.model) repaintCard(entry);
    if (drawn.trace) {
      restyleEdges(drawn.trace, drawn.view, null, true);
      drawLabels(true);
    }
    sceneDirty = true;
    invalidate();
  }

  return {
    draw,
    resize,
    pick,
    repaintAll,
    /** A box for the explanation of `target` ({kind, id}) to sit beside: its card, or (cx, cy). */
    targetRect: (target, cx, cy) => (target.kind === "node" && cards.has(target.id)
      ? cardBox(cards.get(target.id), canvas.getBoundingClientRect()) : new DOMRect(cx - 8, cy - 8, 16, 16)),
    fit: () => orbit.reset(),
    zoomBy: (factor) => orbit.zoomBy(factor),
    dragged: () => orbit.dragged(),
    /** The boxes on screen of the cards drawn (at most 400: explanations are placed clear of them). */
    cardRects() {
      const rect = canvas.getBoundingClientRect();
      cardLayer.face(camera);
      return [...cards.values()].filter((entry) => !cardLayer.isHidden(entry.index)).slice(0, 400).map((entry) => cardBox(entry, rect));
    },
    /** WebGL frames and frames of the travelling dots drawn so far (the benchmark's counters). */
    renders: () => renders,
    pulseFrames: () => pulses.frames(),
    /** Cards drawn (constants folded away are not). */
    drawnNodes: () => (drawn.trace ? drawn.trace.nodes.length - hidden.size : 0),
    /** The screen point at the centre of node `id`'s card (tests click there). */
    screenPoint(id) {
      if (!cards.has(id)) return null;
      cardLayer.face(camera);
      const rect = cardBox(cards.get(id), canvas.getBoundingClientRect());
      return { x: rect.x + rect.width / 2, y: rect.y + rect.height / 2 };
    },
    /** The screen point halfway along edge `id` (tests click there). */
    edgePoint(id) {
      const samples = points.get(id);
      if (!samples) return null;
      const [x, y] = toScreen(samples[Math.round((samples.length - 1) / 2)], canvas.getBoundingClientRect());
      return { x, y };
    },
    dispose() {
      cancelAnimationFrame(pending);
      clearTimeout(sharpenTimer);
      cardLayer.dispose();
      cards.clear();
      labelLayer.dispose();
      edges.dispose();
      renderer.dispose();
    },
  };
}
