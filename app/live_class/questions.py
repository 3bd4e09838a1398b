"""A question's right value and its common wrong answers, computed by the engine; the board.

The teacher asks for a value the pulse has not shown yet: a node's final gradient, a node's
data (a lesson's question) or one edge's contribution `upstream × local`. Each wrong answer is
named only when a real mistake gives it for this program and these values:
- `overwrite`: the `=`-instead-of-`+=` bug, the engine's own `mode="overwrite"` pass;
- `one_path`: one contribution alone, when several add up; `missed_path`: all but one of them
  (a path left out);
- `upstream` / `local`: one factor of the chain rule alone; `added`: the two added, not
  multiplied;
- `sum_so_far`: a contribution answered with the running sum it lands in;
- `data`: the node's value given for its gradient; `sign`: the right value with the wrong sign.
A candidate equal to the right value or to an earlier candidate is dropped (it would name a
right answer, or one answer twice).

On a tensor program the question is one cell of a tensor (`dW[1,2]`): its gradient, whose
terms are the cell's fan-in (engine/tensor_reply.py `fan_in`: `one_path` / `missed_path` when
there are several), or its data. There `overwrite` is the tensor `=` bug of the tensor labs:
a tensor read by several ops keeps only the part the op passing it last gave
(labs/tensor-labs.js), named only when several ops read it.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator
from typing import Any, NamedTuple

from chainrule import engine
from chainrule.app.live_class.protocol import Ask
from chainrule.engine.reply import number
from chainrule.engine.tensor_program import TensorTrace, trace_tensors
from chainrule.engine.tensor_reader import is_tensor_program
from chainrule.engine.tensor_reply import fan_in
from chainrule.engine.tensors import Tensor, shown

NON_FINITE = {"Infinity": math.inf, "-Infinity": -math.inf, "NaN": math.nan}
MAX_BARS = 12
MAX_NAMES_PER_BAR = 40


class BadQuestion(ValueError):
    """The question names a node, edge or cell the class's program does not have: `key` the
    message that says so (`api.class.*`), `params` its parameters."""

    def __init__(self, what: object, key: str = "api.class.bad_question", **params: Any) -> None:
        super().__init__(what)
        self.key = key
        self.params = {"what": str(what), **params}


def as_float(value: float | str) -> float:
    return NON_FINITE[value] if isinstance(value, str) else float(value)


def is_close(guess: float, truth: float) -> bool:
    """The page's rule (lab-predict.js isClose): |guess − truth| ≤ 1e-3·max(1, |truth|); a
    non-finite truth must be named exactly (∞ as ∞, NaN as NaN)."""
    if not math.isfinite(truth):
        return (math.isnan(truth) and math.isnan(guess)) or guess == truth
    return math.isfinite(guess) and abs(guess - truth) <= 1e-3 * max(1.0, abs(truth))


def _index(ident: str | None, prefix: str, count: int) -> int:
    if ident is None or not ident.startswith(prefix) or not ident[1:].isdigit():
        raise BadQuestion(ident)
    index = int(ident[1:])
    if index >= count:
        raise BadQuestion(ident)
    return index


class _Contribution(NamedTuple):
    """One `grad[to] += local × upstream` of a recorded backward pass (engine/backward.py)."""

    edge: int
    to: int
    upstream: float
    local: float
    contribution: float
    grad_after: float


def _contributions(trace: engine.Trace) -> Iterator[_Contribution]:
    """Every contribution of `trace`'s backward pass, in visit order, read from its record."""
    record = trace.record
    locals_ = [local for node in trace.nodes for local in node.local_grads]
    for visit, upstream in enumerate(record.upstream):
        for k in range(record.starts[visit], record.starts[visit + 1]):
            edge = record.edge[k]
            yield _Contribution(
                edge, record.to[k], upstream, locals_[edge], record.contribution[k],
                record.grad_after[k],
            )  # fmt: skip


