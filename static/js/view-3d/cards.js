// The 3D view's cards: every card is one instance of a camera-facing quad, its picture one layer
// of a texture array (a few arrays for large graphs), so the whole graph's cards are drawn in a
// draw call or a few, and a step uploads only the cards it repainted. The pictures are painted by
// view-3d/card-paint.js at `scale` texture pixels per graph unit (view-3d/scene.js picks it from the zoom).

import * as THREE from "../../vendor/three/three.module.js";
import { cardPanel, paintCard } from "./card-paint.js";

const VERTEX_SHADER = `
attribute vec3 center;
attribute vec2 size;     // the panel in graph units (0, 0: not drawn)
attribute vec3 picture;  // layer, and the share of the layer's width and height the picture uses
uniform vec3 cameraRight;
uniform vec3 cameraUp;
varying vec2 vUv;
varying float vLayer;
void main() {
  vec3 p = center + cameraRight * position.x * size.x + cameraUp * position.y * size.y;
  vUv = vec2(uv.x * picture.y, (1.0 - uv.y) * picture.z); // canvas rows run top down
  vLayer = picture.x;
  gl_Position = projectionMatrix * viewMatrix * vec4(p, 1.0);
}`;

const FRAGMENT_SHADER = `
uniform sampler2DArray pictures;
varying vec2 vUv;
varying float vLayer;
void main() {
  vec4 color = texture(pictures, vec3(vUv, vLayer));
  if (color.a < 0.02) discard;
  gl_FragColor = color;
}`;

const MAX_LAYERS = 1024; // per texture array (WebGL2 promises 256; most have 2048)

/** The largest panel of `nodes` (graph units): every card's picture gets a layer this big. */
function largestPanel(nodes) {
  let [width, height] = [1, 1];
  for (const n of nodes) {
    const panel = cardPanel(n);
    width = Math.max(width, panel.width);
    height = Math.max(height, panel.height);
  }
  return { width, height };
}

/** A texture array of `count` layers of `layer`'s size: storage only, the cards are copied in. */
function arrayTexture(layer, count) {
  const texture = new THREE.DataArrayTexture(null, layer.width, layer.height, count);
  texture.source.dataReady = false; // storage only: the cards are copied in one by one
  texture.generateMipmaps = false;
  texture.minFilter = THREE.LinearFilter;
  texture.magFilter = THREE.LinearFilter;
  texture.needsUpdate = true;
  return texture;
}

/** The instances' attributes of cards `first`…`first + count` (centres, sizes, pictures). */
function instanceGeometry(quad, { nodes, centers, hidden, layer }, first, count) {
  const geometry = new THREE.InstancedBufferGeometry().copy(quad);
  geometry.instanceCount = count;
  const center = new Float32Array(count * 3);
  const size = new Float32Array(count * 2);
  const picture = new Float32Array(count * 3);
  for (let k = 0; k < count; k++) {
    const i = first + k;
    const panel = cardPanel(nodes[i]);
    center.set(centers[i], k * 3);
    size.set(hidden[i] ? [0, 0] : [panel.width, panel.height], k * 2);
    picture.set([k, (panel.width * layer.scale) / layer.width, (panel.height * layer.scale) / layer.height], k * 3);
  }
  geometry.setAttribute("center", new THREE.InstancedBufferAttribute(center, 3));
  geometry.setAttribute("size", new THREE.InstancedBufferAttribute(size, 2));
  geometry.setAttribute("picture", new THREE.InstancedBufferAttribute(picture, 3));
  return geometry;
}

/**
 * The card layer. `place(nodes, depths)` lays a graph's cards out (once per layout);
 * `setScale(scale)` sizes the pictures (then every card must be painted again); `paint(i, model,
 * palette)` paints card i (index in `nodes`); `setHidden(i, hidden)`; `face(camera)` turns the
 * cards to it (before each frame); `corners` and `center` find cards in the scene.
 */
class CardLayer {
  constructor(renderer) {
    this.renderer = renderer;
    this.group = new THREE.Group();
    const gl = renderer.getContext();
    this.layersPerArray = Math.min(MAX_LAYERS, gl.getParameter(gl.MAX_ARRAY_TEXTURE_LAYERS));
    this.maxSide = Math.min(4096, gl.getParameter(gl.MAX_TEXTURE_SIZE));
    this.uniforms = { cameraRight: { value: new THREE.Vector3(1, 0, 0) }, cameraUp: { value: new THREE.Vector3(0, 1, 0) } };
    this.scratch = document.createElement("canvas");
    this.source = new THREE.Texture(this.scratch); // never drawn: only copied into the arrays from the CPU
    Object.assign(this, { nodes: [], chunks: [], centers: [], hidden: [], layer: { width: 1, height: 1, scale: 1 }, maxPanel: { width: 1, height: 1 } });
  }

