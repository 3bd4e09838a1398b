"""The catalogues (locales/*.json, engine/i18n.py): every key in every language with the same
placeholders; every error, warning, message and narration of the engine is a catalogue sentence,
so it reads in Russian and Estonian with nothing of the English left."""

from __future__ import annotations

import ast
import json
import pickle
import re
import string
from pathlib import Path

import pytest
from test_micrograd_dialect import UNSUPPORTED
from test_parser import ERRORS

from chainrule import engine
from chainrule.engine.i18n import (
    LANGS,
    LOCALES_DIR,
    Count,
    Message,
    catalogue,
    msg,
    placeholders,
    render,
    text,
)
from chainrule.engine.presets import PRESETS, presets
from chainrule.engine.step_reader import step_objects

ENGINE_DIR = Path(engine.__file__).parent
OTHERS = [lang for lang in LANGS if lang != "en"]
ENGLISH = catalogue("en")
LEFTOVER = re.compile(r"\{[A-Za-z_]\w*\}")  # a placeholder left unfilled


def test_every_language_has_a_catalogue_file_and_no_other():
    assert sorted(path.stem for path in LOCALES_DIR.glob("*.json")) == sorted(LANGS)
    for lang in LANGS:
        raw = json.loads((LOCALES_DIR / f"{lang}.json").read_text(encoding="utf-8"))
        assert isinstance(raw, dict) and raw == catalogue(lang)


@pytest.mark.parametrize("lang", OTHERS)
def test_every_key_is_in_every_language_with_the_same_placeholders(lang):
    translated = catalogue(lang)
    assert set(translated) - set(ENGLISH) == set(), "keys English does not have"
    assert set(ENGLISH) - set(translated) == set(), "keys left untranslated"
    for key, template in ENGLISH.items():
        assert placeholders(translated[key]) == placeholders(template), key


@pytest.mark.parametrize("lang", LANGS)
def test_every_template_is_plain_names_in_braces_and_fills(lang):
    for key, template in catalogue(lang).items():
        assert template.strip() == template and template, key  # nothing empty or padded
        assert re.fullmatch(r"[a-z0-9_-]+(\.[a-z0-9_-]+)+", key), key
        for literal, name, spec, conversion in string.Formatter().parse(template):
            # No escaped braces, format specs or conversions: the page fills the same files.
            assert "{" not in literal and "}" not in literal, key
            if name is not None:
                assert name.isidentifier() and not spec and conversion is None, key
        params = {name: f"<{name}>" for name in placeholders(template)}
        filled = text(lang, key, **params)
        assert LEFTOVER.search(filled) is None, key
        assert all(value in filled for value in params.values()), key


# What stays the same in every language: the math functions' names and JSON's null.
NOTATION = {"relu", "tanh", "exp", "log", "sigmoid", "null"}


@pytest.mark.parametrize("lang", OTHERS)
def test_every_sentence_with_words_is_translated(lang):
    """Keys, not words: a translation equal to the English is a sentence left in English,
    unless the English has no words to translate (`(a + b) · c`)."""
    for key, english in ENGLISH.items():
        if set(re.findall(r"[A-Za-z]{2,}", LEFTOVER.sub(" ", english))) - NOTATION:
            assert catalogue(lang)[key] != english, key


def test_counts_are_grouped_as_each_language_writes_them():
    assert text("en", "error.node_limit", limit=Count(20_000)) == (
        "the graph needs more than 20,000 nodes; the limit is 20,000"
    )
    assert "20\u00a0000" in text("ru", "error.node_limit", limit=Count(20_000))
    assert "20\u00a0000" in text("et", "error.node_limit", limit=Count(20_000))
    # A plain int is digits alone (a line number), and decimals keep their point everywhere.
    assert text("ru", "warning.on_line", line=12345, message="x") == "строка 12345: x"
    assert "0.5" in text("et", "descent.rose", before="0.5", root="2")


def test_a_message_is_its_english_text_says_any_language_and_pickles():
    message = msg("warning.on_line", line=3, message=msg("warning.unused", name="b"))
    assert isinstance(message, str) and message == (
        "line 3: 'b' is not used by the result (the last statement), so it is left out of the graph"
    )
    assert render(message, "ru").startswith("строка 3: 'b' не используется")
    assert render("plain text", "et") == "plain text"
    copy = pickle.loads(pickle.dumps(message))  # a ProgramError crosses from a worker process
    assert isinstance(copy, Message) and copy.render("et") == message.render("et")


def _raised(source: str) -> engine.ProgramError:
    with pytest.raises(engine.ProgramError) as caught:
        engine.trace(source)
    return caught.value


TABLES = [row[0] for row in ERRORS] + [row[0] for row in UNSUPPORTED]


