"""Gradient descent on a program's leaves: the Train lab's arithmetic.

One step is `p ← p − lr · ∂root/∂p` for every parameter p, with the gradients at the current
values (plain gradient descent; with `momentum` μ > 0, `v ← μ·v + ∂root/∂p; p ← p − lr·v`).
The program is parsed once and its graph rebuilt per step (a forward and a backward pass).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from .builder import Graph, Limits, build, check_values
from .cancel import check as check_cancelled
from .errors import BadTraining, quoted
from .functions import CALL_COST_BUILT
from .gc_pause import cycle_collector_paused
from .i18n import DEFAULT_LANG, Count, msg, render
from .narration import fmt
from .reply import number
from .tracing import check_source_size, parsed

MAX_STEPS = 200  # per call: a page's Play asks for batches of steps, never for thousands at once


@dataclass
class Descent:
    """`roots[k]`: the root's value after k steps (roots[0] at the starting values);
    `values[k]`: the parameters after k + 1 steps, in `parameters` order; `velocity`: the
    momentum to pass to the next call; `stopped`: why descent stopped early, or None."""

    parameters: list[str]
    roots: list[float] = field(default_factory=list)
    values: list[list[float]] = field(default_factory=list)
    velocity: dict[str, float] = field(default_factory=dict)
    stopped: dict[str, Any] | None = None

    def to_dict(self, lang: str = DEFAULT_LANG) -> dict[str, Any]:
        """JSON-ready (non-finite numbers as "NaN", "Infinity", "-Infinity"), the message of
        `stopped` in `lang`."""
        stopped = self.stopped
        if stopped is not None:
            stopped = {**stopped, "message": render(stopped["message"], lang)}
        return {
            "parameters": self.parameters,
            "roots": [number(root) for root in self.roots],
            "values": [[number(value) for value in row] for row in self.values],
            "velocity": {name: number(value) for name, value in self.velocity.items()},
            "stopped": stopped,
        }


def check_settings(lr: Any, steps: Any, momentum: Any) -> tuple[float, int, float]:
    """The learning rate, step count and momentum as numbers; raises BadTraining."""
    if isinstance(lr, bool) or not isinstance(lr, int | float) or not math.isfinite(lr) or lr <= 0:
        raise BadTraining(msg("error.training.lr", value=repr(lr)))
    if isinstance(steps, bool) or not isinstance(steps, int) or not 1 <= steps <= MAX_STEPS:
        raise BadTraining(msg("error.training.steps", most=MAX_STEPS, value=repr(steps)))
    if isinstance(momentum, bool) or not isinstance(momentum, int | float) or not 0 <= momentum < 1:
        raise BadTraining(msg("error.training.momentum", value=repr(momentum)))
    return float(lr), steps, float(momentum)


def descend(
    source: str,
    values: dict[str, Any] | None = None,
    *,
    parameters: list[str],
    lr: float,
    steps: int,
    momentum: float = 0.0,
    velocity: dict[str, Any] | None = None,
    baseline: float | None = None,
    first_step: int = 0,
    limits: Limits | None = None,
    max_node_steps: int | None = None,
) -> Descent:
    """Run `steps` steps of gradient descent on the leaves named in `parameters`.

    Stops early, saying why in `stopped` (`{"step", "reason", "message"}`), when the root or a
    parameter stops being a finite number, when a step of plain descent raises the root, or when
    the root climbs above `baseline` (where training started; by default this call's first
    root): the rate is too large, descent is overshooting. A caller running training in batches
    passes each batch the last batch's values and `velocity`, the first batch's first root as
    `baseline` and the steps taken so far as `first_step` (messages and `stopped["step"]` count
    from it). Raises what `trace` raises for the program and BadTraining for the settings, or
    when `steps` times the graph's work (its nodes, a call of the program's function counting
    as its body's nodes times CALL_COST_BUILT: `Graph.work`) exceeds `max_node_steps` (the
    server's bound on one request's work).
    """
    limits = limits or Limits()
    lr, steps, momentum = check_settings(lr, steps, momentum)
    _check_batch(first_step, baseline)
    check_source_size(source, limits)
    statements, notes = parsed(source, limits.max_depth)

    def built(values: dict[str, float]) -> Graph:
        return build(source, statements, values, max_nodes=limits.max_nodes, notes=notes)

    with cycle_collector_paused():
        graph = built(check_values(values))
        check_parameters(parameters, dict(graph.leaves))
        _check_work(graph.work(CALL_COST_BUILT), steps, max_node_steps)
        speed = _velocity(parameters, velocity)
        descent = Descent(list(parameters))
        start = graph.root.data if baseline is None else baseline
        current = {name: node.data for name, node in graph.leaves}
        for step in range(steps + 1):
            check_cancelled()
            root = graph.root.data
            descent.roots.append(root)
            previous = descent.roots[-2] if step > 0 and momentum == 0 else None
            descent.stopped = _stop(step, first_step + step, root, previous, start, lr)
            if descent.stopped or step == steps:
                break
            graph.root.backward()
            broken = _move(parameters, dict(graph.leaves), current, speed, lr, momentum)
            if broken is not None:
                descent.stopped = _stopped(first_step + step + 1, "nonfinite", broken, lr)
                break
            descent.values.append([current[name] for name in parameters])
            graph = built(current)
        descent.velocity = speed
    return descent


def _check_batch(first_step: Any, baseline: Any) -> None:
    """A batch's place in a longer training run: its first step's number and the root where
    training started."""
    if isinstance(first_step, bool) or not isinstance(first_step, int) or first_step < 0:
        raise BadTraining(msg("error.training.first_step", value=repr(first_step)))
    if baseline is not None and (
        isinstance(baseline, bool) or not isinstance(baseline, int | float)
    ):
        raise BadTraining(msg("error.training.baseline", value=repr(baseline)))


def _check_work(size: int, steps: int, max_node_steps: int | None) -> None:
    """Refuse `steps` steps of a graph whose one pass costs `size` (`Graph.work`) when they
    cost more than `max_node_steps`, saying how many fit (or that none does)."""
    if max_node_steps is None or size * steps <= max_node_steps:
        return
    limit = Count(max_node_steps)
    if size > max_node_steps:
        raise BadTraining(msg("error.training.too_big", nodes=Count(size), limit=limit))
    most = max_node_steps // size
    raise BadTraining(
        msg("error.training.too_much_work", steps=steps, nodes=Count(size), limit=limit, most=most)
    )


def _velocity(parameters: list[str], velocity: dict[str, Any] | None) -> dict[str, float]:
    """The momentum carried over from the last batch, 0 for a parameter it does not name."""
    speed = {name: float(velocity.get(name, 0.0)) if velocity else 0.0 for name in parameters}
    for name, value in speed.items():
        if not math.isfinite(value):
            raise BadTraining(msg("error.training.velocity", name=quoted(name)))
    return speed


def _move(
    parameters: list[str],
    leaves: dict[str, Any],
    current: dict[str, float],
    speed: dict[str, float],
    lr: float,
    momentum: float,
) -> str | None:
    """One step on every parameter (`v ← μ·v + ∂root/∂p; p ← p − lr·v`, in `speed` and
    `current`); what went wrong if a parameter stopped being a finite number, else None."""
    for name in parameters:
        speed[name] = momentum * speed[name] + leaves[name].grad
        current[name] = current[name] - lr * speed[name]
    bad = next((name for name in parameters if not math.isfinite(current[name])), None)
    return None if bad is None else msg("descent.not_finite", name=quoted(bad))


def check_parameters(parameters: list[str], leaves: dict[str, Any]) -> None:
    """Raises BadTraining unless `parameters` are distinct names of `leaves` (at least one)."""
    if not parameters:
        raise BadTraining(msg("error.training.no_parameters"))
    seen: set[str] = set()
    for name in parameters:
        if name in seen:
            raise BadTraining(msg("error.training.repeated", name=quoted(name)))
        seen.add(name)
        if name not in leaves and not leaves:
            raise BadTraining(msg("error.training.no_leaves", name=quoted(name)))
        if name not in leaves:
            known = ", ".join(quoted(leaf) for leaf in leaves)
            raise BadTraining(msg("error.training.not_a_leaf", name=quoted(name), leaves=known))


def _rose(root: float, before: float) -> bool:
    """Higher than `before` by more than rounding."""
    return root > before and not math.isclose(root, before, rel_tol=1e-9, abs_tol=1e-300)


def _stop(
    step: int, number: int, root: float, previous: float | None, start: float, lr: float
) -> dict[str, Any] | None:
    """Why descent stops at this call's `step` (numbered `number` in the whole run), or None.
    `previous`: the root one step before, when every step must lower it (plain gradient
    descent: with a small enough rate it never rises); with momentum it may, for a while."""
    if number == 0 and not math.isfinite(root):
        return {
            "step": 0,
            "reason": "nonfinite",
            "message": msg("descent.cannot_start", root=fmt(root)),
        }
    if not math.isfinite(root):
        return _stopped(number, "nonfinite", msg("descent.became", root=fmt(root)), lr)
    if previous is not None and _rose(root, previous):
        what = msg("descent.rose", before=fmt(previous), root=fmt(root))
        return _stopped(number, "diverged", what, lr)
    if step > 0 and _rose(root, start):
        what = msg("descent.climbed", root=fmt(root), start=fmt(start))
        return _stopped(number, "diverged", what, lr)
    return None


def _stopped(step: int, reason: str, what: str, lr: float) -> dict[str, Any]:
    """The `stopped` of a run that stopped at `step`; its message (a Message) says `what`
    happened and suggests a rate ten times smaller."""
    return {
        "step": step,
        "reason": reason,
        "message": msg("descent.stopped", step=step, what=what, lr=fmt(lr), smaller=fmt(lr / 10)),
    }
