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
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator
from typing import Any, NamedTuple

from chainrule import engine
from chainrule.app.live_class.protocol import Ask
from chainrule.engine.reply import number

NON_FINITE = {"Infinity": math.inf, "-Infinity": -math.inf, "NaN": math.nan}
MAX_BARS = 12
MAX_NAMES_PER_BAR = 40


class BadQuestion(ValueError):
    """The question names a node or edge the class's program does not have."""


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
    the engine's ProgramError for a bad program, BadQuestion for an unknown node or edge)."""
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
    wrong: list[dict[str, Any]] = []
    for diagnosis, value in candidates:
        if is_close(value, truth) or any(is_close(value, as_float(w["value"])) for w in wrong):
            continue
        wrong.append({"diagnosis": diagnosis, "value": number(value)})
    return {"truth": number(truth), "wrong": wrong}


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
