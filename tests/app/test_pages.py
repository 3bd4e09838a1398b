"""app/pages.py: the page at / with ?preset=, and static files."""

from __future__ import annotations

import engine


def test_the_page_opens_on_the_first_preset(client):
    response = client.get("/")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    assert f'data-preset-id="{engine.PRESETS[0]["id"]}"' in response.text


def test_a_preset_in_the_url_opens_that_preset(client):
    preset = engine.PRESETS[2]["id"]
    assert f'data-preset-id="{preset}"' in client.get(f"/?preset={preset}").text


def test_an_unknown_preset_opens_the_first(client):
    response = client.get('/?preset="><script>alert(1)</script>')
    assert response.status_code == 200
    assert "<script>alert" not in response.text
    assert f'data-preset-id="{engine.PRESETS[0]["id"]}"' in response.text


def test_static_urls_carry_the_asset_version(client):
    version = client.app.state.asset_version
    assert len(version) == 10
    assert f"?v={version}" in client.get("/").text


def test_static_files_are_served(client):
    response = client.get("/static/vendor/swagger-ui/swagger-ui.css")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/css")
    assert client.get("/static/nope.js").status_code == 404
