// The join link as a QR code, made in the page by the vendored qrcode-generator (no network):
// one SVG path of dark modules on a light square with the standard 4-module quiet zone, drawn
// dark on light in either theme (scanners want dark on light).

import qrcode from "../../vendor/qrcode-generator/qrcode.mjs";
import { svgElement } from "../core/svg.js";

const QUIET = 4;

/** An <svg> of the QR code of `text` (error correction M), `label` its accessible name. */
export function qrSvg(text, label) {
  const code = qrcode(0, "M");
  code.addData(text);
  code.make();
  const n = code.getModuleCount();
  const size = String(n + 2 * QUIET);
  let d = "";
  for (let row = 0; row < n; row += 1) {
    for (let col = 0; col < n; col += 1) {
      if (code.isDark(row, col)) d += `M${col + QUIET} ${row + QUIET}h1v1h-1z`;
    }
  }
  const svg = svgElement("svg", { viewBox: `0 0 ${size} ${size}`, role: "img", "aria-label": label, "shape-rendering": "crispEdges", "data-modules": String(n) }, "class-qr-code");
  svg.append(svgElement("rect", { width: size, height: size }, "qr-light"), svgElement("path", { d }, "qr-dark"));
  return svg;
}
