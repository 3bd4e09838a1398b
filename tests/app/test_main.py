"""app/main.py and app/http/middleware.py: security headers everywhere, one error shape, body
limit."""

from __future__ import annotations

import pytest

from chainrule.app.http.middleware import CONTENT_SECURITY_POLICY

SECURITY_HEADERS = {
    "content-security-policy": CONTENT_SECURITY_POLICY,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
}
NO_POSITION = {
    "line": None,
    "column": None,
    "end_line": None,
    "end_column": None,
    "snippet": "",
    "caret": "",
}


def assert_secure(response) -> None:
    for name, value in SECURITY_HEADERS.items():
        assert response.headers[name] == value, name


def test_the_csp_forbids_inline_script_and_framing():
    assert "default-src 'self'" in CONTENT_SECURITY_POLICY
    assert "frame-ancestors 'none'" in CONTENT_SECURITY_POLICY
    assert "unsafe-inline" not in CONTENT_SECURITY_POLICY


@pytest.mark.parametrize(
    ("method", "path", "body", "status"),
    [
        ("GET", "/", None, 200),
        ("GET", "/docs", None, 200),
        ("GET", "/openapi.json", None, 200),
        ("GET", "/healthz", None, 200),
        ("GET", "/api/presets", None, 200),
        ("POST", "/api/graph", {"source": "a*b"}, 200),
        ("POST", "/api/graph", {"source": "a*"}, 400),
        ("POST", "/api/graph", {"source": 1}, 422),
        ("GET", "/nope", None, 404),
        ("DELETE", "/api/graph", None, 405),
        ("GET", "/static/vendor/swagger-ui/init.js", None, 200),
    ],
)
def test_security_headers_on_every_kind_of_response(client, method, path, body, status):
    response = client.request(method, path, json=body)
    assert response.status_code == status
    assert_secure(response)


def test_unknown_routes_are_404_in_our_shape(client):
    response = client.get("/api/nope")
    assert response.status_code == 404
    assert response.json() == {
        "error": {"type": "NotFound", "message": "no such page or endpoint: GET /api/nope"}
        | NO_POSITION
    }


def test_a_wrong_method_is_405_in_our_shape(client):
    response = client.get("/api/graph")
    assert response.status_code == 405
    assert response.headers["allow"] == "POST"
    assert response.json() == {
        "error": {"type": "MethodNotAllowed", "message": "method GET is not allowed on /api/graph"}
        | NO_POSITION
    }


def test_a_body_over_the_limit_is_413_before_parsing(client):
    body = b'{"source": "' + b"a" * (1_048_576 - 13) + b'"}'
    assert len(body) == 1_048_577
    response = client.post("/api/graph", content=body, headers={"content-type": "application/json"})
    assert response.status_code == 413
    assert response.json() == {
        "error": {
            "type": "BodyTooLarge",
            "message": "request body is 1,048,577 bytes; the limit is 1,048,576",
        }
        | NO_POSITION
    }
    assert_secure(response)


def test_a_body_at_the_limit_is_parsed(make_client):
    client = make_client(max_body_bytes=100)
    body = b'{"source": "' + b"a" * 86 + b'"}'
    assert len(body) == 100
    response = client.post("/api/graph", content=body, headers={"content-type": "application/json"})
    assert response.status_code == 200


def test_a_streamed_body_over_the_limit_is_413(make_client):
    client = make_client(max_body_bytes=100)

    def chunks():
        yield b'{"source": "'
        for _ in range(10):
            yield b"a" * 20
        yield b'"}'

    response = client.post(
        "/api/graph", content=chunks(), headers={"content-type": "application/json"}
    )
    assert "content-length" not in response.request.headers
    assert response.status_code == 413
    assert (
        response.json()["error"]
        == {
            "type": "BodyTooLarge",
            "message": "request body is more than 100 bytes; the limit is 100",
        }
        | NO_POSITION
    )


def test_an_unexpected_exception_is_a_500_without_traceback(make_client, monkeypatch):
    client = make_client()
    from chainrule.app.api import graph as graph_route

    def explode(*_args, **_kwargs):
        raise RuntimeError("secret internals")

    monkeypatch.setattr(graph_route, "build_body", explode)
    response = client.post("/api/graph", json={"source": "a"})
    assert response.status_code == 500
    assert response.json() == {
        "error": {"type": "InternalError", "message": "internal server error"} | NO_POSITION
    }
    assert "secret" not in response.text
    assert_secure(response)


def test_the_docs_page_uses_only_local_assets_and_no_inline_script(client):
    html = client.get("/docs").text
    swagger = f"/static/{client.app.state.asset_version}/vendor/swagger-ui"
    assert f'<script src="{swagger}/swagger-ui-bundle.js">' in html
    assert f'<script src="{swagger}/init.js">' in html
    assert "cdn" not in html and "http" not in html
    assert "<script>" not in html and "style=" not in html
    for asset in ("swagger-ui-bundle.js", "swagger-ui.css", "init.js", "LICENSE"):
        assert client.get(f"{swagger}/{asset}").status_code == 200


def test_the_openapi_schema_describes_the_api(client):
    schema = client.get("/openapi.json").json()
    assert set(schema["paths"]) == {
        "/api/graph", "/api/values", "/api/descend", "/api/export", "/api/presets",
        "/api/lessons", "/api/paths", "/api/class", "/api/class/{code}", "/healthz",
        "/api/landscape", "/api/fan-in", "/api/expand", "/api/tensor-graph",
    }  # fmt: skip
    graph = schema["paths"]["/api/graph"]["post"]
    # A scalar program's reply, or a tensor program's (docs/api.md, "Tensor programs").
    replies = graph["responses"]["200"]["content"]["application/json"]["schema"]["anyOf"]
    assert [reply["$ref"].rsplit("/", 1)[-1] for reply in replies] == [
        "GraphResponse",
        "TensorGraphResponse",
    ]
    assert {"400", "413", "422"} <= set(graph["responses"])


def test_no_cors_headers(client):
    response = client.post(
        "/api/graph", json={"source": "a"}, headers={"origin": "https://evil.example"}
    )
    assert "access-control-allow-origin" not in response.headers


def test_settings_can_be_overridden_through_the_dependency(client):
    from chainrule.app.http.settings_dependency import app_settings
    from chainrule.app.settings import AppSettings

    client.app.dependency_overrides[app_settings] = lambda: AppSettings(max_source_tokens=2)
    response = client.post("/api/graph", json={"source": "a + b"})
    assert response.status_code == 400
    assert response.json()["error"]["type"] == "LimitExceeded"


def test_settings_come_from_chainrule_environment_variables(monkeypatch):
    from chainrule.app.settings import AppSettings

    monkeypatch.setenv("CHAINRULE_MAX_NODES", "123")
    monkeypatch.setenv("CHAINRULE_DOT_TIMEOUT_S", "0.5")
    settings = AppSettings()
    assert (settings.max_nodes, settings.dot_timeout_s) == (123, 0.5)
