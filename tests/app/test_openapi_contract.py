"""The served OpenAPI schema is the truth (PRODUCT §4): real responses validate against it.

Responses are sent as pre-encoded JSON bytes (app.responses.JSONBytes), so FastAPI never checks
them against `response_model`: this file does. It fetches the SERVED `/openapi.json` and
validates every preset's /api/graph answer, edge programs, every error status each route can
answer, /api/presets, /api/export and /healthz against the schema of that route and status
(OpenAPI 3.1 schemas are JSON Schema 2020-12; `#/components/schemas/...` refs resolve in the
served document). Every object schema forbids undeclared fields, so a field sent but not
documented fails here, and every response field is required, so one documented but never sent
fails too. The last test runs schemathesis against the live server's schema.
"""

from __future__ import annotations

import os
from concurrent.futures.process import BrokenProcessPool
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012
from servers import strict_json

from chainrule import engine

JSON = {"content-type": "application/json"}
OPENAPI_URI = "urn:chainrule:openapi"
# Per operation (derandomized: the same cases each run); a longer run sets the variable:
# `SCHEMATHESIS_EXAMPLES=1000 make test`.
SCHEMATHESIS_EXAMPLES = int(os.environ.get("SCHEMATHESIS_EXAMPLES", "50"))
# Models that describe a request, where optional fields are optional.
REQUEST_SCHEMAS = {
    "GraphRequest",
    "DescendRequest",
    "LandscapeRequest",
    "ValuesRequest",
    "ClassCreate",
    "View",
    "PathsRequest",
    "FanInRequest",
    "ExpandRequest",
}


class Contract:
    """The served schema, and a validator for the body of (path, method, status)."""

    def __init__(self, spec: dict[str, Any]) -> None:
        self.spec = spec
        resource = Resource.from_contents(spec, default_specification=DRAFT202012)
        self.registry = Registry().with_resource(OPENAPI_URI, resource)
        self._validators: dict[tuple[str, str, int, str], Draft202012Validator] = {}

    def response(self, path: str, method: str, status: int) -> dict[str, Any]:
        responses = self.spec["paths"][path][method]["responses"]
        assert str(status) in responses, f"{method.upper()} {path} does not document {status}"
        return responses[str(status)]

    def validator(
        self, path: str, method: str, status: int, media_type: str = "application/json"
    ) -> Draft202012Validator:
        key = (path, method, status, media_type)
        if key not in self._validators:
            schema = self.response(path, method, status)["content"][media_type]["schema"]
            # Refs are `#/components/...` of the served document: resolve them there.
            root = _rebase_refs(schema)
            Draft202012Validator.check_schema(root)
            self._validators[key] = Draft202012Validator(root, registry=self.registry)
        return self._validators[key]

    def check(self, response: Any, path: str, method: str = "post") -> Any:
        """Validate a JSON response against the schema of its route and status; its body."""
        assert response.headers["content-type"] == "application/json", response.headers
        body = strict_json(response.content)
        errors = sorted(
            self.validator(path, method, response.status_code).iter_errors(body),
            key=lambda error: list(error.absolute_path),
        )
        assert not errors, "\n".join(
            f"{'/'.join(map(str, error.absolute_path))}: {error.message[:300]}"
            for error in errors[:5]
        )
        return body


def _rebase_refs(schema: Any) -> Any:
    """A copy of `schema` whose `#/...` refs point into the served document."""
    if isinstance(schema, dict):
        return {
            key: (OPENAPI_URI + value if key == "$ref" and value.startswith("#") else None)
            or _rebase_refs(value)
            for key, value in schema.items()
        }
    if isinstance(schema, list):
        return [_rebase_refs(item) for item in schema]
    return schema


