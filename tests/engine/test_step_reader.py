"""The timeline sent as columns (docs/api.md, "Steps") and its two readers: Python's
(engine/step_reader.py) gives, step by step, what the trace record holds (the sort's events, the
topological order, every visit and contribution with its variant's marks), and the page's
(static/js/core/step-columns.js, under Node) gives exactly what Python's does, on every preset in
every
variant, forward mode, a program's own function, another target and random programs. Steps alike
share one pattern, so the reply holds a few dozen sentences however large the graph."""

from __future__ import annotations

import json
import re
from itertools import accumulate
from pathlib import Path
from typing import Any

import node_driver
import pytest
from engine_cases import CASES, case_id, random_runs
from hypothesis import given, settings
from hypothesis import strategies as st
from node_driver import NODE

from chainrule import engine
from chainrule.engine.narration import fill, fmt, fmt_all, narrations, reply_numbers
from chainrule.engine.reply import number
from chainrule.engine.step_reader import resolve, step_objects
from chainrule.engine.topo import topo_order

# Besides CASES (presets and edge programs in every variant): the timelines CASES lacks.
MORE = [
    ("a = 2\nb = -3\nc = 10\nf = (a + b) * c", None, {"pass_": "forward", "wrt": "a"}),
    ("a = 2\nb = -3\nc = 10\ne = a*b\nf = (e + b) * c", None, {"target": "e"}),
    ("softplus(x) = log(1 + exp(x))\na = 1\nsoftplus(a*2) * softplus(a)", None, {}),
    ("softplus(x) = log(1 + exp(x))\na = 1\nsoftplus(a*2) * a", None, {"mode": "overwrite"}),
    ("a = 3\nb = a * a + 1", None, {"mode": "overwrite", "lang": "ru"}),
]
RUNS = CASES + MORE


def record_steps(traced: engine.Trace) -> list[tuple]:
    """What each step is about, from the trace record itself: (phase, node, what it does; its
    numbers JSON-ready, as a reply writes them)."""
    events: list = []
    topo_order(traced.target, events)
    found: list[tuple] = [
        ("topo", node.id, (action, None if child is None else child.id))
        for action, node, _, child in events
    ]
    if traced.tangents is not None:
        return found + [("tangent", node.id, None) for node in traced.topo_order]
    found += [("forward", node.id, None) for node in traced.topo_order]
    found.append(("seed", traced.target.id, None))
    record = traced.record
    for visit, node_id in enumerate(record.visits):
        ks = range(record.starts[visit], record.starts[visit + 1])
        contributions = tuple(
            (
                record.edge[k],
                record.to[k],
                number(record.contribution[k]),
                k in record.lost,
                k in record.late,
            )
            for k in ks
        )
        found.append(("backward", node_id, (number(record.upstream[visit]), contributions)))
    return found


def read_steps(reply: dict[str, Any]) -> list[tuple]:
    """The same, from the reader's step objects."""
    found = []
    for step in step_objects(reply):
        node = int(step["node"][1:])
        if step["phase"] == "topo":
            looked = None if step["input"] is None else int(step["input"][1:])
            found.append(("topo", node, (step["action"], looked)))
        elif step["phase"] == "backward":
            contributions = tuple(
                (int(c["edge"][1:]), int(c["to"][1:]), c["contribution"], c["lost"], c["late"])
                for c in step["contributions"]
            )
            found.append(("backward", node, (step["grad"], contributions)))
        else:
            found.append((step["phase"], node, None))
    return found


def run_id(case: tuple) -> str:
    return case_id(case) if case in CASES else f"{case[0][:24]!r}-{case[2]}"


@pytest.mark.parametrize("case", RUNS, ids=[run_id(c) for c in RUNS])
def test_the_reader_gives_what_the_trace_recorded(case: tuple) -> None:
    source, values, kwargs = case
    traced = engine.trace(source, values, **kwargs)
    reply = traced.to_dict()
    assert read_steps(reply) == record_steps(traced)


@settings(max_examples=100, deadline=None)
@given(random_runs())
def test_the_reader_gives_what_the_trace_recorded_on_random_programs(run: tuple) -> None:
    source, values, kwargs = run
    traced = engine.trace(source, values, **kwargs)
    assert read_steps(traced.to_dict()) == record_steps(traced)


def test_a_pattern_names_the_step_s_own_parts() -> None:
    pattern = "grad[{t:text:in1}] += {f:step_grad:visit} × {f:local_grad:e1} = {n:contribution:c1}"
    assert resolve(pattern, 7, [3, 5], edge=10, contribution=20, visit=4) == (
        "grad[{t:text:5}] += {f:step_grad:4} × {f:local_grad:11} = {n:contribution:21}"
    )
    # Literal braces stay as they are, plain indices too: only the names of parts are written.
    assert resolve("{{t:text:node}} {t:text:node} {n:data:12}", 7, []) == (
        "{{t:text:node}} {t:text:7} {n:data:12}"
    )


