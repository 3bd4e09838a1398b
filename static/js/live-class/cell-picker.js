// On a tensor program, the teacher chooses the cell to ask the class by clicking it on its card
// (a gradient the pulse has not brought yet, an op's value not computed yet): the click chooses
// it in the Ask menu, and the cell chosen there is ringed on its card (data-class-ask,
// live-class.css). The tensor view's own clicks (a shown gradient's sum, a leaf's editor) are
// on cells that are never askable.

import { cellOfEvent } from "../tensor/draw.js";

/** The key of a tensor cell's ask (teacher.js askKey): `grad:t1:1,2`. */
const keyOf = (cell) => `${cell.dataset.grid}:${cell.dataset.tensorId}:${cell.dataset.index}`;
const cellOf = (ask) => `[data-testid=tensor-cell][data-tensor-id="${ask.tensor}"][data-grid="${ask.kind}"][data-index="${ask.index.join(",")}"]`;

/**
 * Clicks on `workspace`'s tensor cells choose theirs in `select` when `askable(key)`;
 * `mark(ask)` rings the cell of `ask` (null, or a scalar ask: none); `stop()` lets go.
 */
export function cellPicker(workspace, select, askable) {
  const pick = (event) => {
    const cell = cellOfEvent(event);
    if (!cell || !askable(keyOf(cell))) return;
    select.value = keyOf(cell);
    select.dispatchEvent(new Event("change"));
  };
  const pickByKey = (event) => {
    if (event.key === "Enter") pick(event); // a cell the keyboard reached (tensor/view.js)
  };
  workspace.addEventListener("click", pick);
  workspace.addEventListener("keydown", pickByKey);
  let frame = 0;
  const ring = (ask) => {
    for (const cell of workspace.querySelectorAll("[data-class-ask]")) cell.removeAttribute("data-class-ask");
    if (ask?.tensor != null) workspace.querySelector(cellOf(ask))?.setAttribute("data-class-ask", "");
  };
  return {
    mark(ask) { // once the view has drawn the frame it is about
      cancelAnimationFrame(frame);
      frame = requestAnimationFrame(() => ring(ask));
    },
    stop() {
      workspace.removeEventListener("click", pick);
      workspace.removeEventListener("keydown", pickByKey);
      cancelAnimationFrame(frame);
      ring(null);
    },
  };
}