@pytest.fixture(scope="module")
def contract() -> Contract:
    """The schema a default app serves, fetched once for the module (every app serves the same
    one; building it costs 0.3 s of CPU a time, and its validators are built once too)."""
    from fastapi.testclient import TestClient

    from chainrule.app.main import create_app
    from chainrule.app.settings import AppSettings

    client = TestClient(create_app(AppSettings()), raise_server_exceptions=False)
    response = client.get("/openapi.json")
    client.app.state.server.close()
    client.close()
    assert response.status_code == 200
    return Contract(response.json())


# The schema itself: strict, complete, and only the error types that exist.


def test_every_object_schema_forbids_undeclared_fields_and_requires_what_is_sent(contract):
    schemas = contract.spec["components"]["schemas"]
    for name, schema in schemas.items():
        assert schema.get("additionalProperties") is False, name
        if name not in REQUEST_SCHEMAS:
            assert set(schema["required"]) == set(schema["properties"]), name


def test_the_documented_error_types_are_exactly_those_that_exist(contract):
    documented = set(
        contract.spec["components"]["schemas"]["ErrorDetail"]["properties"]["type"]["enum"]
    )
    engine_types = {cls.type for cls in _subclasses(engine.ProgramError)}
    assert engine_types <= documented
    assert "UnknownName" not in documented
    assert {"InvalidRequest", "BodyTooLarge", "RateLimited", "GraphvizUnavailable"} <= documented


def _subclasses(cls: type) -> list[type]:
    found = []
    for sub in cls.__subclasses__():
        found += [sub, *_subclasses(sub)]
    return found


def test_the_schema_names_what_is_sent_and_nothing_else(contract):
    schemas = contract.spec["components"]["schemas"]
    assert set(schemas["Steps"]["properties"]) == {
        "phase", "node", "template", "templates", "action", "input_index", "step_grad",
        "contribution", "grad_before", "grad_after", "lost", "late", "tangent_contribution",
    }  # fmt: skip
    status = schemas["GradCheckResult"]["properties"]["status"]
    assert status["enum"] == ["pass", "fail", "kink", "imprecise", "nonfinite"]
    assert schemas["GraphRequest"]["properties"]["source"]["minLength"] == 1
    assert "order_check" in schemas["GraphResponse"]["required"]


def test_every_route_documents_every_status_it_can_answer(contract):
    paths = contract.spec["paths"]
    statuses = {
        (path, method): set(op["responses"])
        for path, ops in paths.items()
        for method, op in ops.items()
    }
    everything = {"200", "400", "413", "422", "429", "503"}
    assert statuses == {
        ("/api/graph", "post"): everything,
        ("/api/export", "post"): everything,
        ("/api/descend", "post"): everything,  # 503: a long program waits for a helper
        ("/api/landscape", "post"): everything,
        ("/api/values", "post"): everything | {"409"},
        ("/api/paths", "post"): everything,
        ("/api/fan-in", "post"): everything,
        ("/api/expand", "post"): everything,
        ("/api/tensor-graph", "post"): everything,
        ("/api/presets", "get"): {"200", "422", "429"},  # 422: an unknown ?lang=
        ("/api/lessons", "get"): {"200", "422", "429"},
        ("/api/class", "post"): {"200", "413", "422", "429", "503"},  # 503: too many classes
        ("/api/class/{code}", "get"): {"200", "404", "422", "429", "503"},  # 503: store away
        ("/healthz", "get"): {"200"},
    }
    for (path, method), codes in statuses.items():
        for code in codes - {"200"}:
            schema = paths[path][method]["responses"][code]["content"]["application/json"]
            assert schema["schema"] == {"$ref": "#/components/schemas/ErrorResponse"}


# Real responses of /api/descend.


@pytest.mark.parametrize(
    "body",
    [
        {"source": "loss = (w*2 + b - 5)**2", "parameters": ["w", "b"], "lr": 0.01, "steps": 5},
        {"source": "loss = (w*2 + b - 5)**2", "parameters": ["w"], "lr": 1.0, "steps": 5},
        {"source": "y = -exp(a)", "values": {"a": 700.0}, "parameters": ["a"], "lr": 1.0,
         "steps": 3, "momentum": 0.5},
        {"source": "y = log(a)", "values": {"a": -1.0}, "parameters": ["a"], "lr": 1.0,
         "steps": 3},
        {"source": "y = w", "parameters": ["q"], "lr": 1.0, "steps": 3},
    ],
)  # fmt: skip
def test_descend_answers_match_the_schema(client, contract, body):
    contract.check(client.post("/api/descend", json=body), "/api/descend")


