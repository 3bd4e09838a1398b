"""Runs of gradient descent that drive both executions of it, the engine's (engine/descend.py)
and the page's (static/js/train/descend.js), with the same bodies: every preset and lesson (the
Train
lab opens on any program) with plain and momentum descent and diverging rates, a table of the
stop rules (each rule, its numbering, its sentence in every language), and random programs.

A run is asked for as the Train lab asks (static/js/train/run.js): batches, each body carrying
the last reply's values and velocity, the first root as `baseline` and the steps taken so far as
`first_step`. `batches` are the engine's replies to the lab's bodies; `singles` one step from
each state the engine's run went through (step for step)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st
from program_strategies import valid_programs

from chainrule import engine
from chainrule.app.api.lesson_files import load_lessons
from chainrule.app.http.pages import ui_catalogue
from chainrule.engine.i18n import LANGS
from chainrule.engine.ops import FUNCTIONS, exact_in_javascript

# Programs whose every number is IEEE arithmetic in both executions (+ − × and relu: no **, ÷,
# which is a · b ** −1, and no function of V8's Math): their runs must agree to the bit.
NOT_PLAIN = re.compile(
    "|".join([r"\*\*", r"\^", "/", *(f for f in FUNCTIONS if not exact_in_javascript(f))])
)

# (learning rate, momentum): a calm rate, with momentum, and rates that diverge at once.
SETTINGS = [(0.01, 0.0), (0.01, 0.9), (1.0, 0.0), (10.0, 0.5)]


def json_ready(value: Any) -> Any:
    return json.loads(json.dumps(value))


def default_parameters(leaves: list[str]) -> list[str]:
    """The lab's default (lab-train.js defaultParams): every leaf not named x… or y… (the data);
    every leaf when that leaves none."""
    chosen = [name for name in leaves if not re.match(r"[xy]", name, re.I)]
    return chosen or leaves


def leaf_values(source: str, values: dict[str, float] | None) -> dict[str, float]:
    return {name: node.data for name, node in engine.build_graph(source, values).leaves}


def engine_reply(source: str, body: dict[str, Any], lang: str) -> dict[str, Any]:
    """The engine's reply to a POST /api/descend body, as the server writes it."""
    descent = engine.descend(
        source,
        body["values"],
        parameters=body["parameters"],
        lr=body["lr"],
        steps=body["steps"],
        momentum=body["momentum"],
        velocity=body.get("velocity"),
        baseline=body.get("baseline"),
        first_step=body["first_step"],
    )
    return json_ready(descent.to_dict(lang))


Answer = Callable[[str, dict[str, Any], str], dict[str, Any]]


def as_sent(value: Any) -> Any:
    """A body as the page's JSON carries it: JSON.stringify writes -0 as 0 (descend.js answers
    for the body so written)."""
    if isinstance(value, float) and value == 0:
        return 0.0
    if isinstance(value, list):
        return [as_sent(x) for x in value]
    if isinstance(value, dict):
        return {key: as_sent(x) for key, x in value.items()}
    return value


def run(
    source: str, start: dict[str, float], parameters: list[str], lr: float, momentum: float, *,
    steps: int, batch: int, lang: str = "en", first_step: int = 0, baseline: float | None = None,
    answer: Answer = engine_reply,
) -> list[dict[str, Any]]:  # fmt: skip
    """A run of `steps` steps in batches of `batch` as the Train lab asks for it, each body's
    reply `answer(source, body, lang)` (by default the engine's), as [{body, expected}]."""
    out: list[dict[str, Any]] = []
    values, velocity, taken = dict(start), None, 0
    while taken < steps:
        body: dict[str, Any] = {
            "values": values, "parameters": parameters, "lr": lr, "momentum": momentum,
            "steps": min(batch, steps - taken), "first_step": first_step + taken,
        }  # fmt: skip
        if velocity is not None:
            body["velocity"] = velocity
        if baseline is not None:
            body["baseline"] = baseline
        body = as_sent(body)
        reply = answer(source, body, lang)
        out.append({"body": body, "expected": reply})
        if reply["stopped"] or not reply["values"]:
            break
        baseline = reply["roots"][0] if baseline is None else baseline
        values = {**values, **dict(zip(parameters, reply["values"][-1], strict=True))}
        velocity, taken = reply["velocity"], taken + len(reply["values"])
    return out


