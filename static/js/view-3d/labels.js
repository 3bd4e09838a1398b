// The 3D view's labels over the edges: the chain rule on the lit edges (`upstream × local =
// contribution`, placed by graph/draw.js as in the SVG; one moved off its edge gets a dashed leader
// back to it) and the labs' lost and late marks. Each label is a camera-facing plane with its
// text painted by view-3d/card-paint.js; the planes are kept and reused from step to step.

import * as THREE from "../../vendor/three/three.module.js";
import { labelBox, paintLabel } from "./card-paint.js";
import { cardBoxes, edgeGeometry, placedEdgeLabels } from "../graph/geometry.js";
import { t } from "../core/i18n.js";
import { edgeMarks, freeSpot } from "../labs/marks.js";
import { traceIndex } from "../core/frames.js";

const MAX_TEXTURE_SIDE = 4096;
const FRONT = 4; // graph units in front of the edge's depth

const boxOf = ({ x, y, width, height }) => ({ x0: x - width / 2, x1: x + width / 2, y0: y - height / 2, y1: y + height / 2 });

/**
 * The labs' marks on edges (labs/marks.js edgeMarks: a lost contribution, crossed out, or a late
 * one), each at a spot along its edge that covers no card and no label in `taken`, as in the SVG.
 */
function labMarks(trace, { frame, finalGrads, hidden }, taken, fs) {
  const geometry = edgeGeometry(trace);
  const { edgeById } = traceIndex(trace);
  const boxes = [...cardBoxes(trace), ...taken.map(boxOf)];
  const marks = [];
  for (const mark of edgeMarks(trace, frame, finalGrads)) {
    if (hidden.has(edgeById.get(mark.edge)?.source)) continue;
    const text = mark.kind === "lost" ? `${t("ui.mark.lost")} ${mark.value}` : `${t("ui.mark.late")} +${mark.value}`;
    const { width, height } = labelBox(text, fs);
    const [x, y] = freeSpot(geometry.get(mark.edge).at, width, height, boxes);
    marks.push({ id: `mark:${mark.edge}`, edge: mark.edge, kind: mark.kind, text, struck: mark.kind === "lost" ? mark.value : "", fs, x, y, width, height });
  }
  return marks;
}

/** The labels of `view` as the SVG places them, and the labs' marks, less those on hidden edges. */
function labelItems(trace, view, { hidden, marks }) {
  const { edgeById } = traceIndex(trace);
  const { labels: chain, fontSize } = placedEdgeLabels(trace, view);
  const items = chain.filter((label) => !hidden.has(edgeById.get(label.id)?.source))
    .map((label) => ({ ...label, fs: fontSize, ...labelBox(label.text, fontSize) }));
  if (marks) items.push(...labMarks(trace, { ...marks, hidden }, items, fontSize * 0.9));
  return items;
}

/** The label layer: `group` goes into the scene; draw() after each step, face() before a frame. */
class LabelLayer {
  constructor() {
    this.group = new THREE.Group();
    this.leaderMaterial = new THREE.LineDashedMaterial({ color: 0x888888, dashSize: 2, gapSize: 2, depthTest: false, transparent: true });
    this.leaders = new THREE.LineSegments(new THREE.BufferGeometry(), this.leaderMaterial);
    this.leaders.frustumCulled = false;
    this.leaders.renderOrder = 9;
    this.group.add(this.leaders);
    this.plane = new THREE.PlaneGeometry(1, 1);
    this.shown = new Map(); // label id → {mesh, texture, canvas, key, size}
    this.spare = []; // planes not shown now, kept for the next labels
  }