def test_steps_alike_share_one_pattern_however_large_the_graph() -> None:
    """A 7,499-node sum of products: 30,000 steps, a handful of sentences, and the backward
    numbers sent once, as the numbers reply's arrays."""
    source = " + ".join(f"a{i}*b{i}" for i in range(1_875))
    reply = engine.trace(source).to_dict()
    steps = reply["steps"]
    assert len(reply["nodes"]) == 7_499 and len(steps["phase"]) == 29_997
    assert len(steps["templates"]) <= 16, steps["templates"]
    assert steps["step_grad"] == engine.numbers(source)["step_grad"]
    # A step is three numbers and a phase; the sort's steps two more.
    per_step = len(json.dumps({k: steps[k] for k in ("phase", "node", "template")})) / 29_997
    assert per_step < 20


# The page's reader on the same replies, under Node: its step objects, as JSON.
DRIVER = """
import { stepObjects } from "./core/step-columns.js";
import { readFileSync } from "node:fs";
const replies = JSON.parse(readFileSync(process.argv[2], "utf8"));
console.log(JSON.stringify(replies.map(stepObjects)));
"""


def node_step_objects(tmp_path: Path, replies: list[dict[str, Any]]) -> list[Any]:
    done = node_driver.run_node(tmp_path, replies, DRIVER, [])
    return done


@pytest.mark.skipif(NODE is None, reason="Node.js is not installed (make test-deps)")
def test_the_page_s_reader_gives_what_python_s_gives(tmp_path: Path) -> None:
    replies = [json.loads(json.dumps(engine.trace(s, v, **k).to_dict())) for s, v, k in RUNS]
    expected = [json.loads(json.dumps(step_objects(reply))) for reply in replies]
    # run_node reads numbers back as floats (JSON has one kind of number).
    assert node_step_objects(tmp_path, replies) == node_driver.negative_zeros(expected)


@pytest.mark.skipif(NODE is None, reason="Node.js is not installed (make test-deps)")
@settings(max_examples=5, deadline=None)
@given(st.lists(random_runs(), min_size=20, max_size=20))
def test_the_page_s_reader_gives_what_python_s_gives_on_random_programs(
    tmp_path_factory: pytest.TempPathFactory, runs: list[tuple]
) -> None:
    replies = [json.loads(json.dumps(engine.trace(s, v, **k).to_dict())) for s, v, k in runs]
    expected = [json.loads(json.dumps(step_objects(reply))) for reply in replies]
    found = node_step_objects(tmp_path_factory.mktemp("node"), replies)
    assert found == node_driver.negative_zeros(expected)


MALFORMED = """
import { stepObjects } from "./core/step-columns.js";
import { readFileSync } from "node:fs";
const [reply] = JSON.parse(readFileSync(process.argv[2], "utf8"));
const said = (change) => {
  try {
    stepObjects(change(structuredClone(reply)));
    return "read";
  } catch (err) {
    return err.message;
  }
};
console.log(JSON.stringify([
  said((r) => r),
  said((r) => { delete r.steps.templates; return r; }),
  said((r) => { r.steps.node.pop(); return r; }),
  said((r) => { r.steps.node[0] = 99; return r; }),
  said((r) => { r.steps.template[1] = 99; return r; }),
  said((r) => { r.steps.phase[2] = "sideways"; return r; }),
  said((r) => { r.steps.action[1] = "jump"; return r; }),
]));
"""


@pytest.mark.skipif(NODE is None, reason="Node.js is not installed (make test-deps)")
def test_the_page_s_reader_refuses_malformed_columns(tmp_path: Path) -> None:
    """api.js turns what it throws into a BadResponse error: a reply it cannot read is never
    half shown."""
    reply = json.loads(json.dumps(engine.trace("a = 2\nb = a * 3").to_dict()))
    said = node_driver.run_node(tmp_path, [reply], MALFORMED, [])
    assert said == [
        "read",
        "the reply's steps lack templates",
        "the reply's step columns differ in length",
        "the reply's step 0 is malformed",
        "the reply's step 1 is malformed",
        "the reply's step 2 is malformed",
        'the reply\'s sort has an unknown action "jump"',
    ]


# The reader is linear and does a step's work in a few C calls (issue 42). The plain reader it
# replaced, kept here as the oracle: every field of every step, and every narration, the same.
PLAIN_REF = re.compile(r"\{\{|\}\}|\{([nft]):([a-z_]+):(?:(node|visit)|(in|e|c)(\d+))\}")