def case(
    source: str, values: dict[str, float] | None, parameters: list[str] | None, lr: float,
    momentum: float, *, steps: int = 30, batch: int = 10, lang: str = "en", **extra: Any,
) -> dict[str, Any]:  # fmt: skip
    """A case for descent_check.js: the trace, the words, the lab's batches and the steps one by
    one (the last state's too, for its root)."""
    start = leaf_values(source, values)
    names = list(start)
    chosen = parameters if parameters is not None else default_parameters(names)
    batches = run(source, start, chosen, lr, momentum, steps=steps, batch=batch, lang=lang, **extra)
    singles = run(source, start, chosen, lr, momentum, steps=steps, batch=1, lang=lang, **extra)
    last = singles[-1]
    if not last["expected"]["stopped"] and last["expected"]["values"]:
        body, reply = last["body"], last["expected"]
        moved = dict(zip(chosen, reply["values"][-1], strict=True))
        after = as_sent({
            **body, "values": {**body["values"], **moved}, "velocity": reply["velocity"],
            "first_step": body["first_step"] + 1,
            "baseline": body.get("baseline", singles[0]["expected"]["roots"][0]),
        })  # fmt: skip
        singles.append({"body": after, "expected": engine_reply(source, after, lang)})
    return {
        "source": source,
        "exact": not NOT_PLAIN.search(source),
        "trace": json_ready(engine.trace(source, start).to_dict()),
        # The words train/descend.js says (core/i18n.js useCatalogue): the engine's sentences, in
        # `lang`.
        "ui": {"lang": lang, "text": {}, "sentences": ui_catalogue(lang)["sentences"]},
        "batches": batches,
        "singles": singles,
    }


def programs() -> list[tuple[str, dict[str, float] | None]]:
    """Every preset's and every scalar lesson's program, with its values (descent reads scalar
    programs: a tensor lesson's is refused, as /api/descend refuses it)."""
    presets = [(p["source"], p["values"] or None) for p in engine.PRESETS]
    lessons = [
        (lesson["source"], lesson["values"] or None)
        for lesson in load_lessons()
        if lesson.get("kind", "scalar") == "scalar"
    ]
    return presets + lessons


def program_cases(settings_each: int = len(SETTINGS)) -> list[dict[str, Any]]:
    """Every preset's and lesson's program, each with `settings_each` of SETTINGS, taken in turn
    from program to program (every setting for every program by default)."""
    return [
        case(source, values, None, *SETTINGS[(index + offset) % len(SETTINGS)])
        for index, (source, values) in enumerate(programs())
        for offset in range(settings_each)
    ]


LONG_NAME = "w" * 45  # longer than a message quotes (engine/errors.py QUOTE_MAX)

