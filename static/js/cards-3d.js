// The 3D view's cards: every card is one instance of a camera-facing quad, its picture one layer
// of a texture array (a few arrays for large graphs), so the whole graph's cards are drawn in a
// draw call or a few, and a step uploads only the cards it repainted. The pictures are painted by
// card-paint.js at `scale` texture pixels per graph unit (graph-3d.js picks it from the zoom).

import * as THREE from "../vendor/three/three.module.js";
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

/**
 * The card layer. `place(nodes, depths)` lays a graph's cards out (once per layout);
 * `setScale(scale)` sizes the pictures (then every card must be painted again); `paint(i, model,
 * palette)` paints card i (index in `nodes`); `setHidden(i, hidden)`; `face(camera)` turns the
 * cards to it (before each frame); `pick` and `rect` find cards on screen.
 */
export function createCardLayer(renderer) {
  const group = new THREE.Group();
  const gl = renderer.getContext();
  const layersPerArray = Math.min(MAX_LAYERS, gl.getParameter(gl.MAX_ARRAY_TEXTURE_LAYERS));
  const maxSide = Math.min(4096, gl.getParameter(gl.MAX_TEXTURE_SIZE));
  const uniforms = { cameraRight: { value: new THREE.Vector3(1, 0, 0) }, cameraUp: { value: new THREE.Vector3(0, 1, 0) } };
  const scratch = document.createElement("canvas");
  const source = new THREE.Texture(scratch); // never drawn: only copied into the arrays from the CPU
  let nodes = [];
  let chunks = []; // {mesh, texture, geometry, first, count}
  let centers = [];
  let hidden = [];
  let layer = { width: 1, height: 1, scale: 1 };
  let maxPanel = { width: 1, height: 1 };

  function disposeChunks() {
    for (const chunk of chunks) {
      group.remove(chunk.mesh);
      chunk.geometry.dispose();
      chunk.mesh.material.dispose();
      chunk.texture.dispose();
    }
    chunks = [];
  }

  function arrayTexture(count) {
    const texture = new THREE.DataArrayTexture(null, layer.width, layer.height, count);
    texture.source.dataReady = false; // storage only: the cards are copied in one by one
    texture.generateMipmaps = false;
    texture.minFilter = THREE.LinearFilter;
    texture.magFilter = THREE.LinearFilter;
    texture.needsUpdate = true;
    return texture;
  }

  /** Chunks of at most `layersPerArray` cards, each one mesh over one texture array. */
  function build() {
    disposeChunks();
    const quad = new THREE.PlaneGeometry(1, 1);
    for (let first = 0; first < nodes.length; first += layersPerArray) {
      const count = Math.min(layersPerArray, nodes.length - first);
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
      const texture = arrayTexture(count);
      const material = new THREE.ShaderMaterial({
        uniforms: { ...uniforms, pictures: { value: texture } },
        vertexShader: VERTEX_SHADER, fragmentShader: FRAGMENT_SHADER, transparent: true,
      });
      const mesh = new THREE.Mesh(geometry, material);
      mesh.frustumCulled = false;
      mesh.renderOrder = 1; // over the edges, which are drawn first
      group.add(mesh);
      chunks.push({ mesh, texture, geometry, first, count });
    }
    quad.dispose();
  }

  function chunkOf(i) {
    return chunks[Math.floor(i / layersPerArray)];
  }

  return {
    group,
    /** Lay out `graphNodes` (trace.nodes) at their places (`depths`: node id → z); setScale next. */
    place(graphNodes, depths) {
      nodes = graphNodes;
      centers = nodes.map((n) => [n.x, -n.y, depths.get(n.id) ?? 0]);
      hidden = nodes.map(() => false);
      maxPanel = { width: 1, height: 1 };
      for (const n of nodes) {
        const panel = cardPanel(n);
        maxPanel = { width: Math.max(maxPanel.width, panel.width), height: Math.max(maxPanel.height, panel.height) };
      }
      disposeChunks(); // setScale makes the new ones
    },
    /** Pictures at `scale` texture pixels per graph unit (at most the GPU's largest texture). */
    setScale(scale) {
      const fitted = Math.min(scale, maxSide / maxPanel.width, maxSide / maxPanel.height);
      layer = { scale: fitted, width: Math.ceil(maxPanel.width * fitted) + 1, height: Math.ceil(maxPanel.height * fitted) + 1 };
      build();
    },
    /** Texels the pictures of `graphNodes` take at `scale` (graph-3d.js keeps this in budget). */
    texels: (graphNodes, scale) => {
      let width = 1;
      let height = 1;
      for (const n of graphNodes) {
        const panel = cardPanel(n);
        width = Math.max(width, panel.width);
        height = Math.max(height, panel.height);
      }
      return graphNodes.length * width * height * scale * scale;
    },
    paint(i, model, palette) {
      paintCard(scratch, nodes[i], model, palette, layer.scale);
      const chunk = chunkOf(i);
      renderer.copyTextureToTexture(source, chunk.texture, null, new THREE.Vector3(0, 0, i - chunk.first));
    },
    setHidden(i, value) {
      if (hidden[i] === value) return;
      hidden[i] = value;
      const chunk = chunkOf(i);
      if (!chunk) return; // build() reads `hidden`
      const panel = cardPanel(nodes[i]);
      const size = chunk.geometry.getAttribute("size");
      size.setXY(i - chunk.first, value ? 0 : panel.width, value ? 0 : panel.height);
      size.needsUpdate = true;
    },
    /** Turn the cards to face `camera` (its right and up vectors). */
    face(camera) {
      uniforms.cameraRight.value.set(1, 0, 0).applyQuaternion(camera.quaternion);
      uniforms.cameraUp.value.set(0, 1, 0).applyQuaternion(camera.quaternion);
    },
    /** Corners of card i's box (not its panel) in the scene: [[x, y, z], …]. */
    corners(i) {
      const node = nodes[i];
      const [r, u] = [uniforms.cameraRight.value, uniforms.cameraUp.value];
      return [[-1, -1], [1, -1], [-1, 1], [1, 1]].map(([sx, sy]) => {
        const [w, h] = [(sx * node.width) / 2, (sy * node.height) / 2];
        return [0, 1, 2].map((k) => centers[i][k] + r.getComponent(k) * w + u.getComponent(k) * h);
      });
    },
    center: (i) => centers[i],
    isHidden: (i) => hidden[i],
    count: () => nodes.length,
    dispose() {
      disposeChunks();
      source.dispose();
    },
  };
}