# Real responses of /api/landscape.

LANDSCAPE = {"source": "loss = (w*2 + b - 5)**2", "parameters": ["w", "b"],
             "x_range": [-1.0, 3.0], "y_range": [-2.0, 2.0], "points": 4}  # fmt: skip


@pytest.mark.parametrize(
    "change",
    [{}, {"source": "y = log(w) + b"}, {"parameters": ["w"]}, {"x_range": [1.0, 0.0]},
     {"points": 99}, {"source": "y = w +* b"}],
)  # fmt: skip
def test_landscape_answers_match_the_schema(client, contract, change):
    contract.check(client.post("/api/landscape", json=LANDSCAPE | change), "/api/landscape")


# Real responses of /api/graph.

PRESET_IDS = [preset["id"] for preset in engine.PRESETS]


@pytest.mark.parametrize("preset_id", PRESET_IDS)
def test_every_preset_answer_matches_the_schema(client, contract, preset_id):
    preset = next(p for p in engine.PRESETS if p["id"] == preset_id)
    body = {"source": preset["source"], "values": preset["values"]}
    response = client.post("/api/graph", json=body)
    assert response.status_code == 200
    contract.check(response, "/api/graph")
    # The same again comes from the cache (`layout.cached`), and still matches.
    again = contract.check(client.post("/api/graph", json=body), "/api/graph")
    assert again["layout"]["cached"] is True


@pytest.mark.parametrize("preset", engine.TENSOR_PRESETS, ids=lambda p: p["id"])
def test_every_tensor_preset_answer_matches_the_schema(client, contract, preset):
    body = {"source": preset["source"], "values": preset["values"]}
    response = client.post("/api/graph", json=body)
    assert response.status_code == 200
    assert contract.check(response, "/api/graph")["kind"] == "tensor"


def chain(n: int) -> str:
    return "a = 1\ns = a" + " + a" * (n - 1)


EDGE_PROGRAMS = [
    ("log(0)", {"source": "a = 0\nlog(a)"}),
    ("1/0", {"source": "1/0"}),
    ("(-8)**(1/3)", {"source": "(-8)**(1/3)"}),
    ("overflow", {"source": "exp(1000)"}),
    ("0/0", {"source": "a = 0\na/a"}),
    ("expand_derived",
     {"source": "a = 5\nb = -2\np = a + a - b\n-p / (b - 1)", "expand_derived": True}),
    ("derived ops", {"source": "a = 5\nb = -2\np = a + a - b\n-p / (b - 1)"}),
    ("constant power", {"source": "a = 3\na**2 + a**-0.5"}),
    ("every function", {"source": "a = 0.5\ntanh(a) + relu(a) + exp(a) + log(a) + sigmoid(a)"}),
    ("mode overwrite", {"source": "a = 2\nb = a * 3\nc = a + b\nc * a", "mode": "overwrite"}),
    ("a valid custom order",
     {"source": "a = 2\nb = a * 3\nb + a", "order": ["n3", "n2", "n1", "n0"]}),
    ("a late custom order", {"source": "a = 2\nb = a * 3\nb + a", "order": ["n2", "n3", "n1"]}),
    ("warnings", {"source": "a = 1\nb = 2\nc = a\nu = b * 2\nc * 3", "values": {"zz": 1.0}}),
    ("many warnings, summarised", {"source": "a\n" * 30 + "a"}),
    ("a lecture cell pasted", {"source": "%matplotlib inline\r\n>>> a = Value(2.0, label='α')\r\n"
                                         ">>> b = a * 3; b.label = 'a*3'\r\n>>> draw_dot(b)"}),
    ("gradcheck kink", {"source": "a = 0\nrelu(a)"}),
    ("gradcheck imprecise", {"source": "a = 2\nb = 1e16\n(a + b) - b"}),
    ("gradcheck nonfinite", {"source": "a = 0\nlog(a)"}),
    ("gradcheck capped", {"source": " + ".join(f"x{i}" for i in range(70))}),
    ("a constant alone", {"source": "3"}),
    ("fallback layout, 1,500 nodes", {"source": chain(1_500)}),
    ("a program's functions",
     {"source": "softplus(x) = log(1 + exp(x))\nf(x, y) = softplus(x) * y\nf(a*b, b)"}),
    ("a program's functions, expanded",
     {"source": "softplus(x) = log(1 + exp(x))\nsoftplus(a) - a", "expand_derived": True}),
]  # fmt: skip