# The stop rules, each reached (engine/descend.py `_stop`, `_stopped`, `_move`), with their
# numbering in a later batch and their sentences: (source, values, parameters, lr, momentum,
# extra settings of the run).
STOP_RULES: list[tuple[str, dict[str, float], list[str], float, float, dict[str, Any]]] = [
    # cannot start: the root is not a number at the starting values
    (
        "r = relu(w) * (a - a * 2) + w * 0 * b",
        {"w": 1, "a": 1e308, "b": 1e308},
        ["w"],
        0.1,
        0.0,
        {},
    ),
    # … and in a later batch the same root "became" it
    (
        "r = relu(w) * (a - a * 2) + w * 0 * b",
        {"w": 1, "a": 1e308, "b": 1e308},
        ["w"],
        0.1,
        0.0,
        {"first_step": 7, "baseline": 3.0},
    ),
    # the root became inf after a step (w grows, w*w*… overflows)
    ("r = w * w * w * w * -1", {"w": 1e70}, ["w"], 1.0, 0.0, {}),
    # plain descent: the root rose
    ("loss = (w*2 + b - 5)*(w*2 + b - 5)", {"w": 0, "b": 0}, ["w", "b"], 1.0, 0.0, {}),
    # momentum: it may rise, not above its start
    ("loss = (w*2 + b - 5)*(w*2 + b - 5)", {"w": 0, "b": 0}, ["w", "b"], 0.5, 0.9, {}),
    ("loss = (w*2 + b - 5)*(w*2 + b - 5)", {"w": 0, "b": 0}, ["w", "b"], 0.1, 0.9, {"steps": 60}),
    # numbered from first_step, above a baseline from an earlier batch
    (
        "loss = (w*2 + b - 5)*(w*2 + b - 5)",
        {"w": 1, "b": 1},
        ["w", "b"],
        0.3,
        0.5,
        {"first_step": 40, "baseline": 4.0},
    ),
    # a parameter stopped being a finite number (its name quoted, cut at 40 characters)
    (f"r = {LONG_NAME} * 1e300 + c", {LONG_NAME: 1.0, "c": 2}, [LONG_NAME, "c"], 1e10, 0.0, {}),
    # a rise within rounding (math.isclose, rel 1e-9) is no rise; a rise just beyond it is one
    ("r = (w - 1) * (w - 1) + 1000", {"w": 1.001}, ["w"], 1.000001, 0.0, {}),
    ("r = (w - 1) * (w - 1) + 1", {"w": 1.001}, ["w"], 1.01, 0.0, {}),
    # relu's flat side: the root stays put
    ("r = relu(w) + 3", {"w": -2}, ["w"], 0.5, 0.0, {"steps": 5}),
    # -0, tiny and huge numbers through the steps
    ("r = w * w * 1e-300 + b * -0.0", {"w": 3e-200, "b": -0.0}, ["w", "b"], 1e290, 0.0, {}),
]


def stop_cases() -> list[dict[str, Any]]:
    """Every stop rule in every language, in batches of 3."""
    out = []
    for source, values, parameters, lr, momentum, extra in STOP_RULES:
        settings = {"steps": 12, "batch": 3, **extra}
        for lang in LANGS:
            out.append(case(source, values, parameters, lr, momentum, lang=lang, **settings))
    return out


@st.composite
def random_case(draw: st.DrawFn) -> dict[str, Any] | None:
    """A random program (every operator and function), its values, a random set of parameters,
    a rate from calm to diverging, momentum or none, and batches of random size; None for a
    program of constants alone (nothing to train: about half of them)."""
    program = draw(valid_programs())
    start = leaf_values(program.source, program.values)
    names = list(start)
    if not names:
        return None
    parameters = draw(st.lists(st.sampled_from(names), min_size=1, unique=True))
    lr = draw(st.sampled_from([1e-3, 0.05, 0.5, 5.0, 1e3]))
    momentum = draw(st.sampled_from([0.0, 0.0, 0.5, 0.9]))
    steps = draw(st.integers(1, 25))
    batch = draw(st.integers(1, 10))
    lang = draw(st.sampled_from(LANGS))
    return case(
        program.source, start, parameters, lr, momentum, steps=steps, batch=batch, lang=lang
    )


def check(cases: list[dict[str, Any]], results: list[dict[str, Any]]) -> dict[str, int]:
    """Every single step agrees; every batch of an exact program is the engine's reply. Returns
    how many batches and steps of the other programs agreed to the bit."""
    tally = {"batches": 0, "same": 0, "steps": 0, "agreeing": 0}
    for case, result in zip(cases, results, strict=True):
        label = case["source"]
        for single, found in zip(case["singles"], result["singles"], strict=True):
            assert found == [], (label, single["body"], found)
        for batch, outcome in zip(case["batches"], result["batches"], strict=True):
            assert outcome["page"] is not None, (label, batch["body"])
            if case["exact"]:
                assert outcome["same"], (label, batch["body"], outcome["page"], batch["expected"])
                assert outcome["page"] == batch["expected"]  # and as Python reads them
            else:
                tally["batches"] += 1
                tally["same"] += outcome["same"]
                tally["steps"] += len(batch["expected"]["values"])
                tally["agreeing"] += outcome["agreeing"]
    return tally


def random_cases(count: int) -> st.SearchStrategy[list[dict[str, Any]]]:
    """Lists of random cases with something to train, from `count` programs."""
    return st.lists(random_case(), min_size=count, max_size=count).map(
        lambda cases: [case for case in cases if case is not None]
    )