def _grad_candidates(correct: engine.Trace, overwrite: engine.Trace, i: int) -> list:
    into = [c for c in _contributions(correct) if c.to == i]
    truth = correct.correct_grads[i]
    candidates: list[tuple[str, float]] = [("overwrite", overwrite.grads[i])]
    if len(into) > 1:
        candidates += [("one_path", c.contribution) for c in into]
        candidates += [("missed_path", truth - c.contribution) for c in into]
    elif len(into) == 1:
        c = into[0]
        candidates += [
            ("upstream", c.upstream),
            ("local", c.local),
            ("added", c.upstream + c.local),
        ]
    candidates += [("data", correct.nodes[i].data), ("sign", -truth)]
    return [truth, candidates]


def _contribution_candidates(correct: engine.Trace, j: int) -> list:
    for c in _contributions(correct):
        if c.edge == j:
            candidates = [("upstream", c.upstream), ("local", c.local)]
            candidates += [("added", c.upstream + c.local), ("sum_so_far", c.grad_after)]
            return [c.contribution, [*candidates, ("sign", -c.contribution)]]
    raise BadQuestion(f"e{j}")


def answer_key(
    ask: Ask, source: str, values: dict[str, float], expand_derived: bool, limits: engine.Limits
) -> dict[str, Any]:
    """`{"truth", "wrong": [{"diagnosis", "value"}]}` for `ask` on the class's program (raises
    the engine's ProgramError for a bad program, BadQuestion for an unknown node, edge or
    cell)."""
    if is_tensor_program(source):
        if ask.tensor is None or ask.index is None or ask.kind == "contribution":
            raise BadQuestion(ask.node or ask.edge or ask.kind, "api.class.ask_a_cell")
        truth, candidates = _cell_candidates(ask, trace_tensors(source, values, limits=limits))
        return _key(truth, candidates)
    if ask.tensor is not None or ask.index is not None:
        raise BadQuestion(ask.tensor, "api.class.ask_a_node")
    correct = engine.trace(source, values, expand_derived=expand_derived, limits=limits)
    if ask.kind == "contribution":
        edges = sum(len(node.inputs) for node in correct.nodes)
        truth, candidates = _contribution_candidates(correct, _index(ask.edge, "e", edges))
    else:
        i = _index(ask.node, "n", len(correct.nodes))
        if ask.kind == "data":
            truth = correct.nodes[i].data
            candidates = [("sign", -truth)]
        else:
            overwrite = engine.trace(
                source, values, expand_derived=expand_derived, mode="overwrite", limits=limits
            )
            truth, candidates = _grad_candidates(correct, overwrite, i)
    return _key(truth, candidates)


def _key(truth: float, candidates: list[tuple[str, float]]) -> dict[str, Any]:
    """The answer key: `truth`, and each candidate not close to it nor to an earlier one."""
    wrong: list[dict[str, Any]] = []
    for diagnosis, value in candidates:
        if is_close(value, truth) or any(is_close(value, as_float(w["value"])) for w in wrong):
            continue
        wrong.append({"diagnosis": diagnosis, "value": number(value)})
    return {"truth": number(truth), "wrong": wrong}


def _asked_tensor(trace: TensorTrace, name: str) -> Tensor:
    """The float tensor `name` names (an id, `t3`, else the last tensor the program assigns to
    that name), a leaf or an op's result: a gradient reaches it."""
    tensors = trace.tensors
    if name.startswith("t") and name[1:].isdigit():
        found = tensors[int(name[1:])] if int(name[1:]) < len(tensors) else None
    else:
        found = next((t for t in reversed(tensors) if t.name == name), None)
    if found is None or found.elements is None or found.kind not in ("leaf", "op"):
        raise BadQuestion(name, "api.class.no_tensor")
    return found