@pytest.mark.parametrize("source", TABLES, ids=range(len(TABLES)))
def test_every_error_of_the_tables_reads_in_every_language(source):
    error = _raised(source)
    assert isinstance(error.message, Message), "an error written outside the catalogue"
    english = error.to_dict()
    for lang in OTHERS:
        said = error.to_dict(lang)
        assert LEFTOVER.search(said["message"]) is None, said["message"]
        assert said["message"] != english["message"]
        assert {**said, "message": None} == {**english, "message": None}  # type, place: same


def test_errors_about_the_request_read_in_every_language():
    cases = [
        lambda: engine.trace("a", {"a": "x"}),
        lambda: engine.trace("a", {"a": float("inf")}),
        lambda: engine.trace("a * b", order=["n9"]),
        lambda: engine.trace("a * b", order=["n2", "n2"]),
        lambda: engine.trace("a * b * c * d", limits=engine.Limits(max_nodes=3)),
        lambda: engine.trace("a" * 20, limits=engine.Limits(max_source_chars=10)),
        lambda: engine.trace("((a))", limits=engine.Limits(max_depth=1)),
        lambda: engine.descend("a * b", parameters=[], lr=0.1, steps=1),
        lambda: engine.descend("a * b", parameters=["a", "a"], lr=0.1, steps=1),
        lambda: engine.descend("a * b", parameters=["z"], lr=0.1, steps=1),
        lambda: engine.descend("2 * 3", parameters=["z"], lr=0.1, steps=1),
        lambda: engine.descend("a * b", parameters=["a"], lr=-1, steps=1),
        lambda: engine.descend("a * b", parameters=["a"], lr=0.1, steps=0),
        lambda: engine.descend("a * b", parameters=["a"], lr=0.1, steps=1, momentum=1),
        lambda: engine.descend("a * b", parameters=["a"], lr=0.1, steps=1, first_step=-1),
        lambda: engine.descend("a * b", parameters=["a"], lr=0.1, steps=1, baseline="x"),
        lambda: engine.descend("a", parameters=["a"], lr=0.1, steps=1, velocity={"a": 1e999}),
        lambda: engine.descend("a * b", parameters=["a"], lr=0.1, steps=9, max_node_steps=10),
    ]
    for case in cases:
        with pytest.raises(engine.ProgramError) as caught:
            case()
        error = caught.value
        assert isinstance(error.message, Message), str(error)
        for lang in OTHERS:
            assert error.message_in(lang) != str(error)
            assert LEFTOVER.search(error.message_in(lang)) is None


def _error_constructors() -> set[str]:
    return {name for name in dir(engine) if name.endswith(("Error", "Error_", "Exceeded"))} | {
        "ArgumentCount",
        "AssignedTwice",
        "BadOrder",
        "BadTraining",
        "BadValue",
        "UnknownFunction",
        "UseBeforeAssign",
        "NotAGraph",  # the Value reader's three
        "NotAValue",
        "TooManyNodes",
        "error",  # the parser's `self.error(message, token)`
    }


def _is_text(node: ast.AST) -> bool:
    return isinstance(node, ast.JoinedStr) or (
        isinstance(node, ast.Constant) and isinstance(node.value, str)
    )


@pytest.mark.parametrize("path", sorted(ENGINE_DIR.glob("*.py")), ids=lambda path: path.name)
def test_no_message_of_the_engine_is_written_outside_the_catalogue(path):
    """Every error the engine raises and every warning or message it returns is a catalogue
    sentence, never text in the code (the Value reader's too: the sandbox says them in the
    page's language)."""
    constructors = _error_constructors()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args:
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in constructors:
                assert not _is_text(node.args[0]), f"{path.name}:{node.lineno}"
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                if isinstance(key, ast.Constant) and key.value == "message":
                    assert not _is_text(value), f"{path.name}:{node.lineno}"


def _words(template: str) -> set[str]:
    """The words of a catalogue template, its placeholders left out."""
    return set(re.findall(r"[^\W\d_]{2,}", LEFTOVER.sub(" ", template)))


# The words of the English narration: none may be left in another language's narration (but
# the notation `grad[…]`, and Estonian's `on`, "is").
ENGLISH_WORDS = set().union(
    *(_words(value) for key, value in ENGLISH.items() if key.startswith("narration."))
) - {"grad", "on"}
VARIANTS = [(preset["id"], {}) for preset in PRESETS] + [
    ("double", {"mode": "overwrite"}),  # a contribution lost
    ("diamond", {"order": ["n2", "n5", "n4", "n0"]}),  # b visited too early: late ones
    ("division", {"expand_derived": True}),
]