  disposeChunks() {
    for (const chunk of this.chunks) {
      this.group.remove(chunk.mesh);
      chunk.geometry.dispose();
      chunk.mesh.material.dispose();
      chunk.texture.dispose();
    }
    this.chunks = [];
  }

  /** Chunks of at most `layersPerArray` cards, each one mesh over one texture array. */
  build() {
    this.disposeChunks();
    const quad = new THREE.PlaneGeometry(1, 1);
    for (let first = 0; first < this.nodes.length; first += this.layersPerArray) {
      const count = Math.min(this.layersPerArray, this.nodes.length - first);
      const geometry = instanceGeometry(quad, this, first, count);
      const texture = arrayTexture(this.layer, count);
      const material = new THREE.ShaderMaterial({
        uniforms: { ...this.uniforms, pictures: { value: texture } },
        vertexShader: VERTEX_SHADER, fragmentShader: FRAGMENT_SHADER, transparent: true,
      });
      const mesh = new THREE.Mesh(geometry, material);
      mesh.frustumCulled = false;
      mesh.renderOrder = 1; // over the edges, which are drawn first
      this.group.add(mesh);
      this.chunks.push({ mesh, texture, geometry, first, count });
    }
    quad.dispose();
  }

  chunkOf(i) {
    return this.chunks[Math.floor(i / this.layersPerArray)];
  }

  /** Lay out `nodes` (trace.nodes) at their places (`depths`: node id → z); setScale next. */
  place(nodes, depths) {
    this.nodes = nodes;
    this.centers = nodes.map((n) => [n.x, -n.y, depths.get(n.id) ?? 0]);
    this.hidden = nodes.map(() => false);
    this.maxPanel = largestPanel(nodes);
    this.disposeChunks(); // setScale makes the new ones
  }

  /** Pictures at `scale` texture pixels per graph unit (at most the GPU's largest texture). */
  setScale(scale) {
    const fitted = Math.min(scale, this.maxSide / this.maxPanel.width, this.maxSide / this.maxPanel.height);
    this.layer = { scale: fitted, width: Math.ceil(this.maxPanel.width * fitted) + 1, height: Math.ceil(this.maxPanel.height * fitted) + 1 };
    this.build();
  }

  /** Texels the pictures of `nodes` take at `scale` (view-3d/scene.js keeps this in budget). */
  texels(nodes, scale) {
    const { width, height } = largestPanel(nodes);
    return nodes.length * width * height * scale * scale;
  }

  paint(i, model, palette) {
    paintCard(this.scratch, this.nodes[i], model, palette, this.layer.scale);
    const chunk = this.chunkOf(i);
    this.renderer.copyTextureToTexture(this.source, chunk.texture, null, new THREE.Vector3(0, 0, i - chunk.first));
  }

  setHidden(i, value) {
    if (this.hidden[i] === value) return;
    this.hidden[i] = value;
    const chunk = this.chunkOf(i);
    if (!chunk) return; // build() reads `hidden`
    const panel = cardPanel(this.nodes[i]);
    const size = chunk.geometry.getAttribute("size");
    size.setXY(i - chunk.first, value ? 0 : panel.width, value ? 0 : panel.height);
    size.needsUpdate = true;
  }

  /** Turn the cards to face `camera` (its right and up vectors). */
  face(camera) {
    this.uniforms.cameraRight.value.set(1, 0, 0).applyQuaternion(camera.quaternion);
    this.uniforms.cameraUp.value.set(0, 1, 0).applyQuaternion(camera.quaternion);
  }

  /** Corners of card i's box (not its panel) in the scene: [[x, y, z], …]. */
  corners(i) {
    const node = this.nodes[i];
    const [r, u] = [this.uniforms.cameraRight.value, this.uniforms.cameraUp.value];
    return [[-1, -1], [1, -1], [-1, 1], [1, 1]].map(([sx, sy]) => {
      const [w, h] = [(sx * node.width) / 2, (sy * node.height) / 2];
      return [0, 1, 2].map((k) => this.centers[i][k] + r.getComponent(k) * w + u.getComponent(k) * h);
    });
  }

  center(i) {
    return this.centers[i];
  }

  isHidden(i) {
    return this.hidden[i];
  }

  count() {
    return this.nodes.length;
  }

  dispose() {
    this.disposeChunks();
    this.source.dispose();
  }
}

export function createCardLayer(renderer) {
  return new CardLayer(renderer);
}
