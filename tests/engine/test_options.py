"""engine/options.py: one record of what a trace asks. A request's options are read field by
field, every field is in the key a cache or a structure id is made of, and the engine's entry
points take every field by name, so a new option needs no second list anywhere."""

from __future__ import annotations

import inspect
from dataclasses import fields, replace

from chainrule import engine
from chainrule.app.api.graph_body import structure_id
from chainrule.app.api.schemas import GraphRequest
from chainrule.app.settings import AppSettings
from chainrule.engine.options import BUILD_FIELDS, Options

# A value other than the default for each field (the test fails for a field it lacks).
CHANGED = {
    "expand_derived": True,
    "mode": "overwrite",
    "order": ("n1", "n0"),
    "target": "c",
    "pass_": "forward",
    "wrt": "a",
}


def test_every_field_has_a_changed_value_here():
    assert {field.name for field in fields(Options)} == set(CHANGED)


def test_every_field_changes_the_key():
    default = Options()
    for name, value in CHANGED.items():
        assert replace(default, **{name: value}).key() != default.key(), name


def body(**options) -> dict:
    """A request's JSON body with these options (by their names in JSON: `pass_` is `pass`)."""
    named = {"pass" if name == "pass_" else name: value for name, value in options.items()}
    if "order" in named:
        named["order"] = list(named["order"])
    return {"source": "c = a * b", **named}


def test_a_request_gives_every_field_and_the_schema_has_its_defaults():
    request = GraphRequest.model_validate(body(**CHANGED))
    assert request.options() == Options(**CHANGED)
    assert GraphRequest(source="c = a * b").options() == Options()


def test_every_field_changes_the_structure_id():
    settings = AppSettings()
    plain = structure_id(GraphRequest.model_validate(body()), settings)
    for name, value in CHANGED.items():
        changed = GraphRequest.model_validate(body(**{name: value}))
        assert structure_id(changed, settings) != plain, name


def test_the_engine_takes_every_field_by_name():
    run = inspect.signature(engine.run).parameters
    trace = inspect.signature(engine.trace).parameters
    assert set(Options().run_kwargs()) <= set(run)
    assert set(BUILD_FIELDS).isdisjoint(Options().run_kwargs())
    assert set(Options().trace_kwargs()) <= set(trace)  # engine.numbers passes them to trace
    # and a trace by the options is the trace by the same keywords
    options = Options(mode="overwrite")
    by_record = engine.trace("d = a + a", {"a": 3}, **options.trace_kwargs()).to_dict()
    assert by_record == engine.trace("d = a + a", {"a": 3}, mode="overwrite").to_dict()