@pytest.mark.parametrize(("preset_id", "options"), VARIANTS, ids=[v[0] for v in VARIANTS])
@pytest.mark.parametrize("lang", OTHERS)
def test_the_narration_of_every_preset_has_no_english_left(lang, preset_id, options):
    preset = next(p for p in PRESETS if p["id"] == preset_id)
    english = engine.trace(preset["source"], preset["values"], **options)
    translated = engine.trace(preset["source"], preset["values"], **options, lang=lang)
    names = {node.label for node in english.nodes} | {
        word for node in english.nodes for word in re.findall(r"\w+", node.label)
    }
    translated_steps, english_steps = (
        step_objects(translated.to_dict()),
        step_objects(english.to_dict()),
    )
    assert len(translated_steps) == len(english_steps)
    for ours, theirs in zip(translated_steps, english_steps, strict=True):
        # The same step, numbers and slots: only the words differ.
        assert {**ours, "narration": 0, "template": 0} == {**theirs, "narration": 0, "template": 0}
        assert set(re.findall(r"\{[nft]:\w+:\d+\}", ours["template"])) == set(
            re.findall(r"\{[nft]:\w+:\d+\}", theirs["template"])
        )
        formula_only = ours["phase"] == "forward" and theirs["template"] == ours["template"]
        if not formula_only:  # `c = a·b = 2·(-3) = -6` has no words to translate
            assert ours["template"] != theirs["template"]
        left = (_words(ours["template"]) - names) & ENGLISH_WORDS
        assert left == set(), (ours["template"], left)


# A pasted cell with one of every kind of skipped statement and copy leftover.
PASTED_CELL = (
    "\ufeff%matplotlib inline\n!pip install micrograd\n>>> import torch\n>>> a = Value(2.0)\n"
    ">>> print(a)\n>>> a\n>>> b = a\u00a0* 3; draw_dot(b); b.data; b.requires_grad = True\n"
    "Value(data=6.0)\n>>> b.grad = 0.0; b.grad = 1.0; b.grad = 2.0; b._backward()\n"
    ">>> z.label = 'z'\n>>> b.backward()\n>>> print(a.grad)"
)


@pytest.mark.parametrize("lang", OTHERS)
def test_every_kind_of_warning_reads_in_every_language(lang):
    programs = [
        ("a = 2\nb = a\nu = 3\nu * 2\nc = b * 2", {"zz": 1.0}),  # alias, unused, unknown value
        ("from micrograd.engine import Value\nprint(1)\na = Value(2.0)\na.label = 'a'\n"
         "def tanh(x):\n    return x\nL = a * 2\nL.backward()\nL = L * 3", {}),  # skipped
        ("\n".join(f"u{k} = {k}" for k in range(30)) + "\nx", {}),  # and 19 more statements
        ("a = 0\nb = log(a) + 1 / a + exp(1000) + log(-1)", {}),  # node warnings
        (PASTED_CELL, {}),  # every kind of statement skipped and copy leftover (issue 22)
    ]  # fmt: skip
    for source, values in programs:
        english = engine.numbers(source, values)
        translated = engine.numbers(source, values, lang=lang)
        pairs = list(zip(translated["warnings"], english["warnings"], strict=True))
        for node_id, warnings in english["node_warnings"].items():
            pairs += zip(translated["node_warnings"][node_id], warnings, strict=True)
        assert pairs
        for ours, theirs in pairs:
            assert ours["type"] == theirs["type"]
            assert ours["message"] != theirs["message"]
            assert LEFTOVER.search(ours["message"]) is None


@pytest.mark.parametrize("lang", OTHERS)
def test_the_visit_order_lab_and_the_train_lab_read_in_every_language(lang):
    preset = next(p for p in PRESETS if p["id"] == "diamond")
    orders = [["n2", "n5", "n4", "n0"], ["n5"], ["n5", "n4", "n2", "n0"]]
    for order in orders:
        english = engine.trace(preset["source"], order=order).to_dict()
        translated = engine.trace(preset["source"], order=order, lang=lang).to_dict()
        assert translated["order_check"]["message"] != english["order_check"]["message"]
        assert [w["message"] for w in translated["warnings"]] != [
            w["message"] for w in english["warnings"]
        ] or not english["warnings"]
    descents = [
        engine.descend("w = 0\nloss = (w*2 - 5)**2", parameters=["w"], lr=1.0, steps=3),
        engine.descend("w = -1\nloss = log(w)", parameters=["w"], lr=0.1, steps=3),
    ]
    for descent in descents:
        assert descent.stopped is not None
        said = descent.to_dict(lang)["stopped"]["message"]
        assert said != descent.to_dict()["stopped"]["message"]
        assert LEFTOVER.search(said) is None


@pytest.mark.parametrize("lang", LANGS)
def test_presets_are_the_same_programs_with_titles_and_notes_in_each_language(lang):
    said, english = presets(lang), presets("en")
    assert [(p["id"], p["source"], p["values"]) for p in said] == [
        (p["id"], p["source"], p["values"]) for p in english
    ]
    for preset in said:
        assert preset["title"] == text(lang, f"preset.{preset['id']}.title")
        assert preset["note"] == text(lang, f"preset.{preset['id']}.note")
    if lang != "en":
        assert all(p["note"] != e["note"] for p, e in zip(said, english, strict=True))
