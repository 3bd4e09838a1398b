"""Tensor lessons (lessons/tensor-*.json, app/api/tensor_lessons.py): every stop lands where it
says, and every number a stop's text quotes, in every language, is the engine's: recomputed
here from `engine.tensor_program.trace_tensors` (the Values themselves, and the fan-in's terms
for a part one op passed), not read from the lesson loader."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest

from chainrule.app.api.lesson_files import LESSONS_DIR, LessonError, load_lessons, read_lesson
from chainrule.engine.presets import TENSOR_PRESETS
from chainrule.engine.tensor_program import trace_tensors
from chainrule.engine.tensor_reply import fan_in, tensor_reply

TENSOR_LESSONS = ["tensor-broadcast", "tensor-matmul", "tensor-softmax-ce"]
# A number of a text: an optional minus (− or -), digits, decimals.
NUMBER = re.compile(r"(?<![\w.\]])[\u2212-]?\d+(?:\.\d+)?")
# What is not a quoted number: an index (`W[1,2]`), the digits of a name (`W2`).
INDEX = re.compile(r"\[[^\]]*\]")


def raw(lesson_id: str) -> dict:
    return json.loads((LESSONS_DIR / f"{lesson_id}.json").read_text())


def program(lesson_id: str) -> tuple[str, dict]:
    preset = next(p for p in TENSOR_PRESETS if p["id"] == raw(lesson_id)["preset"])
    return preset["source"], preset["values"]


def engine_number(trace, cell: str) -> float:
    """The number of `cell` (`W[1,2]`, `dW[1,2]`, `d(X @ W)[0,1]`, `dX[0,2] via p`) read off
    the trace's Values (and, for `via`, the sum of the fan-in's terms through that op)."""
    cell, _, via = cell.partition(" via ")
    match = re.fullmatch(r"(.+?)(?:\[([\d,]+)\])?", cell)
    name, index = match[1], [int(i) for i in match[2].split(",")] if match[2] else []
    tensors = {t.name: t for t in trace.tensors if t.name} | {
        t.label: t for t in trace.tensors if not t.name
    }
    grad = name not in tensors
    if grad:
        name = name[1:].removeprefix("(").removesuffix(")")
    tensor = tensors[name]
    flat = 0
    for i, size in zip(index, tensor.shape, strict=True):
        flat = flat * size + i
    if tensor.elements is None:
        return float(tensor.ints[flat])
    if via:
        terms = fan_in(trace, tensor, index)
        return sum(t["contribution"] for t in terms if t["tensor"] == f"t{tensors[via].id}")
    element = tensor.elements[flat]
    return element.grad if grad else element.data


@pytest.mark.parametrize("lesson_id", TENSOR_LESSONS)
def test_every_number_a_tensor_lesson_quotes_is_the_engine_s(lesson_id):
    source, values = program(lesson_id)
    trace = trace_tensors(source, values)
    tensor_reply(trace)  # gives the unnamed tensors their labels (`X @ W`)
    largest = max(max(t.shape, default=1) for t in trace.tensors)
    checked = 0
    for k, stop in enumerate(raw(lesson_id)["stops"]):
        quoted = stop.get("numbers", {})
        for cell, text in quoted.items():
            written = float(text.replace("\u2212", "-"))
            places = len(text.partition(".")[2])
            assert abs(engine_number(trace, cell) - written) <= 0.5 * 10**-places + 1e-12, (
                lesson_id,
                k,
                cell,
            )
            checked += 1
        said = {text.replace("\u2212", "-") for text in quoted.values()}
        for lang, text in stop["text"].items():
            for token in NUMBER.findall(INDEX.sub("", text)):
                token = token.replace("\u2212", "-")
                # An integer up to the largest size is a size, a dim or a count (`3 rows`,
                # `dim 0`, `2 ×`); any other number must be one the stop checks.
                structural = token.lstrip("-").isdigit() and int(token) <= largest
                assert token in said or structural, (lesson_id, k, lang, token)
    assert checked >= 4


@pytest.mark.parametrize("lesson_id", TENSOR_LESSONS)
def test_a_tensor_lesson_s_stops_land_on_the_tensor_steps_they_name(lesson_id):
    source, values = program(lesson_id)
    reply = tensor_reply(trace_tensors(source, values))
    lesson = read_lesson(LESSONS_DIR / f"{lesson_id}.json")
    assert lesson["kind"] == "tensor"
    by_name = {n["name"] or n["label"]: n["id"] for n in reply["nodes"]}
    for stop, written in zip(lesson["stops"], raw(lesson_id)["stops"], strict=True):
        step = reply["steps"][stop["step"]]
        at = written["at"]
        if at == "start":
            assert stop["step"] == 0
        elif at == "end":
            assert stop["step"] == len(reply["steps"]) - 1
        else:
            assert (step["phase"], step["node"]) == (at["phase"], by_name[at["node"]])
        for key in stop["highlight"]:
            tensor_id = key.split("|")[0]
            assert tensor_id in {n["id"] for n in reply["nodes"]}
    fans = [s["fan_in"] for s in lesson["stops"] if s["fan_in"]]
    expected = {"tensor-broadcast": ("b", "1"), "tensor-matmul": ("W", "1,2")}.get(lesson_id)
    assert fans == ([f"{by_name[expected[0]]}|grad|{expected[1]}"] if expected else [])


def test_the_api_serves_tensor_lessons_with_their_kind(client):
    lessons = {lesson["id"]: lesson for lesson in client.get("/api/lessons?lang=et").json()}
    assert {lessons[i]["kind"] for i in TENSOR_LESSONS} == {"tensor"}
    assert lessons["square"]["kind"] == "scalar"
    assert lessons["tensor-matmul"]["stops"][3]["text"].startswith("Üks lahter: `W[1,2]`")


def broken(change) -> dict:
    lesson = copy.deepcopy(raw("tensor-matmul"))
    change(lesson)
    return lesson


BAD = [
    (
        "a number that is not the engine's",
        lambda d: d["stops"][3]["numbers"].update({"dW[1,2]": "-1.57"}),
        "stops.3.numbers.dW[1,2]: the text says dW[1,2] = -1.57, the engine -1.75",
    ),
    (
        "a cell outside the shape",
        lambda d: d["stops"][3].update(fan_in="dW[2,2]"),
        "stops.3.fan_in: 'dW[2,2]': index [2, 2] is not in W's shape [2, 3]",
    ),
    (
        "a fan-in of data",
        lambda d: d["stops"][3].update(fan_in="W[1,2]"),
        "stops.3.fan_in: 'W[1,2]' is no gradient's cell",
    ),
    (
        "an unknown tensor",
        lambda d: d["stops"][1].update(highlight=["Q"]),
        "stops.1.highlight.0: no tensor is called 'Q' (tensors: G, W, X, Y, Y * G, loss)",
    ),
    (
        "a sort step",
        lambda d: d["stops"][1].update(at={"phase": "topo", "index": 0}),
        "stops.1.at.phase: a tensor program's timeline has forward, seed and backward steps",
    ),
    (
        "a question",
        lambda d: d["stops"][1].update(question={"node": "W", "why": d["title"]}),
        "stops.1.question: a tensor lesson asks with the predict lab",
    ),
]


@pytest.mark.parametrize(("change", "message"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_a_tensor_lesson_that_cannot_be_used_is_named(tmp_path: Path, change, message):
    (tmp_path / "tensor-matmul.json").write_text(json.dumps(broken(change)))
    with pytest.raises(LessonError) as error:
        load_lessons(tmp_path)
    assert str(error.value).startswith("tensor-matmul.json: ")
    assert message in str(error.value)


def test_a_scalar_lesson_has_no_fan_in(tmp_path: Path):
    square = json.loads((LESSONS_DIR / "square.json").read_text())
    square["stops"][0]["fan_in"] = "da[0]"
    (tmp_path / "square.json").write_text(json.dumps(square))
    with pytest.raises(LessonError, match=r"stops\.0\.fan_in: only a tensor lesson has it"):
        load_lessons(tmp_path)
