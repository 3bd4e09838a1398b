"""Guided lessons: data files under `lessons/` (one JSON file per lesson), validated when the app
starts. Each stop of a lesson names a place on the timeline, the nodes to highlight and an
optional question; the server resolves them against the engine's trace of the lesson's program
(node names to ids, places to step indices), so a lesson that names something its program does
not have never reaches a page: the app refuses to start and says which file and field.

Every text a person reads (title, summary, a stop's text, a question's `why`) is written in each
language of the catalogues, `{"en": …, "ru": …, "et": …}`; each translation keeps the English
text's numbers and as many `math` spans (between backticks): numbers never change in translation.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from chainrule import engine
from chainrule.engine.i18n import DEFAULT_LANG, LANGS
from chainrule.engine.step_reader import step_objects
from chainrule.engine.tensor_program import trace_tensors
from chainrule.engine.tensor_reader import is_tensor_program
from chainrule.engine.tensor_reply import tensor_reply

from .tensor_lessons import TensorLessonError, TensorResolver

ROOT = Path(__file__).resolve().parents[2]
LESSONS_DIR = ROOT / "lessons"  # package data, beside app/


class LessonError(Exception):
    """A lesson file that cannot be used; the message names the file and the field."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Place(_Strict):
    """A step of the timeline: a phase, and the node it visits (forward, backward) or the
    position in the sort (topo, 0-based)."""

    phase: Literal["topo", "forward", "seed", "backward", "tangent"]
    node: str | None = None
    index: int | None = Field(default=None, ge=0)


class Texts(_Strict):
    """A text in every language of the catalogues (engine/i18n.py LANGS)."""

    en: str = Field(min_length=1)
    ru: str = Field(min_length=1)
    et: str = Field(min_length=1)


class QuestionFile(_Strict):
    node: str = Field(min_length=1, description="The node whose number is asked (name or text).")
    of: Literal["grad", "data"] = "grad"
    why: Texts = Field(description="The computation, shown after an answer.")


class StopFile(_Strict):
    text: Texts
    # The pass the stop shows: forward mode by leaf `wrt` (a name), or the usual reverse mode.
    pass_: Literal["reverse", "forward"] = Field(default="reverse", alias="pass")
    wrt: str | None = None
    at: Literal["start", "end"] | Place = "start"
    highlight: list[str] = []
    question: QuestionFile | None = None
    # Tensor lessons only (app/api/tensor_lessons.py): the gradient cell whose fan-in the stop
    # opens, and each number the text quotes with the cell it is the number of.
    fan_in: str | None = None
    numbers: dict[str, str] = {}


class LessonFile(_Strict):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    title: Texts
    summary: Texts
    preset: str | None = None
    source: str | None = None
    values: dict[str, float] = {}
    stops: list[StopFile] = Field(min_length=1)


def _where(loc: tuple[Any, ...]) -> str:
    return ".".join(str(part) for part in loc) or "(the whole file)"


# A number of a lesson's text: not the digits of a name (`w2`, `x1w1`).
_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?")


def _texts(name: str, where: str, texts: Texts) -> dict[str, str]:
    """`texts` by language, after checking that every translation has the English text's
    numbers (in any order: a sentence may put them elsewhere) and as many `math` spans."""
    by_lang = texts.model_dump()
    numbers = sorted(_NUMBER.findall(texts.en))
    spans = texts.en.count("`")
    for lang in LANGS:
        translated = by_lang[lang]
        if sorted(_NUMBER.findall(translated)) != numbers:
            raise LessonError(
                f"{name}: {where}.{lang}: its numbers {sorted(_NUMBER.findall(translated))} are "
                f"not the English text's {numbers}"
            )
        if translated.count("`") != spans:
            raise LessonError(
                f"{name}: {where}.{lang}: it has {translated.count('`') // 2} `math` spans, "
                f"the English text {spans // 2}"
            )
    return by_lang


def _program(lesson: LessonFile, name: str) -> tuple[str, dict[str, float]]:
    """The lesson's program and values: its own `source`, or those of its `preset`."""
    if (lesson.preset is None) == (lesson.source is None):
        raise LessonError(f"{name}: preset, source: give exactly one of them")
    if lesson.source is not None:
        return lesson.source, dict(lesson.values)
    programs = [*engine.PRESETS, *engine.TENSOR_PRESETS]
    preset = next((p for p in programs if p["id"] == lesson.preset), None)
    if preset is None:
        known = ", ".join(p["id"] for p in programs)
        raise LessonError(
            f"{name}: preset: no preset is called {lesson.preset!r} (there are: {known})"
        )
    return preset["source"], {**preset["values"], **lesson.values}


