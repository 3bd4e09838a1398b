"""Lessons (app/api/lesson_files.py, lessons/*.json): every file loads and means what it says; a
file
that cannot be used stops the app's start with the file and the field named."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from chainrule import engine
from chainrule.app.api.lesson_files import LESSONS_DIR, LessonError, load_lesson, load_lessons
from chainrule.app.main import create_app
from chainrule.app.settings import AppSettings
from chainrule.engine.step_reader import step_objects

LESSON_IDS = sorted(path.stem for path in LESSONS_DIR.glob("*.json"))
# A tensor lesson's stops are tensor steps (tests/app/test_tensor_lessons.py checks them).
SCALAR_LESSON_IDS = [i for i in LESSON_IDS if not i.startswith("tensor-")]
SEEDS_EXERCISES = {"chain-rule", "neuron", "square", "diamond", "topo-sort", "dead-relu"}


def test_every_lesson_file_loads_and_the_seeds_exercises_are_there():
    lessons = load_lessons()
    assert [lesson["id"] for lesson in lessons] == LESSON_IDS
    assert SEEDS_EXERCISES <= set(LESSON_IDS)


def test_the_api_serves_the_lessons_the_app_loaded(client):
    response = client.get("/api/lessons")
    assert response.status_code == 200
    assert response.json() == load_lessons()


@pytest.mark.parametrize("lesson_id", SCALAR_LESSON_IDS)
def test_each_stop_shows_what_it_names_and_asks_before_the_answer_shows(lesson_id):
    lesson = load_lesson(LESSONS_DIR / f"{lesson_id}.json")
    raw = json.loads((LESSONS_DIR / f"{lesson_id}.json").read_text())
    for stop, written in zip(lesson["stops"], raw["stops"], strict=True):
        # The stop's own timeline: forward mode's by its leaf, or reverse mode's.
        pass_, wrt = written.get("pass", "reverse"), written.get("wrt")
        assert (stop["pass"], stop["wrt"]) == (pass_, wrt)
        traced = engine.trace(lesson["source"], lesson["values"], pass_=pass_, wrt=wrt)
        trace = traced.to_dict()
        steps = step_objects(trace)
        nodes = {node["id"]: node for node in trace["nodes"]}
        at = written.get("at", "start")
        step = steps[stop["step"]]
        if at == "end":
            assert stop["step"] == len(steps) - 1
        elif at != "start" and at["phase"] in ("forward", "backward", "tangent"):
            assert step["phase"] == at["phase"]
            assert at["node"] in (nodes[step["node"]]["label"], nodes[step["node"]]["text"])
        question = stop["question"]
        if question and question["of"] == "grad":
            # The pulse has not brought the answer yet: no contribution into that node so far.
            arrived = [
                c
                for s in steps[: stop["step"] + 1]
                if s["phase"] == "backward"
                for c in s["contributions"]
                if c["to"] == question["node"]
            ]
            assert arrived == [], (lesson_id, question)


def test_the_questions_answers_are_the_engine_s():
    lesson = load_lesson(LESSONS_DIR / "diamond.json")
    (question,) = [s["question"] for s in lesson["stops"] if s["question"]]
    trace = engine.trace(lesson["source"], lesson["values"])
    assert trace.grads[int(question["node"][1:])] == 15.0


GOOD = json.loads((LESSONS_DIR / "chain-rule.json").read_text())


def broken(change) -> dict:
    lesson = copy.deepcopy(GOOD)
    change(lesson)
    return lesson


BAD_LESSONS = [
    ("no stops", lambda d: d.update(stops=[]), "stops: List should have at least 1 item"),
    ("a stop without text", lambda d: d["stops"][2].pop("text"), "stops.2.text: Field required"),
    (
        "an unknown field",
        lambda d: d["stops"][1].update(colour="red"),
        "stops.1.colour: Extra inputs are not permitted",
    ),
    (
        "an unknown node to highlight",
        lambda d: d["stops"][1].update(highlight=["e", "zz"]),
        "stops.1.highlight.1: no node is called 'zz' (names and texts: a, b, c, e, f)",
    ),
    (
        "a place the pass never visits",
        lambda d: d["stops"][4].update(at={"phase": "forward", "node": "nope"}),
        "stops.4.at.node: no node is called 'nope'",
    ),
    (
        "a sort step past the end",
        lambda d: d["stops"][0].update(at={"phase": "topo", "index": 99}),
        "stops.0.at.index: the sort has 10 steps (0 to 9), not 100",
    ),
    (
        "a question about nothing",
        lambda d: d["stops"][3]["question"].update(node="q"),
        "stops.3.question.node: no node is called 'q'",
    ),
    ("an unknown preset", lambda d: d.update(preset="nope"), "preset: no preset is called 'nope'"),
    (
        "both a preset and a source",
        lambda d: d.update(source="a * b"),
        "preset, source: give exactly one of them",
    ),
    (
        "a program that does not run",
        lambda d: (d.pop("preset"), d.update(source="a +")),
        "source: the program does not run: ",
    ),
    ("an id that is not the file's", lambda d: d.update(id="other"), "id: 'other' must match"),
]


@pytest.mark.parametrize(
    ("change", "message"), [c[1:] for c in BAD_LESSONS], ids=[c[0] for c in BAD_LESSONS]
)
def test_a_lesson_that_cannot_be_used_stops_the_start_naming_file_and_field(
    tmp_path: Path, change, message
):
    (tmp_path / "chain-rule.json").write_text(json.dumps(broken(change)))
    with pytest.raises(LessonError) as error:
        create_app(AppSettings(lessons_dir=tmp_path))
    assert str(error.value).startswith("chain-rule.json: ")
    assert message in str(error.value)


def test_a_file_that_is_not_json_is_named(tmp_path: Path):
    (tmp_path / "broken.json").write_text('{"id": "broken",')
    with pytest.raises(LessonError, match=r"^broken\.json: \(the whole file\): not readable JSON"):
        load_lessons(tmp_path)


def test_an_edge_is_highlighted_by_its_two_ends():
    square = load_lesson(LESSONS_DIR / "square.json")
    assert square["stops"][0]["highlight"] == ["e0", "e1"]  # a·a: both input positions of b


def test_an_edge_that_does_not_exist_is_named(tmp_path: Path):
    lesson = broken(lambda d: d["stops"][1].update(highlight=["a->f"]))
    (tmp_path / "chain-rule.json").write_text(json.dumps(lesson))
    with pytest.raises(LessonError, match="stops.1.highlight.0: no edge goes from 'a' into 'f'"):
        load_lessons(tmp_path)
