"""The page's request table (static/js/core/request.js) under Node, against the engine's options
record (engine/options.py): one row per option, the state starts at the engine's defaults, and
the body the page writes for a state is read by the API's schema as the options that state
holds. A new option of `Options` without its row fails here."""

from __future__ import annotations

from dataclasses import fields

import node_driver
import pytest
from node_driver import NODE

from chainrule.app.api.schemas import GraphRequest
from chainrule.engine.options import Options
from chainrule.engine.page_module import request_options

pytestmark = pytest.mark.skipif(NODE is None, reason="Node.js is not installed (make test-deps)")

DRIVER = """
import { REQUEST_FIELDS, requestBody, requestDefaults } from "./core/request.js";
import { readFileSync } from "node:fs";
const states = JSON.parse(readFileSync(process.argv[2], "utf8"));
const defaults = requestDefaults();
const bodies = states.map((options) => {
  const state = { ...defaults, wrt: "", values: {} };
  for (const [name, value] of Object.entries(options)) state[REQUEST_FIELDS[name].key] = value;
  return requestBody(state, "a = 2; b = a * a");
});
console.log(JSON.stringify({ keys: Object.keys(REQUEST_FIELDS), defaults, bodies }));
"""

# Each non-default option alone, and forward mode with its leaf (its two fields go together).
ASKED = [
    Options(),
    Options(expand_derived=True),
    Options(mode="overwrite"),
    Options(order=("n2", "n1")),
    Options(target="a"),
    Options(pass_="forward", wrt="a"),
    Options(expand_derived=True, mode="overwrite", target="b", order=("n1",)),
]


def _as_body_fields(options: Options) -> dict:
    """The options that differ from the defaults, by their names in a request body."""
    default = Options()
    return {
        field.name.rstrip("_"): list(value) if isinstance(value, tuple) else value
        for field in fields(Options)
        if (value := getattr(options, field.name)) != getattr(default, field.name)
    }


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> dict:
    states = [_as_body_fields(options) for options in ASKED]
    states.append({"pass": "forward"})  # forward mode before a trace named its leaf
    return node_driver.run_node(tmp_path_factory.mktemp("request"), states, DRIVER)


def test_the_table_has_one_row_per_option_of_the_engine(page: dict) -> None:
    assert page["keys"] == list(request_options())


def test_the_state_starts_at_the_engines_defaults(page: dict) -> None:
    # node_driver reads JSON integers as doubles; every default is a bool, a text or null.
    assert sorted(page["defaults"].values(), key=repr) == sorted(
        request_options().values(), key=repr
    )


@pytest.mark.parametrize("index", range(len(ASKED)))
def test_the_body_the_page_writes_asks_the_options_of_its_state(page: dict, index: int) -> None:
    body = page["bodies"][index]
    assert body["source"] == "a = 2; b = a * a"
    # Only what differs from a default is sent: a short body, and the server's default decides.
    assert set(body) - {"source"} == set(_as_body_fields(ASKED[index]))
    assert GraphRequest.model_validate(body).options() == ASKED[index]


def test_forward_mode_is_asked_once_its_leaf_is_known(page: dict) -> None:
    body = page["bodies"][len(ASKED)]
    assert "pass" not in body and "wrt" not in body
    assert GraphRequest.model_validate(body).options() == Options()
