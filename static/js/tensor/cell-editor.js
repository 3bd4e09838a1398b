// A leaf tensor's element, changed: its name (`W[1,2]`), a number box and a slider, in the
// leaves' place of the sidebar while a tensor program is shown. A change sets the request's
// `values` (`{"W[1,2]": 0.5}`, docs/api.md): the page computes every tensor again itself
// (tensor/page-numbers.js) once it holds the program's scalar graph, else asks the server.

import { h, setHidden, setProps, setText } from "../core/dom.js";
import { t } from "../core/i18n.js";
import { tensorIndex } from "./timeline.js";

/** The `values` key of element `index` of leaf `name`: `W[1,2]` (docs/tensors.md). */
export const cellKey = (name, index) => `${name}[${index.join(",")}]`;

const elementOf = (data, index) => index.reduce((v, i) => v?.[i], data);

/** A slider's range around `value`: wide enough to matter, centred where the learner starts. */
function rangeAround(value) {
  const span = Math.max(1, 2 * Math.abs(value));
  return { min: value - span, max: value + span };
}

/** Mount the editor in `container`; `paint(values)` shows new leaf values from the page's numbers
 *  (false: it cannot), else `setValues(values)` sends them. */
export function mountCellEditor(container, scope, { setValues, paint = () => false }) {
  const hint = h("p", { class: "tensor-cell-hint", "data-testid": "tensor-cell-hint" });
  const name = h("span", { class: "tensor-cell-name" });
  const box = h("input", { type: "number", step: "any", class: "tensor-cell-number", "data-testid": "tensor-cell-value" });
  const range = h("input", { type: "range", step: "any", class: "tensor-cell-range", "data-testid": "tensor-cell-range" });
  const row = h("div", { class: "tensor-cell-editor", "data-testid": "tensor-cell-editor" }, name, box, range);
  container.append(hint, row);
  const { state } = scope.store;
  let ranged = null; // the cell key whose range is set: a drag does not move its own ends

  function send(value) {
    const cell = state.tensorCell;
    const node = cell && state.tensor ? tensorIndex(state.tensor).nodeById.get(cell.tensor) : null;
    if (!node || !Number.isFinite(value)) return;
    const values = { ...state.values, [cellKey(node.name, cell.index)]: value };
    if (!paint(values)) setValues(values);
  }
  box.addEventListener("change", () => send(box.valueAsNumber));
  range.addEventListener("input", () => send(range.valueAsNumber));

  scope.store.subscribe((s) => {
    setHidden(container, !s.tensor || Boolean(s.trace));
    if (!s.tensor) return;
    const leaves = s.tensor.leaves.map((leaf) => leaf.name).join(", ");
    setText(hint, leaves ? t("ui.tensor.cell_hint", { leaves }) : t("ui.tensor.no_leaves"));
    const node = s.tensorCell ? tensorIndex(s.tensor).nodeById.get(s.tensorCell.tensor) : null;
    setHidden(row, !node);
    if (!node) return;
    const key = cellKey(node.name, s.tensorCell.index);
    const value = Number(elementOf(node.data, s.tensorCell.index));
    setText(name, key);
    row.dataset.cell = key;
    row.dataset.value = String(value);
    setProps(box, { ariaLabel: t("ui.slider.value", { name: key }) });
    setProps(range, { ariaLabel: t("ui.tensor.cell_slider", { cell: key }) });
    if (ranged !== key) {
      ranged = key;
      const { min, max } = rangeAround(value);
      setProps(range, { min: String(min), max: String(max) });
    }
    if (document.activeElement !== box) setProps(box, { value: String(value) });
    if (document.activeElement !== range) setProps(range, { value: String(value) });
  });
}
