"""GET /api/presets and GET /healthz."""

from __future__ import annotations

from chainrule import engine


def test_presets_are_the_engines(client):
    response = client.get("/api/presets")
    assert response.status_code == 200
    assert response.json() == engine.PRESETS + engine.TENSOR_PRESETS
    first = response.json()[0]
    assert set(first) == {"id", "title", "source", "values", "note"}


def test_healthz_reports_graphviz(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert body["graphviz"] is True
    assert body["graphviz_version"].split(".")[0].isdigit()
