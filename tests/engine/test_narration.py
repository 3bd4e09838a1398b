"""Narration templates (issue 10 contract, section 1): every step's narration is its template
filled with the numbers and the nodes' texts (`narrations`), reads exactly as the narration
written directly did before templates (a reference copy of that code is kept below), and fills
the same from `engine.numbers`."""

from __future__ import annotations

import math
from bisect import bisect_right
from typing import Any

import pytest
from engine_cases import CASES, case_id, random_runs
from hypothesis import given
from program_strategies import fuzz_settings

from chainrule import engine
from chainrule.engine.narration import Narrator, fill, narrations
from chainrule.engine.step_reader import step_objects
from chainrule.engine.topo import topo_order

# ---------------------------------------------------------------------------- the reference
# The narration as engine/timeline.py (now engine/steps.py) wrote it before templates (commit
# 3797877), one sentence built directly from the run's numbers: its sentences kept verbatim (it
# reads the run from the trace record now) to prove the templates read the same.


def ref_fmt(x: float) -> str:
    # Its one change since: the page's minus sign U+2212 (issue 23: `(−3)` in the narration as
    # on the edge label).
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "\u2212inf"
    if x == int(x) and abs(x) < 1e15:
        return str(int(x)).replace("-", "\u2212")
    return f"{x:.6g}".replace("-", "\u2212")


def ref_factor(x: float) -> str:
    text = ref_fmt(x)
    return f"({text})" if text.startswith("\u2212") else text


def reference_narrations(traced: engine.Trace) -> list[str]:
    say = Narrator(traced.source, traced.nodes, traced.graph.helpers)
    nodes = traced.nodes
    out: list[str] = []
    events: list = []
    topo_order(traced.root, events)
    for action, node, index, child in events:
        name = say.text(node)
        if action == "start":
            out.append(f"Start: push ({name}, 0), the root with its input index 0")
        elif action == "emit" and node.inputs:
            out.append(
                f"Pop ({name}, {index}): all {len(node.inputs)} inputs of {name} are done: "
                f"add {name} to the sorted list"
            )
        elif action == "emit":
            out.append(f"Pop ({name}, 0): {name} has no inputs: add {name} to the sorted list")
        elif action == "visit":
            other = say.text(child)
            out.append(
                f"Pop ({name}, {index}): {name}'s input {index} is {other}, not yet visited: "
                f"push ({name}, {index + 1}) and ({other}, 0)"
            )
        else:
            other = say.text(child)
            out.append(
                f"Pop ({name}, {index}): {name}'s input {index} is {other}, already "
                f"visited: skip it and push ({name}, {index + 1})"
            )
    for node in traced.topo_order:
        if node.kind == "leaf":
            out.append(f"{say.text(node)} is a leaf: {say.text(node)} = {ref_fmt(node.data)}")
        elif node.kind == "const":
            out.append(f"{say.text(node)} is a constant: {ref_fmt(node.data)}")
        else:
            operand = ref_fmt if node.op in engine.ops.FUNCTIONS else ref_factor
            numbers = say.formula(node, [operand(c.data) for c in node.inputs])
            out.append(f"{say.title(node)} = {numbers} = {ref_fmt(node.data)}")
    name = say.text(traced.root)
    out.append(f"Seed: grad[{name}] = 1 ({name} changes one-for-one with itself)")
    record = traced.record
    local_grads = [local for node in nodes for local in node.local_grads]
    for visit, node_id in enumerate(record.visits):
        node, upstream = nodes[node_id], record.upstream[visit]
        title = say.title(node)
        parts = []
        for k in range(record.starts[visit], record.starts[visit + 1]):
            contribution = record.contribution[k]
            target = say.text(nodes[record.to[k]])
            sign = "=" if traced.mode == "overwrite" else "+="
            part = (
                f"grad[{target}] {sign} {ref_factor(upstream)} × "
                f"{ref_factor(local_grads[record.edge[k]])} = {ref_fmt(contribution)}"
            )
            replaced = (record.replaced or {}).get(k)
            if replaced is not None:
                lost = ref_fmt(record.contribution[replaced])
                source = nodes[record.visits[bisect_right(record.starts, replaced) - 1]]
                part += (
                    f" (grad[{target}] was {lost} from {say.title(source)}; "
                    f"{title} overwrote it with {ref_fmt(contribution)}: the {lost} is lost)"
                )
            if k in record.late:
                part += (
                    f" (too late: {target} was already visited, so this never reaches its inputs)"
                )
            parts.append(part)
        if parts:
            out.append(f"Visit {title}: " + ", ".join(parts))
        else:
            # A constant is named by its value, which "Visit 3: …" would read as a number of
            # visits: the sentence says what it is first.
            leaf = node.kind == "leaf"
            visit = f"Visit {title}: a leaf," if leaf else f"Visit the constant {title}:"
            grad = f"grad[{say.text(node)}] = {ref_fmt(upstream)}"
            out.append(f"{visit} nothing to pass on ({grad})")
    return out