class _Resolver:
    """Node names and timeline places of one lesson's trace, for one file's messages."""

    def __init__(self, name: str, trace: dict[str, Any]) -> None:
        self.name = name
        self.steps = step_objects(trace)
        self.ids: dict[str, list[str]] = {}
        for node in trace["nodes"]:
            for key in {node["label"], node["text"]} - {""}:
                self.ids.setdefault(key, []).append(node["id"])
        self.kinds = {node["id"]: node["kind"] for node in trace["nodes"]}
        self.edges = trace["edges"]

    def highlight(self, where: str, name: str) -> list[str]:
        """A node's id, or for `input->consumer` the ids of the edges between them."""
        if "->" not in name:
            return [self.node(where, name)]
        source, target = (part.strip() for part in name.split("->", 1))
        source_id, target_id = self.node(where, source), self.node(where, target)
        ends = (source_id, target_id)
        edges = [e["id"] for e in self.edges if (e["source"], e["target"]) == ends]
        if not edges:
            raise LessonError(f"{self.name}: {where}: no edge goes from {source!r} into {target!r}")
        return edges

    def node(self, where: str, name: str) -> str:
        ids = self.ids.get(name, [])
        if len(ids) != 1:
            problem = "no node is" if not ids else f"{len(ids)} nodes are"
            known = ", ".join(sorted(self.ids))
            raise LessonError(
                f"{self.name}: {where}: {problem} called {name!r} (names and texts: {known})"
            )
        return ids[0]

    def step(self, where: str, at: str | Place) -> int:
        if at == "start":
            return 0
        if at == "end":
            return len(self.steps) - 1
        assert isinstance(at, Place)
        indices = [k for k, step in enumerate(self.steps) if step["phase"] == at.phase]
        if at.phase == "topo":
            if at.index is None or at.node is not None:
                raise LessonError(f"{self.name}: {where}: a topo place takes `index`, not `node`")
            if at.index >= len(indices):
                raise LessonError(
                    f"{self.name}: {where}.index: the sort has {len(indices)} steps (0 to "
                    f"{len(indices) - 1}), not {at.index + 1}"
                )
            return indices[at.index]
        if at.phase == "seed":
            if at.node is not None or at.index is not None:
                raise LessonError(f"{self.name}: {where}: the seed takes neither node nor index")
            return indices[0]
        if at.node is None or at.index is not None:
            raise LessonError(f"{self.name}: {where}: a {at.phase} place takes `node`")
        node_id = self.node(f"{where}.node", at.node)
        matches = [k for k in indices if self.steps[k]["node"] == node_id]
        if not matches:
            raise LessonError(
                f"{self.name}: {where}.node: the {at.phase} pass never visits {at.node!r}"
            )
        return matches[0]


def _tensor_resolver(name: str, source: str, values: dict[str, float]) -> TensorResolver:
    """The TensorResolver of a tensor lesson's program, as `POST /api/graph` replies it."""
    try:
        return TensorResolver(tensor_reply(trace_tensors(source, values)))
    except engine.ProgramError as error:
        raise LessonError(f"{name}: source: the program does not run: {error}") from error


def _resolvers(name: str, source: str, values: dict[str, float]) -> Any:
    """`resolver(where, stop)`: the _Resolver of the trace `stop` shows (its pass, its leaf),
    each traced once; raises LessonError for a program that does not run or a bad `wrt`."""
    found: dict[tuple[str, str | None], _Resolver] = {}

    def resolver(where: str, stop: StopFile) -> _Resolver:
        key = (stop.pass_, stop.wrt)
        if key not in found:
            try:
                trace = engine.trace(source, values, pass_=stop.pass_, wrt=stop.wrt).to_dict()
            except engine.BadWrt as error:
                raise LessonError(f"{name}: {where}.wrt: {error}") from error
            except engine.ProgramError as error:
                raise LessonError(f"{name}: source: the program does not run: {error}") from error
            found[key] = _Resolver(name, trace)
        return found[key]

    return resolver


def read_lesson(path: Path) -> dict[str, Any]:
    """The lesson in `path` as the API serves it, but with each text by language (`{"en": …,
    "ru": …, "et": …}`; `in_language` picks one); raises LessonError naming file and field."""
    name = path.name
    try:
        raw = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError) as error:
        raise LessonError(f"{name}: (the whole file): not readable JSON: {error}") from error
    try:
        lesson = LessonFile.model_validate(raw)
    except ValidationError as error:
        first = error.errors()[0]
        raise LessonError(f"{name}: {_where(first['loc'])}: {first['msg']}") from error
    if lesson.id != path.stem:
        raise LessonError(f"{name}: id: {lesson.id!r} must match the file name ({path.stem!r})")
    source, values = _program(lesson, name)
    if is_tensor_program(source):
        return _tensor_lesson(name, lesson, source, values)
    resolver = _resolvers(name, source, values)
    stops = []
    for i, stop in enumerate(lesson.stops):
        where = f"stops.{i}"
        resolve = resolver(where, stop)
        for field in ("fan_in", "numbers"):
            if getattr(stop, field):
                raise LessonError(f"{name}: {where}.{field}: only a tensor lesson has it")
        question = None
        if stop.question is not None:
            node_id = resolve.node(f"{where}.question.node", stop.question.node)
            if resolve.kinds[node_id] == "const" and stop.question.of == "grad":
                raise LessonError(
                    f"{name}: {where}.question.node: {stop.question.node!r} is a constant, "
                    "whose gradient the page does not show"
                )
            question = {
                "node": node_id,
                "name": stop.question.node,
                "of": stop.question.of,
                "why": _texts(name, f"{where}.question.why", stop.question.why),
            }
        stops.append(_served_stop(name, where, stop, resolve, question, stop.pass_, stop.wrt))
    return {
        "id": lesson.id,
        "kind": "scalar",
        "title": _texts(name, "title", lesson.title),
        "summary": _texts(name, "summary", lesson.summary),
        "source": source,
        "values": values,
        "stops": stops,
    }