def plain_resolve(pattern: str, node: int, inputs, edge, contribution, visit) -> str:  # noqa: ANN001
    def index(match: re.Match[str]) -> str:
        whole, numbered = match.group(3), match.group(4)
        if whole is None and numbered is None:
            return match.group()
        if whole is not None:
            at = node if whole == "node" else visit
        else:
            j = int(match.group(5))
            at = inputs[j] if numbered == "in" else (edge if numbered == "e" else contribution) + j
        return f"{{{match.group(1)}:{match.group(2)}:{at}}}"

    return PLAIN_REF.sub(index, pattern)


def plain_step_objects(reply: dict[str, Any]) -> list[dict[str, Any]]:
    """Step by step, field by field, as docs/api.md says ("Step objects")."""
    columns, nodes, edges = reply["steps"], reply["nodes"], reply["edges"]
    inputs = [[int(name[1:]) for name in node["inputs"]] for node in nodes]
    offsets = list(accumulate(map(len, inputs), initial=0))
    found = []
    visit = first = 0
    for index, (phase, node, template) in enumerate(
        zip(columns["phase"], columns["node"], columns["template"], strict=True)
    ):
        ins, edge, written, name = inputs[node], offsets[node], nodes[node], f"n{node}"
        pattern = columns["templates"][template]
        step: dict[str, Any] = {
            "phase": phase,
            "node": name,
            "template": plain_resolve(pattern, node, ins, edge, first, visit),
        }
        if phase == "topo":
            action, at = columns["action"][index], columns["input_index"][index]
            looked = None if action in ("start", "emit") else f"n{ins[at]}"
            step["action"] = action
            step["pop"] = None if action == "start" else [name, at]
            step["input"] = looked
            step["pushed"] = {
                "start": [[name, 0]],
                "visit": [[name, (at or 0) + 1], [looked, 0]],
                "skip": [[name, (at or 0) + 1]],
                "emit": [],
            }[action]
            step["emitted"] = name if action == "emit" else None
        elif phase in ("forward", "tangent"):
            step.update(op=written["op"], inputs=list(written["inputs"]), data=written["data"])
        elif phase == "seed":
            step["grad"] = 1.0
        if phase == "tangent":
            step["tangent"] = written["tangent"]
            step["contributions"] = [
                {
                    "edge": f"e{edge + j}",
                    "from": f"n{child}",
                    "tangent_in": nodes[child]["tangent"],
                    "local": edges[edge + j]["local_grad"],
                    "contribution": columns["tangent_contribution"][edge + j],
                }
                for j, child in enumerate(ins)
            ]
        if phase == "backward":
            step["grad"] = columns["step_grad"][visit]
            step["contributions"] = [
                {
                    "edge": f"e{edge + j}",
                    "to": f"n{child}",
                    "upstream": columns["step_grad"][visit],
                    "local": edges[edge + j]["local_grad"],
                    "contribution": columns["contribution"][first + j],
                    "grad_before": columns["grad_before"][first + j],
                    "grad_after": columns["grad_after"][first + j],
                    "lost": first + j in columns["lost"],
                    "late": first + j in columns["late"],
                }
                for j, child in enumerate(ins)
            ]
            visit, first = visit + 1, first + len(ins)
        step["index"] = index
        found.append(step)
    return found


def plain_narrations(reply: dict[str, Any]) -> list[str]:
    numbers = reply_numbers(reply)
    return [fill(step["template"], numbers) for step in plain_step_objects(reply)]


def same_reading(reply: dict[str, Any]) -> None:
    """The reader and the plain reader agree on every step and every narration, exactly (key
    order too: a reply's JSON keeps it)."""
    found, expected = step_objects(reply), plain_step_objects(reply)
    assert [list(step) for step in found] == [list(step) for step in expected]
    assert found == expected
    assert narrations(reply) == plain_narrations(reply)


@pytest.mark.parametrize("case", RUNS, ids=[run_id(c) for c in RUNS])
def test_the_reader_reads_as_the_plain_reader(case: tuple) -> None:
    source, values, kwargs = case
    same_reading(json.loads(json.dumps(engine.trace(source, values, **kwargs).to_dict())))


@settings(max_examples=60, deadline=None)
@given(random_runs())
def test_the_reader_reads_as_the_plain_reader_on_random_programs(run: tuple) -> None:
    source, values, kwargs = run
    same_reading(engine.trace(source, values, **kwargs).to_dict())