  planeFor(id, quaternion) {
    let entry = this.shown.get(id) ?? this.spare.pop();
    if (!entry) {
      // Label planes are kept and reused: disposing the last one would let three.js drop its
      // shader program and compile it again at the next step.
      const canvas = document.createElement("canvas");
      const texture = new THREE.CanvasTexture(canvas);
      texture.colorSpace = THREE.SRGBColorSpace;
      const mesh = new THREE.Mesh(this.plane, new THREE.MeshBasicMaterial({ map: texture, transparent: true, depthTest: false }));
      mesh.renderOrder = 10;
      mesh.quaternion.copy(quaternion);
      this.group.add(mesh);
      entry = { mesh, texture, canvas, key: null, size: "" };
    }
    this.shown.set(id, entry);
    entry.mesh.visible = true;
    return entry;
  }

  /** Planes no label of `ids` uses go back to the spares. */
  retire(ids) {
    for (const [id, entry] of this.shown) {
      if (ids.has(id)) continue;
      this.shown.delete(id);
      entry.mesh.visible = false;
      this.spare.push(entry);
    }
  }

  /** Paint `item`'s picture on its plane if what it shows changed (or `repaint`). */
  paintItem(entry, item, { palette, paletteVersion, scale, repaint }) {
    entry.mesh.scale.set(item.width + 4, item.height + 4, 1);
    const size = `${item.width}x${item.height}|${scale}`;
    const key = `${item.kind}|${item.text}|${size}|${paletteVersion}`;
    if (!repaint && entry.key === key) return;
    paintLabel(entry.canvas, item, item.fs, palette, Math.min(scale, MAX_TEXTURE_SIDE / (item.width + 4)));
    if (entry.size !== size) entry.texture.dispose(); // a new size needs new storage
    entry.texture.needsUpdate = true;
    entry.key = key;
    entry.size = size;
  }

  /** The dashed leaders from labels moved off their edges back to the edges' middles. */
  drawLeaders(leaderPoints, palette, strokeUnit) {
    const { leaders, leaderMaterial } = this;
    leaders.geometry.dispose();
    leaders.geometry = new THREE.BufferGeometry();
    leaders.geometry.setAttribute("position", new THREE.Float32BufferAttribute(leaderPoints, 3));
    leaders.computeLineDistances();
    leaderMaterial.color.set(palette.backward || "#888888");
    leaderMaterial.dashSize = leaderMaterial.gapSize = 2 * strokeUnit;
  }

  /**
   * Show the labels of `view`. `context`: {points (edge id → scene samples), hidden (node ids not
   * drawn), palette, paletteVersion, scale (texture pixels per unit), strokeUnit, camera, marks
   * ({frame, finalGrads} of a lab's variant trace, else null), repaint (paint every label again)}.
   */
  draw(trace, view, context) {
    const { points, camera, repaint = false } = context;
    const items = labelItems(trace, view, context);
    this.retire(new Set(items.map((item) => item.id)));
    const leaderPoints = [];
    for (const item of items) {
      const entry = this.planeFor(item.id, camera.quaternion);
      this.paintItem(entry, item, { ...context, repaint });
      const samples = points.get(item.edge ?? item.id);
      const mid = samples[Math.round((samples.length - 1) / 2)];
      entry.mesh.position.set(item.x, -item.y, mid[2] + FRONT);
      if (Math.abs(item.dx ?? 0) > 1 || Math.abs(item.dy ?? 0) > 1) {
        leaderPoints.push(item.x, -(item.y + Math.sign(item.dy) * (item.height / 2)), mid[2] + FRONT);
        leaderPoints.push(item.x + item.dx, -(item.y + item.dy), mid[2]);
      }
    }
    this.drawLeaders(leaderPoints, context.palette, context.strokeUnit);
  }

  /** Turn the labels to face `camera`. */
  face(camera) {
    for (const entry of this.shown.values()) entry.mesh.quaternion.copy(camera.quaternion);
  }

  dispose() {
    for (const entry of [...this.shown.values(), ...this.spare]) {
      entry.mesh.material.dispose();
      entry.texture.dispose();
    }
    this.plane.dispose();
    this.leaders.geometry.dispose();
    this.leaderMaterial.dispose();
  }
}

export function createLabelLayer() {
  return new LabelLayer();
}