def _tensor_stop(name: str, where: str, stop: StopFile, resolve: TensorResolver) -> dict[str, Any]:
    """A tensor lesson's stop as served: its step, highlighted tensors and cells, fan-in."""
    if stop.question is not None:
        raise LessonError(
            f"{name}: {where}.question: a tensor lesson asks with the predict lab, not a question"
        )
    if stop.pass_ != "reverse" or stop.wrt is not None:
        raise LessonError(f"{name}: {where}.pass: a tensor program has the reverse pass only")
    for cell, quoted in stop.numbers.items():
        resolve.check_number(f"{where}.numbers.{cell}", cell, quoted)
    fan_in = None
    if stop.fan_in is not None:
        tensor_id, grid, index = resolve.cell(f"{where}.fan_in", stop.fan_in)
        if grid != "grad":
            raise LessonError(f"{name}: {where}.fan_in: {stop.fan_in!r} is no gradient's cell")
        fan_in = f"{tensor_id}|grad|{','.join(map(str, index))}"
    return _served_stop(name, where, stop, resolve, None, "reverse", None, fan_in)


def _served_stop(
    name: str,
    where: str,
    stop: StopFile,
    resolve: _Resolver | TensorResolver,
    question: dict[str, Any] | None,
    pass_: str,
    wrt: str | None,
    fan_in: str | None = None,
) -> dict[str, Any]:
    """A stop as `/api/lessons` serves it, scalar or tensor: `resolve` (its lesson's resolver)
    finds its step and what it highlights."""
    return {
        "text": _texts(name, f"{where}.text", stop.text),
        "step": resolve.step(f"{where}.at", stop.at),
        "highlight": [
            found
            for k, label in enumerate(stop.highlight)
            for found in resolve.highlight(f"{where}.highlight.{k}", label)
        ],
        "question": question,
        "pass": pass_,
        "wrt": wrt,
        "fan_in": fan_in,
    }


def _tensor_lesson(
    name: str, lesson: LessonFile, source: str, values: dict[str, float]
) -> dict[str, Any]:
    """A lesson about a tensor program (app/api/tensor_lessons.py), as `read_lesson` returns it."""
    resolve = _tensor_resolver(name, source, values)
    try:
        stops = [
            _tensor_stop(name, f"stops.{i}", stop, resolve) for i, stop in enumerate(lesson.stops)
        ]
    except TensorLessonError as error:
        raise LessonError(f"{name}: {error}") from error
    return {
        "id": lesson.id,
        "kind": "tensor",
        "title": _texts(name, "title", lesson.title),
        "summary": _texts(name, "summary", lesson.summary),
        "source": source,
        "values": values,
        "stops": stops,
    }


def in_language(lesson: dict[str, Any], lang: str) -> dict[str, Any]:
    """A lesson of `read_lesson` as the API serves it in `lang`: each text in that language."""

    def stop_in(stop: dict[str, Any]) -> dict[str, Any]:
        question = stop["question"]
        if question is not None:
            question = {**question, "why": question["why"][lang]}
        return {**stop, "text": stop["text"][lang], "question": question}

    return {
        **lesson,
        "title": lesson["title"][lang],
        "summary": lesson["summary"][lang],
        "stops": [stop_in(stop) for stop in lesson["stops"]],
    }


def read_lessons(directory: Path = LESSONS_DIR) -> list[dict[str, Any]]:
    """Every lesson of `directory` (`*.json`, by file name) with its texts by language; raises
    LessonError for the first file that cannot be used."""
    if not directory.is_dir():
        raise LessonError(f"{directory}: the lessons folder is missing")
    return [read_lesson(path) for path in sorted(directory.glob("*.json"))]


def load_lesson(path: Path, lang: str = DEFAULT_LANG) -> dict[str, Any]:
    """The lesson in `path` as the API serves it in `lang`."""
    return in_language(read_lesson(path), lang)


def load_lessons(directory: Path = LESSONS_DIR, lang: str = DEFAULT_LANG) -> list[dict[str, Any]]:
    """Every lesson of `directory` as the API serves them in `lang`."""
    return [in_language(lesson, lang) for lesson in read_lessons(directory)]