@pytest.mark.parametrize(
    "body", [case[1] for case in EDGE_PROGRAMS], ids=[c[0] for c in EDGE_PROGRAMS]
)
def test_edge_program_answers_match_the_schema(client, contract, body):
    response = client.post("/api/graph", json=body)
    assert response.status_code == 200, response.text[:300]
    contract.check(response, "/api/graph")


# Tensor programs (docs/tensors.md): their reply is `TensorGraphResponse`.
TENSOR_PROGRAMS = [
    ("the issue's program", {"source": (
        "X = tensor([[1.0, 2.0], [3.0, -1.0], [0.5, 0.5]])\n"
        "W = tensor([[0.1, -0.2, 0.3], [0.4, 0.0, -0.5]])\nb = tensor([0.1, 0.1, 0.1])\n"
        "W2 = randn(3, 3, seed=1)\nh = tanh(X @ W + b)\n"
        "loss = cross_entropy(h @ W2, tensor([2, 0, 1]))"), "values": {"W[1,2]": 0.25}}),
    ("every op", {"source": (
        "A = randn(2, 3, seed=1)\nv = ones(3)\nC = randn(5, 2, seed=2)\n"
        "X = tensor([[0, 4], [1, 1]])\n"
        "s = (A * v - v / (v + 1) + A ** 2).sum(1, keepdim=True)\n"
        "m = A.T.mean(0) + A.max(1).values.sum()\ne = C[X].view(2, -1)\n"
        "p = softmax(e, 1) + log_softmax(e, -1) + sigmoid(e) + relu(e) + exp(e)\n"
        "L = p.sum() + s.sum() + m.sum() + (one_hot(tensor([1, 0]), 3) @ torch.t(A)).sum()")}),
    ("non-finite numbers", {"source": "A = tensor([[-1.0, 0.0]])\nL = log(A).sum()"}),
    ("a scalar-shaped result", {"source": "a = tensor([2.0, 3.0])\n(a @ a)"}),
    ("notes and warnings", {"source": (
        "import torch\ng = torch.Generator().manual_seed(42)\n"
        "W = torch.randn((2, 2), generator=g)\nu = W * 2\nprint(W)\nL = W.sum()\n"
        "L.backward()"), "values": {"zz": 1.0}}),
]  # fmt: skip


@pytest.mark.parametrize(
    "body", [case[1] for case in TENSOR_PROGRAMS], ids=[c[0] for c in TENSOR_PROGRAMS]
)
def test_tensor_program_answers_match_the_schema(client, contract, body):
    response = client.post("/api/graph", json=body)
    assert response.status_code == 200, response.text[:300]
    assert contract.check(response, "/api/graph")["kind"] == "tensor"


@pytest.mark.parametrize(
    ("source", "status"),
    [
        ("X = randn(4, 2, seed=3)\nW = randn(2, 3, seed=4)\nL = softmax(X @ W, 1).max()", 200),
        ("a = 2\nb = a * 3", 400),  # a scalar program: its graph is /api/graph's
        ("A = randn(3, 2, seed=1)\nL = (A @ A).sum()", 400),  # a shape error
    ],
)
def test_tensor_graph_answers_match_the_schema(client, contract, source, status):
    response = client.post("/api/tensor-graph", json={"source": source})
    assert response.status_code == status, response.text[:300]
    contract.check(response, "/api/tensor-graph")