# ---------------------------------------------------------------------------- the checks


def check_run(source: str, values: dict[str, float] | None, kwargs: dict[str, Any]) -> None:
    """Narration equals the reference; each template filled from `engine.numbers` of the same
    arguments (and the nodes' texts) gives the step's narration; templates do not depend on the
    values."""
    traced = engine.trace(source, values, **kwargs)
    reply = traced.to_dict()
    steps = step_objects(reply)
    said = narrations(reply)
    assert said == reference_narrations(traced)
    numbers = {**engine.numbers(source, values, **kwargs), "text": texts(reply)}
    for step, sentence in zip(steps, said, strict=True):
        assert fill(step["template"], numbers) == sentence, step
    other = {name: 0.5 for name, _ in traced.graph.leaves}
    templates = [
        step["template"] for step in step_objects(engine.trace(source, other, **kwargs).to_dict())
    ]
    assert templates == [step["template"] for step in steps]


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_narration_is_the_template_filled_and_reads_as_before(case: tuple) -> None:
    check_run(*case)


@fuzz_settings
@given(random_runs())
def test_random_runs_narration_is_the_template_filled_and_reads_as_before(run: tuple) -> None:
    check_run(*run)


def texts(reply: dict[str, Any]) -> list[str]:
    return [node["text"] for node in reply["nodes"]]


def test_the_contract_example() -> None:
    reply = engine.trace("a = 2\nb = -3\nc = a*b").to_dict()
    (index,) = [
        i
        for i, s in enumerate(step_objects(reply))
        if s["phase"] == "forward" and s["node"] == "n2"
    ]
    assert step_objects(reply)[index]["template"] == (
        "{t:text:2} = {t:text:0}·{t:text:1} = {f:data:0}·{f:data:1} = {n:data:2}"
    )
    assert narrations(reply)[index] == "c = a·b = 2·(−3) = −6"
    assert "narration" not in step_objects(reply)[index]  # the reader fills it: no name repeated


