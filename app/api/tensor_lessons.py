"""A lesson about a tensor program (docs/lessons.md, "Tensor lessons"): its stops name tensors,
their cells and the tensor-level timeline of `POST /api/graph`'s tensor reply. This module
resolves those names against the reply, as lesson_files.py's `_Resolver` does a scalar trace's:

- a tensor is its name (`W`) or its label (`X @ W`), and must name exactly one tensor;
- a cell is a tensor and an index: `W[1,2]` (its data) or `dW[1,2]`, `d(X @ W)[0,2]` (its
  gradient); a tensor of one number is its name alone (`loss`, `dloss`);
- a place is `start`, `end`, `{"phase": "seed"}` or `{"phase": "forward" | "backward", "node":
  TENSOR}` (that tensor's op's step);
- `numbers` maps a cell to a number as the stop's text quotes it (`"dW[1,2]": "-1.75"`; `"dX[0,2]
  via p"`: the part of dX that op `p` passed back); each must be the engine's number rounded to
  the digits quoted, or the lesson does not load.

Highlights and fan-ins are served as the page's keys: a tensor's id (`t3`) and a cell's
`t3|grad|1,2` (tensor/draw.js marks cells by that key)."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

_CELL = re.compile(r"^(?P<tensor>.+?)(?:\[(?P<index>\s*\d+(?:\s*,\s*\d+)*\s*)\])?$")


class TensorLessonError(Exception):
    """A name, place or number the tensor program does not have; the message names the field."""


def _element(nested: Any, index: list[int]) -> Any:
    for i in index:
        nested = nested[i]
    return nested


class TensorResolver:
    """Tensor names, cells and timeline places of one tensor reply (engine/tensor_reply.py)."""

    def __init__(self, reply: dict[str, Any]) -> None:
        self.reply = reply
        self.steps = reply["steps"]
        self.by_id = {node["id"]: node for node in reply["nodes"]}
        self.ids: dict[str, list[str]] = {}
        for node in reply["nodes"]:
            for key in {node["name"], node["label"]} - {""}:
                self.ids.setdefault(key, []).append(node["id"])
        self.kinds = {node["id"]: node["kind"] for node in reply["nodes"]}

    def tensor(self, where: str, name: str) -> str:
        """The id of the tensor `name` names (its name or label)."""
        ids = self.ids.get(name, [])
        # A name assigned twice (`h = …; h = …`) names its last tensor, as the engine's does.
        named = [i for i in ids if self.by_id[i]["name"] == name]
        if len(set(ids)) != 1 and named:
            ids = named[-1:]
        if len(set(ids)) != 1:
            problem = "no tensor is" if not ids else f"{len(ids)} tensors are"
            known = ", ".join(sorted(self.ids))
            raise TensorLessonError(f"{where}: {problem} called {name!r} (tensors: {known})")
        return ids[0]

    def cell(self, where: str, text: str) -> tuple[str, str, list[int]]:
        """`(tensor id, "data" | "grad", index)` of a cell (`W[1,2]`, `dW[1,2]`, `dloss`)."""
        match = _CELL.match(text.strip())
        if not match:
            raise TensorLessonError(
                f"{where}: {text!r} is not a cell (write `W[1,2]` or `dW[1,2]`)"
            )
        name = match["tensor"].strip()
        index = [int(i) for i in match["index"].split(",")] if match["index"] else []
        grid = "data"
        if name not in self.ids and name.startswith("d"):
            grid, name = "grad", name[1:]
            if name.startswith("(") and name.endswith(")"):
                name = name[1:-1]
        tensor_id = self.tensor(where, name)
        node = self.by_id[tensor_id]
        shape = node["shape"]
        if len(index) != len(shape) or not all(
            0 <= i < n for i, n in zip(index, shape, strict=False)
        ):
            raise TensorLessonError(
                f"{where}: {text!r}: index {index} is not in {node['label']}'s shape {shape}"
            )
        if grid == "grad" and node["grad"] is None:
            raise TensorLessonError(f"{where}: {text!r}: {node['label']} has no gradient")
        return tensor_id, grid, index

    def value(self, where: str, text: str) -> float:
        """The number of a cell: its data, or its final gradient; `dX[0,2] via OP` the part of
        that gradient op OP (a tensor) passed in its backward step (a reused tensor's part)."""
        cell, _, op = text.partition(" via ")
        tensor_id, grid, index = self.cell(where, cell)
        if not op:
            return float(_element(self.by_id[tensor_id][grid], index))
        op_id = self.tensor(where, op.strip())
        if grid != "grad":
            raise TensorLessonError(f"{where}: {text!r}: `via` takes a gradient's cell")
        for step in self.steps:
            if step["phase"] == "backward" and step["node"] == op_id:
                for passed in step["grads"]:
                    if passed["input"] == tensor_id:
                        return float(_element(passed["grad"], index))
        raise TensorLessonError(f"{where}: {text!r}: {op.strip()!r} passes no gradient to it")

    def highlight(self, where: str, name: str) -> list[str]:
        """A tensor's id, or a cell's key `t3|grad|1,2`."""
        if "[" in name or (name not in self.ids and name.startswith("d")):
            tensor_id, grid, index = self.cell(where, name)
            return [f"{tensor_id}|{grid}|{','.join(map(str, index))}"]
        return [self.tensor(where, name)]

    def step(self, where: str, at: Any) -> int:
        if at == "start":
            return 0
        if at == "end":
            return len(self.steps) - 1
        if at.phase == "seed":
            if at.node is not None or at.index is not None:
                raise TensorLessonError(f"{where}: the seed takes neither node nor index")
            return next(k for k, s in enumerate(self.steps) if s["phase"] == "seed")
        if at.phase not in ("forward", "backward"):
            raise TensorLessonError(
                f"{where}.phase: a tensor program's timeline has forward, seed and backward "
                f"steps, not {at.phase!r}"
            )
        if at.node is None or at.index is not None:
            raise TensorLessonError(f"{where}: a {at.phase} place takes `node`")
        tensor_id = self.tensor(f"{where}.node", at.node)
        for k, step in enumerate(self.steps):
            if step["phase"] == at.phase and step["node"] == tensor_id:
                return k
        raise TensorLessonError(f"{where}.node: the {at.phase} pass never visits {at.node!r}")

    def check_number(self, where: str, cell: str, quoted: str) -> None:
        """`quoted` is the engine's number of `cell` rounded to the digits quoted."""
        text = quoted.replace("\u2212", "-")
        try:
            written = Decimal(text)
        except ArithmeticError as error:
            raise TensorLessonError(f"{where}: {quoted!r} is not a number") from error
        places = max(0, -written.as_tuple().exponent)  # type: ignore[operator]
        engine = self.value(where, cell)
        if abs(engine - float(written)) > 0.5 * 10.0**-places + 1e-12:
            raise TensorLessonError(
                f"{where}: the text says {cell} = {quoted}, the engine {engine!r}"
            )