@pytest.mark.parametrize(
    ("body", "status"),
    [
        ({"tensor": "W", "index": [1, 2]}, 200),
        ({"tensor": "t0", "index": [3, 1], "values": {"X[0,0]": 2.0}}, 200),
        ({"tensor": "Q", "index": [0]}, 400),
        ({"tensor": "X", "index": [4, 0]}, 400),
        ({"tensor": "W", "index": [0, 0], "source": "a = 2\nb = a * 3"}, 400),
    ],
)
def test_fan_in_answers_match_the_schema(client, contract, body, status):
    source = "X = randn(4, 2, seed=3)\nW = randn(2, 3, seed=4)\nY = X @ W\nL = tanh(Y).sum()"
    response = client.post("/api/fan-in", json={"source": source, **body})
    assert response.status_code == status, response.text[:300]
    contract.check(response, "/api/fan-in")


@pytest.mark.parametrize(
    ("body", "status"),
    [
        ({"tensor": "Y"}, 200),
        ({"tensor": "L"}, 200),
        ({"tensor": "Y", "graph": True}, 200),
        ({"tensor": "L", "graph": True, "values": {"X[0,0]": 1e308, "X[0,1]": 1e308}}, 200),
        ({"tensor": "X"}, 400),
        ({"tensor": "Y", "source": "X = randn(40, 40, seed=1)\nY = X @ X\nL = Y.sum()"}, 400),
    ],
)
def test_expand_answers_match_the_schema(client, contract, body, status):
    source = "X = randn(4, 2, seed=3)\nW = randn(2, 3, seed=4)\nY = X @ W\nL = tanh(Y).sum()"
    response = client.post("/api/expand", json={"source": source, **body})
    assert response.status_code == status, response.text[:300]
    contract.check(response, "/api/expand")


@pytest.mark.parametrize(
    "body",
    [{"source": p["source"], "values": p["values"]} for p in engine.PRESETS]
    + [case[1] for case in EDGE_PROGRAMS],
    ids=[f"preset {p['id']}" for p in engine.PRESETS] + [c[0] for c in EDGE_PROGRAMS],
)
def test_numbers_answers_match_the_schema(client, contract, body):
    graph = client.post("/api/graph", json=body).json()
    values = {leaf["name"]: 0.5 for leaf in graph["leaves"]}
    numbers = {**body, "values": values, "structure": graph["structure"]}
    response = client.post("/api/values", json=numbers)
    assert response.status_code == 200, response.text[:300]
    contract.check(response, "/api/values")


def test_the_edge_programs_reach_what_they_are_named_for(client):
    def trace(case: str) -> dict:
        return client.post("/api/graph", json=dict(EDGE_PROGRAMS)[case]).json()

    statuses = {
        result["status"]
        for case in ("gradcheck kink", "gradcheck imprecise", "gradcheck nonfinite")
        for result in trace(case)["gradcheck"]["results"]
    }
    assert statuses == {"kink", "imprecise", "nonfinite", "pass"}
    assert trace("gradcheck capped")["gradcheck"]["capped"] is True
    assert trace("fallback layout, 1,500 nodes")["layout"]["engine"] == "sugiyama"
    assert trace("a late custom order")["order_check"]["valid"] is False
    assert {w["type"] for w in trace("warnings")["warnings"]} == {
        "unused",
        "alias",
        "unknown_value",
    }
    assert {w["type"] for w in trace("a late custom order")["warnings"]} == {"late"}
    expanded, derived = trace("expand_derived")["nodes"], trace("derived ops")["nodes"]
    assert not any(node["derived"] for node in expanded)
    assert {node["op"] for node in derived if node["derived"]} == {"-", "neg", "/"}
    assert all(node["expansion"] for node in derived if node["derived"])
    kinds = {
        warning["type"]
        for case in ("0/0", "(-8)**(1/3)", "overflow")
        for node in trace(case)["nodes"]
        for warning in node["warnings"]
    }
    assert kinds == {"division_by_zero", "domain", "overflow"}