def _cell_candidates(ask: Ask, trace: TensorTrace) -> tuple[float, list[tuple[str, float]]]:
    tensor = _asked_tensor(trace, ask.tensor or "")
    index = ask.index or []
    if len(index) != len(tensor.shape) or any(
        i >= size for i, size in zip(index, tensor.shape, strict=False)
    ):
        cell = f"{ask.tensor}[{','.join(map(str, index))}]"
        raise BadQuestion(cell, "api.class.no_cell", tensor=ask.tensor, shape=shown(tensor.shape))
    flat = 0
    for i, size in zip(index, tensor.shape, strict=True):
        flat = flat * size + i
    element = (tensor.elements or [])[flat]
    if ask.kind == "data":
        return element.data, [("sign", -element.data)]
    terms = fan_in(trace, tensor, index)  # in the order the pass adds them
    truth = element.grad
    candidates: list[tuple[str, float]] = []
    parts: dict[str, float] = {}  # by op reading the tensor, in the order they passed it back
    for term in terms:
        parts[term["tensor"]] = parts.get(term["tensor"], 0.0) + term["contribution"]
    if len(parts) > 1:
        candidates.append(("overwrite", parts[next(reversed(parts))]))
    if len(terms) > 1:
        candidates += [("one_path", term["contribution"]) for term in terms]
        candidates += [("missed_path", truth - term["contribution"]) for term in terms]
    return truth, [*candidates, ("data", element.data), ("sign", -truth)]


def _bin_value(value: float) -> float:
    """An answer that matches nothing, grouped with its neighbours: 3 significant digits."""
    if not math.isfinite(value) or value == 0:
        return value
    return float(f"{value:.3g}")


def _sort_key(bar: dict[str, Any]) -> tuple:
    value = bar["value"]
    if isinstance(value, str) or bar.get("other"):
        return (1, str(value))
    return (0, value)


def board(
    key: dict[str, Any], question: str, answers: list[tuple[float | str, str]], names: bool
) -> dict[str, Any]:
    """The answers of the class as a histogram: one bar per distinct answer (the right one
    marked, a known mistake named), in order of value, at most MAX_BARS (the rest as one
    "other" bar); the wrong answers by how many gave them. `answers`: (value, nickname)."""
    truth = as_float(key["truth"])
    wrong = [(w["diagnosis"], as_float(w["value"]), w["value"]) for w in key["wrong"]]
    bars: dict[Any, dict[str, Any]] = {}
    for raw, name in answers:
        value = as_float(raw)
        if is_close(value, truth):
            slot, shown, right, diagnosis = "right", key["truth"], True, None
        else:
            match = next((w for w in wrong if is_close(value, w[1])), None)
            if match is not None:
                slot, shown, right, diagnosis = match[0], match[2], False, match[0]
            else:
                binned = _bin_value(value)
                slot, shown, right, diagnosis = ("v", number(binned)), number(binned), False, None
        bar = bars.setdefault(
            slot, {"value": shown, "count": 0, "right": right, "diagnosis": diagnosis, "names": []}
        )
        bar["count"] += 1
        if names and name and len(bar["names"]) < MAX_NAMES_PER_BAR:
            bar["names"].append(name)
    kept = sorted(
        bars.values(), key=lambda b: (not b["right"], b["diagnosis"] is None, -b["count"])
    )
    shown_bars, rest = kept[:MAX_BARS], kept[MAX_BARS:]
    if rest:
        other = {"value": None, "count": sum(b["count"] for b in rest), "right": False}
        shown_bars.append({**other, "diagnosis": None, "names": [], "other": True})
    shown_bars.sort(key=_sort_key)
    for bar in shown_bars:
        bar["names"].sort(key=str.casefold)
    counts = Counter({b["diagnosis"]: b["count"] for b in shown_bars if b["diagnosis"]})
    return {
        "question": question,
        "truth": key["truth"],
        "total": len(answers),
        "right": bars.get("right", {}).get("count", 0),
        "bars": shown_bars,
        "mistakes": [
            {"diagnosis": d, "value": next(w[2] for w in wrong if w[0] == d), "count": n}
            for d, n in counts.most_common()
        ],
        "names": names,
    }