def chain(multiplications: int) -> str:
    """x, then `multiplications` products by a constant: 2·multiplications + 1 nodes, 8 steps a
    product (the chain of issue 42's figures: 20,000 products, 160,005 steps)."""
    lines = ["x = 1.5", "y1 = x * 1.0001"]
    lines += [f"y{i} = y{i - 1} * 1.0001" for i in range(2, multiplications + 1)]
    return "\n".join(lines)


def test_the_reader_reads_a_long_chain_as_the_plain_reader() -> None:
    reply = engine.trace(chain(1_500)).to_dict()
    assert len(reply["steps"]["phase"]) == 8 * 1_500 + 5
    same_reading(reply)


# Patterns a reader must take as they come: literal braces and percent signs, plain indices,
# slots of every part, and parts past a step's own: an edge or contribution past its node's
# inputs (the plain reader writes first + j), a visit or contribution outside the backward pass
# (the next backward step's).
ODD_PATTERNS = [
    "{t:text:in0}·{t:text:in1} {n:local_grad:e1} {n:local_grad:e2} {f:data:in1} {t:text:in0}",
    "{n:step_grad:visit} {n:contribution:c0} {n:grad_after:c1} {n:grad_before:c2} at {t:text:node}",
    "{t:text:node} {f:data:in0} {n:local_grad:e0} {n:local_grad:e3} {n:step_grad:visit}",
    "{t:text:node} = {n:data:node}: {n:contribution:c1}",
    "100% of {{grad}} for {t:text:node}: {n:data:0} %s %d {{%}} {n:grad_after:c0}",
    "no slots, {{one}} brace pair",
]
LAST = len(ODD_PATTERNS) - 1


def outcome(read: Any, reply: dict[str, Any]) -> Any:
    """What `read(reply)` gives, or the type of error it raises."""
    try:
        return read(reply)
    except (IndexError, KeyError, ValueError, TypeError) as error:
        return type(error)


def with_odd_patterns(reply: dict[str, Any]) -> dict[str, Any]:
    """`reply` whose steps each use the first odd pattern the plain reader can fill there,
    taking them in turn (the last one always can)."""
    steps = reply["steps"]
    steps["templates"] = ODD_PATTERNS
    steps["template"] = [LAST] * len(steps["phase"])
    for step in range(len(steps["phase"])):
        for turn in range(len(ODD_PATTERNS)):
            steps["template"][step] = (step + turn) % len(ODD_PATTERNS)
            if not isinstance(outcome(plain_narrations, reply), type):
                break
    return reply


def test_odd_patterns_read_as_the_plain_reader() -> None:
    """Nodes with 0, 1 and 2 inputs, in the correct pass and a late order."""
    source = "a = 2\nb = -3\nc = exp(a) * b\nd = c + a\ne = d * c\nf = tanh(e) + b * a"
    nodes = len(engine.build_graph(source).nodes)
    late = [f"n{i}" for i in range(nodes)]  # inputs before their consumers: every one late
    for kwargs in ({}, {"order": late}, {"mode": "overwrite"}):
        reply = with_odd_patterns(engine.trace(source, **kwargs).to_dict())
        used = {ODD_PATTERNS[t] for t in reply["steps"]["template"]}
        assert used == set(ODD_PATTERNS)
        same_reading(reply)


def test_a_slot_past_a_step_s_inputs_is_refused_as_the_plain_reader_refuses_it() -> None:
    reply = engine.trace("a = 2\nb = exp(a) * a").to_dict()
    reply["steps"]["templates"] = ["{t:text:in1}"]
    reply["steps"]["template"] = [0] * len(reply["steps"]["phase"])
    with pytest.raises(IndexError):
        plain_step_objects(reply)
    with pytest.raises(IndexError):
        step_objects(reply)
    with pytest.raises(IndexError):
        narrations(reply)


def test_an_unknown_action_of_the_sort_is_refused() -> None:
    reply = engine.trace("a = 2\nb = a * 3").to_dict()
    reply["steps"]["action"][1] = "jump"
    with pytest.raises(ValueError, match="unknown action 'jump'"):
        step_objects(reply)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.floats(allow_nan=True, allow_infinity=True),
            st.integers(-(10**16), 10**16).map(float),
            st.sampled_from([-0.0, 0.0, 1e6, -1e6, 999999.0, 1e15, -1e15, 1e-5, -1e-5]),
        ),
        max_size=20,
    ),
    st.booleans(),
)
def test_a_whole_array_is_written_as_fmt_writes_each_number(values: list, spelled: bool) -> None:
    if spelled:  # a reply spells non-finite numbers as text
        values = [number(x) for x in values]
    assert fmt_all(values) == [fmt(x) for x in values]