def test_a_fallback_layout_by_setting_matches_the_schema(make_client, contract):
    client = make_client(dot_max_nodes=2)
    response = client.post("/api/graph", json={"source": "a = 2\nb = 3\n(a + b) * a"})
    assert contract.check(response, "/api/graph")["layout"]["engine"] == "sugiyama"


# Every error status, with the one error shape.

ERROR_BODIES = [
    ("program error", {"source": "a +"}, 400, "SyntaxError"),
    ("unknown function", {"source": "foo(2)"}, 400, "UnknownFunction"),
    ("bad order", {"source": "a", "order": ["n9"]}, 400, "BadOrder"),
    ("unknown target", {"source": "a * 2", "target": "b"}, 400, "BadTarget"),
    ("constant target", {"source": "a * 2", "target": "n1"}, 400, "BadTarget"),
    ("empty program", {"source": ""}, 400, "SyntaxError"),
    ("malformed field", {"source": 5}, 422, "InvalidRequest"),
    ("unknown field", {"source": "a", "x": 1}, 422, "InvalidRequest"),
]


@pytest.mark.parametrize("path", ["/api/graph", "/api/export?format=dot"])
@pytest.mark.parametrize(
    "body, status, type_", [c[1:] for c in ERROR_BODIES], ids=[c[0] for c in ERROR_BODIES]
)
def test_error_answers_match_the_schema(client, contract, path, body, status, type_):
    response = client.post(path, json=body)
    assert response.status_code == status
    assert contract.check(response, path.split("?")[0])["error"]["type"] == type_


MALFORMED = [
    b'{"source": "a", "values": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
    b'{"source": "a", "values": {"a": ' + b"9" * 5_000 + b"}}",
    b'{"source": "a", "values": {"a": NaN}}',
    b'{"source": "a\xff"}',
    b"",
    b"[]",
]


@pytest.mark.parametrize(
    "path",
    [
        "/api/graph",
        "/api/values",
        "/api/descend",
        "/api/landscape",
        "/api/paths",
        "/api/export?format=dot",
    ],  # fmt: skip
)
@pytest.mark.parametrize(
    "body", MALFORMED, ids=["deep", "digits", "NaN", "utf-8", "empty", "array"]
)
def test_malformed_body_answers_match_the_schema(client, contract, path, body):
    response = client.post(path, content=body, headers=JSON)
    assert response.status_code == 422
    assert contract.check(response, path.split("?")[0])["error"]["type"] == "InvalidRequest"


PATHS_BODIES = [
    ({"source": "a = 2\nb = a + 1\nc = a * 3\nd = b * c", "leaf": "a"}, 200, None),
    (
        {
            "source": "x0 = 0.5\n"
            + "\n".join(f"x{k + 1} = x{k} * x{k} + x{k}" for k in range(250)),
            "leaf": "x0",
            "limit": 3,
        },
        200,
        None,
    ),
    ({"source": "a = 2\nb = a + 1\nc = a * 3\nd = b * c", "leaf": "a", "target": "c"}, 200, None),
    ({"source": "a * 2", "leaf": "q"}, 400, "BadLeaf"),
    ({"source": "a * 2", "leaf": "n1"}, 400, "BadLeaf"),
    ({"source": "a * 2", "leaf": "a", "target": "z"}, 400, "BadTarget"),
    ({"source": "a * 2", "leaf": "a", "limit": 101}, 422, "InvalidRequest"),
    ({"source": "a * 2", "leaf": ""}, 422, "InvalidRequest"),
    ({"source": "a * 2"}, 422, "InvalidRequest"),
]