def test_templates_of_every_phase() -> None:
    reply = engine.trace("a = 3\nb = a * a + 1", mode="overwrite").to_dict()
    steps = step_objects(reply)
    assert texts(reply) == ["a", "a * a", "1", "b"]
    templates = {(s["phase"], s["node"]): s["template"] for s in steps if s["phase"] != "topo"}
    a, aa, one, b = (f"{{t:text:{i}}}" for i in range(4))
    assert templates == {
        ("forward", "n0"): f"{a} is a leaf: {a} = {{n:data:0}}",
        ("forward", "n1"): f"{a}·{a} = {{f:data:0}}·{{f:data:0}} = {{n:data:1}}",
        ("forward", "n2"): f"{one} is a constant: {{n:data:2}}",
        ("forward", "n3"): f"{b} = {aa} + {one} = {{f:data:1}} + {{f:data:2}} = {{n:data:3}}",
        ("seed", "n3"): f"Seed: grad[{b}] = 1 ({b} changes one-for-one with itself)",
        ("backward", "n3"): f"Visit {b} = {aa} + {one}: "
        f"grad[{aa}] = {{f:step_grad:0}} × {{f:local_grad:2}} = {{n:contribution:0}}, "
        f"grad[{one}] = {{f:step_grad:0}} × {{f:local_grad:3}} = {{n:contribution:1}}",
        ("backward", "n2"): f"Visit the constant {one}: nothing to pass on "
        f"(grad[{one}] = {{n:step_grad:1}})",
        ("backward", "n1"): f"Visit {a}·{a}: grad[{a}] = {{f:step_grad:2}} × {{f:local_grad:0}} = "
        f"{{n:contribution:2}}, grad[{a}] = {{f:step_grad:2}} × {{f:local_grad:1}} = "
        f"{{n:contribution:3}} (grad[{a}] was {{n:contribution:2}} from {a}·{a}; {a}·{a} "
        f"overwrote it with {{n:contribution:3}}: the {{n:contribution:2}} is lost)",
        ("backward", "n0"): f"Visit {a}: a leaf, nothing to pass on "
        f"(grad[{a}] = {{n:step_grad:3}})",
    }
    said = [n for s, n in zip(steps, narrations(reply), strict=True) if s["phase"] == "topo"]
    assert said[:2] == [
        "Start: push (b, 0), the root with its input index 0",
        "Pop (b, 0): b's input 0 is a * a, not yet visited: push (b, 1) and (a * a, 0)",
    ]
    assert [s["template"] for s in steps if s["phase"] == "topo"][1] == (
        f"Pop ({b}, 0): {b}'s input 0 is {aa}, not yet visited: push ({b}, 1) and ({aa}, 0)"
    )


def test_a_function_s_operand_is_not_bracketed() -> None:
    (step,) = [
        s
        for s in step_objects(engine.trace("tanh(-2)").to_dict())
        if s["node"] == "n1" and s["phase"] == "forward"
    ]
    assert step["template"] == "tanh({t:text:0}) = tanh({n:data:0}) = {n:data:1}"
    assert fill(step["template"], {"text": ["-2"], "data": [-2.0, math.tanh(-2)]}) == (
        "tanh(-2) = tanh(−2) = −0.964028"  # the node's text is code, its data a number
    )


@pytest.mark.parametrize(
    ("x", "n", "f"),
    [
        (2.0, "2", "2"),
        (-3.0, "−3", "(−3)"),
        (-0.0, "0", "0"),
        (0.1 + 0.2, "0.3", "0.3"),
        (1e-5, "1e−05", "1e−05"),
        (0.0001, "0.0001", "0.0001"),
        (-1.5e-7, "−1.5e−07", "(−1.5e−07)"),
        (123456.5, "123456", "123456"),  # %.6g rounds half to even
        (1234567.5, "1.23457e+06", "1.23457e+06"),
        (12345678912.0, "12345678912", "12345678912"),
        (1e15, "1e+15", "1e+15"),
        (99999999999999.5, "1e+14", "1e+14"),
        (5e-324, "4.94066e−324", "4.94066e−324"),
        (1e308, "1e+308", "1e+308"),
        (2.5, "2.5", "2.5"),
        (0.707106781, "0.707107", "0.707107"),
        (math.inf, "inf", "inf"),
        (-math.inf, "−inf", "(−inf)"),
        (math.nan, "nan", "nan"),
        ("Infinity", "inf", "inf"),
        ("-Infinity", "−inf", "(−inf)"),
        ("NaN", "nan", "nan"),
    ],
)
def test_fill_writes_numbers_as_narration_does(x: float | str, n: str, f: str) -> None:
    assert fill("{n:data:1} and {f:data:1}", {"data": [0.0, x]}) == f"{n} and {f}"


def test_fill_reads_every_array_and_literal_braces() -> None:
    numbers = {
        name: [0.0, float(i + 1)]
        for i, name in enumerate(
            ["data", "grad", "local_grad", "step_grad", "upstream", "local", "contribution",
             "grad_before", "grad_after"]
        )
    }  # fmt: skip
    template = (
        "{{x}} {n:data:1} {n:grad:1} {n:local_grad:1} {n:step_grad:1} {n:upstream:1} "
        "{n:local:1} {n:contribution:1} {n:grad_before:1} {n:grad_after:1} }}{{"
    )
    assert fill(template, numbers) == "{x} 1 2 3 4 5 6 7 8 9 }{"