@pytest.mark.parametrize("body, status, type_", PATHS_BODIES)
def test_paths_answers_match_the_schema(client, contract, body, status, type_):
    response = client.post("/api/paths", json=body)
    assert response.status_code == status
    checked = contract.check(response, "/api/paths")
    if type_ is not None:
        assert checked["error"]["type"] == type_


def test_a_bad_export_format_is_a_documented_422(client, contract):
    response = client.post("/api/export?format=gif", json={"source": "a"})
    assert response.status_code == 422
    contract.check(response, "/api/export")


@pytest.mark.parametrize("path", ["/api/graph", "/api/export"])
def test_413_matches_the_schema(make_client, contract, path):
    client = make_client(max_body_bytes=100)
    response = client.post(path, json={"source": "a" * 200})
    assert response.status_code == 413
    assert contract.check(response, path)["error"]["type"] == "BodyTooLarge"


@pytest.mark.parametrize(
    "method, path, body",
    [
        ("post", "/api/graph", {"source": "a"}),
        ("post", "/api/export", {"source": "a"}),
        ("get", "/api/presets", None),
    ],
)
def test_429_matches_the_schema(make_client, contract, method, path, body):
    client = make_client(rate_limit_per_minute=1)

    def send() -> Any:
        if method == "get":
            return client.get(path)
        return client.post(f"{path}?format=dot", json=body)

    assert send().status_code == 200
    response = send()
    assert response.status_code == 429
    assert contract.check(response, path, method)["error"]["type"] == "RateLimited"


def test_503_of_graph_matches_the_schema(client, contract):
    """The offload process dies twice in a row (a broken pool): 503 Unavailable."""

    class BrokenPool:
        def submit(self, *args: Any, **kwargs: Any) -> Any:
            raise BrokenProcessPool("killed")

        def shutdown(self, *args: Any, **kwargs: Any) -> None:
            pass

    for lane in client.app.state.server.offload.lanes.values():
        lane.executor = BrokenPool
    response = client.post("/api/graph", json={"source": chain(300)})
    assert response.status_code == 503
    assert contract.check(response, "/api/graph")["error"]["type"] == "Unavailable"


def test_503_of_export_matches_the_schema(make_client, contract):
    """Without Graphviz (the setting names a dot that is not there) svg is refused: 503."""
    client = make_client(dot_binary="/nonexistent/dot")
    response = client.post("/api/export?format=svg", json={"source": "a"})
    assert response.status_code == 503
    assert contract.check(response, "/api/export")["error"]["type"] == "GraphvizUnavailable"


def test_export_too_large_is_a_documented_400(make_client, contract):
    client = make_client(export_max_nodes=1)
    response = client.post("/api/export?format=dot", json={"source": "a * b"})
    assert response.status_code == 400
    assert contract.check(response, "/api/export")["error"]["type"] == "ExportTooLarge"


# The other routes.


def test_presets_answer_matches_the_schema(client, contract):
    presets = contract.check(client.get("/api/presets"), "/api/presets", "get")
    assert [preset["id"] for preset in presets] == PRESET_IDS + [
        preset["id"] for preset in engine.TENSOR_PRESETS
    ]


def test_lessons_answer_matches_the_schema(client, contract):
    lessons = contract.check(client.get("/api/lessons"), "/api/lessons", "get")
    assert {"chain-rule", "diamond", "topo-sort"} <= {lesson["id"] for lesson in lessons}


def test_healthz_answer_matches_the_schema(client, contract):
    contract.check(client.get("/healthz"), "/healthz", "get")


@pytest.mark.parametrize("fmt", ["svg", "png", "pdf", "dot", "html"])
def test_export_content_types_are_the_documented_ones(client, contract, fmt):
    if fmt not in ("dot", "html") and not client.app.state.server.dot_binary:
        pytest.skip("Graphviz is not installed")
    response = client.post(f"/api/export?format={fmt}", json={"source": "a = 2\nb = 3\na * b"})
    assert response.status_code == 200
    documented = contract.response("/api/export", "post", 200)["content"]
    assert response.headers["content-type"] in documented
    assert response.content


# The outside fuzzer: schemathesis against the live server's schema.


def test_schemathesis_finds_no_5xx_and_no_schema_violation(live_server):
    """Bounded (SCHEMATHESIS_EXAMPLES per operation, derandomized): no 5xx, every status
    documented, every body and content type as the schema says, on a real uvicorn server."""
    import schemathesis
    from hypothesis import HealthCheck, Phase, given, settings
    from schemathesis.checks import not_a_server_error
    from schemathesis.specs.openapi.checks import (
        content_type_conformance,
        response_schema_conformance,
        status_code_conformance,
    )

    schema = schemathesis.openapi.from_url(f"{live_server}/openapi.json")
    checks = [
        not_a_server_error,
        status_code_conformance,
        content_type_conformance,
        response_schema_conformance,
    ]
    tested = []
    failures = []
    for result in schema.get_all_operations():
        operation = result.ok()
        tested.append(operation.label)

        @given(case=operation.as_strategy())
        @settings(
            max_examples=SCHEMATHESIS_EXAMPLES,
            deadline=None,
            derandomize=True,
            database=None,
            phases=[Phase.explicit, Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
        def run(case: Any) -> None:
            case.call_and_validate(checks=checks, timeout=30)

        try:
            run()
        except Exception as error:  # report every operation's failure at once
            failures.append(f"{operation.label}: {error}")
    assert sorted(tested) == [
        "GET /api/class/{code}",
        "GET /api/lessons",
        "GET /api/presets",
        "GET /healthz",
        "POST /api/class",
        "POST /api/descend",
        "POST /api/expand",
        "POST /api/export",
        "POST /api/fan-in",
        "POST /api/graph",
        "POST /api/landscape",
        "POST /api/paths",
        "POST /api/tensor-graph",
        "POST /api/values",
    ]
    assert not failures, "\n\n".join(failures)


# Issue 36: what schemathesis found valid by the schema and refused by the server. Each body is
# now invalid by the served schema, and the server refuses it (its 400 says what to change).
FINDINGS = [
    ("/api/graph", "GraphRequest", {"source": "a * b", "wrt": ""}, 400, "BadWrt"),
    ("/api/landscape", "LandscapeRequest",
     {"source": "L = w * b", "parameters": ["w", "b"], "x_range": [0.0, 1.0], "y_range": [0.0],
      "points": 5}, 400, "BadLandscape"),
    ("/api/landscape", "LandscapeRequest",
     {"source": "L = w * b", "parameters": [""], "x_range": [0.0, 1.0], "y_range": [0.0, 1.0],
      "points": 5}, 400, "BadLandscape"),
    ("/api/descend", "DescendRequest",
     {"source": "L = w * b", "parameters": [""], "lr": 0.1, "steps": 1}, 400, "BadTraining"),
]  # fmt: skip


@pytest.mark.parametrize(("path", "model", "body", "status", "type_"), FINDINGS)
def test_the_schema_refuses_what_the_server_refuses(
    client, contract, path, model, body, status, type_
):
    schema = _rebase_refs({"$ref": f"#/components/schemas/{model}"})
    assert not Draft202012Validator(schema, registry=contract.registry).is_valid(body)
    response = client.post(path, json=body)
    assert response.status_code == status
    assert contract.check(response, path)["error"]["type"] == type_


def test_a_views_step_is_an_integer_as_the_schema_says(client, contract):
    """`view.step: 847.0` was taken as 847 where the schema says integer: a 422 now."""
    schema = contract.spec["components"]["schemas"]["View"]["properties"]["step"]
    assert schema["type"] == "integer"
    response = client.post("/api/class", json={"view": {"source": "a * b", "step": 847.0}})
    assert response.status_code == 422
    assert contract.check(response, "/api/class")["error"]["type"] == "InvalidRequest"
    assert (
        client.post("/api/class", json={"view": {"source": "a * b", "step": 847}}).status_code
        == 200
    )
