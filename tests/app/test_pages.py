"""app/http/pages.py: the page at / with ?preset=, and static files under a versioned path."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from urllib.parse import urljoin

import pytest

from chainrule import engine
from chainrule.app.http import pages
from chainrule.app.http.pages import IMMUTABLE, STATIC_DIR, asset_version, ui_catalogue
from chainrule.engine.i18n import text

# `import x from "./x.js"`, `import "./x.js"`, `export … from "./x.js"`, `import("./x.js")`.
MODULE_SPECIFIER = re.compile(r"""(?:\bimport\s*\(\s*|\bimport\s+|\bfrom\s+)(["'])([^"']+)\1""")


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


def test_an_unknown_preset_in_the_url_names_the_first_preset(client):
    response = client.get("/?preset=no-such-preset")
    assert response.status_code == 200
    assert f'data-preset-id="{engine.PRESETS[0]["id"]}"' in response.text
    assert "no-such-preset" not in response.text


class PageWords(HTMLParser):
    """A page's `<html lang>`, title, `#ui-text` data block and language menu."""

    def __init__(self) -> None:
        super().__init__()
        self.lang: str | None = None
        self.title = ""
        self.ui_text = ""
        # The language menu's options: (value, lang, selected, text).
        self.menu: list[tuple[str | None, str | None, bool, str]] = []
        self._in: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        if tag == "html":
            self.lang = attributes.get("lang")
        elif tag == "title" or (tag == "script" and attributes.get("id") == "ui-text"):
            self._in = tag
        elif tag == "select" and attributes.get("id") == "lang":
            self._in = "menu"
        elif tag == "option" and self._in == "menu":
            selected = "selected" in attributes
            self.menu.append((attributes["value"], attributes["lang"], selected, ""))

    def handle_endtag(self, tag: str) -> None:
        if tag in ("title", "script", "select"):
            self._in = None

    def handle_data(self, data: str) -> None:
        if self._in == "title":
            self.title += data
        elif self._in == "script":
            self.ui_text += data
        elif self._in == "menu" and self.menu and data.strip():
            value, lang, selected, _ = self.menu[-1]
            self.menu[-1] = (value, lang, selected, data.strip())


def page_words(html: str) -> PageWords:
    parser = PageWords()
    parser.feed(html)
    return parser


@pytest.mark.parametrize(
    ("query", "accept_language", "lang"),
    [
        ("", None, "en"),
        ("?lang=ru", None, "ru"),
        ("?lang=et", "ru", "et"),  # the query wins over the header
        ("", "ru-RU,ru;q=0.9,en;q=0.8", "ru"),
        ("", "de-DE, et;q=0.5", "et"),
        ("?lang=xx", "et", "et"),  # a page is not refused for an unknown language
        ("?lang=xx", None, "en"),
        ("", "de-DE", "en"),
    ],
)
def test_the_page_speaks_the_language_of_the_query_else_of_the_header_else_english(
    client, query, accept_language, lang
):
    headers = {"accept-language": accept_language} if accept_language else {}
    response = client.get(f"/{query}", headers=headers)
    assert response.status_code == 200
    assert "Accept-Language" in response.headers["vary"]
    words = page_words(response.text)
    assert words.lang == lang
    assert words.title == text(lang, "ui.page.title")
    assert json.loads(words.ui_text) == ui_catalogue(lang)
    # The menu names every language in itself, the page's selected.
    assert words.menu == [
        (code, code, code == lang, text(code, "ui.language.name")) for code in ("en", "ru", "et")
    ]
    assert f'aria-label="{text(lang, "ui.transport.back")}"' in response.text


def test_no_word_can_close_the_data_block(monkeypatch):
    words = {"lang": "en", "text": {"x": "</script><script>alert(1)</script>"}}
    monkeypatch.setattr(pages, "ui_catalogue", lambda lang: words)
    pages.ui_catalogue_json.cache_clear()
    try:
        block = pages.ui_catalogue_json("en")
    finally:
        pages.ui_catalogue_json.cache_clear()
    assert "<" not in block and json.loads(block) == words


class AssetLinks(HTMLParser):
    """Every `<link href>` and `<script src>` of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        url = attributes.get("href") if tag == "link" else attributes.get("src")
        if tag in ("link", "script") and url:
            self.urls.append(url)


def asset_urls(html: str) -> list[str]:
    parser = AssetLinks()
    parser.feed(html)
    return parser.urls


def test_the_version_is_a_hash_of_the_static_files_contents(tmp_path):
    (tmp_path / "js").mkdir()
    (tmp_path / "js" / "main.js").write_text('import "./a.js";\n')
    first = asset_version(tmp_path)
    assert re.fullmatch(r"[0-9a-f]{10}", first)
    (tmp_path / "js" / "main.js").write_text('import "./a.js";\n')  # new time, same bytes
    assert asset_version(tmp_path) == first
    (tmp_path / "js" / "main.js").write_text('import "./b.js";\n')
    assert asset_version(tmp_path) != first


def test_every_asset_of_the_page_is_under_the_versioned_prefix_and_immutable(client):
    prefix = f"/static/{client.app.state.asset_version}/"
    urls = asset_urls(client.get("/").text)
    assert urls == [
        f"{prefix}css/app.css",
        f"{prefix}css/labs.css",
        f"{prefix}css/classroom.css",
        f"{prefix}css/lessons.css",
        f"{prefix}css/groups.css",
        f"{prefix}css/view-3d.css",
        f"{prefix}css/real-size.css",
        f"{prefix}css/depth.css",
        f"{prefix}css/live-class.css",
        f"{prefix}css/sandbox.css",
        f"{prefix}css/tensor.css",
        f"{prefix}favicon.svg",
        f"{prefix}js/main.js",
    ]
    for url in urls:
        response = client.get(url)
        assert response.status_code == 200, url
        assert response.headers["cache-control"] == IMMUTABLE, url


def test_every_module_main_js_imports_is_served_under_the_versioned_prefix(client):
    prefix = f"/static/{client.app.state.asset_version}/"
    main = f"{prefix}js/main.js"
    seen: set[str] = set()
    pending = [main]
    while pending:
        url = pending.pop()
        if url in seen:
            continue
        seen.add(url)
        response = client.get(url)
        assert response.status_code == 200, url
        assert response.headers["content-type"].startswith("text/javascript"), url
        assert response.headers["cache-control"] == IMMUTABLE, url
        for _quote, specifier in MODULE_SPECIFIER.findall(response.text):
            # Only relative specifiers inherit the version of the module that imports them.
            assert specifier.startswith(("./", "../")), (url, specifier)
            resolved = urljoin(url, specifier)
            assert resolved.startswith(prefix), (url, specifier)
            pending.append(resolved)
    names = {url.removeprefix(prefix) for url in seen}
    assert {"js/main.js", "js/core/store.js", "js/core/api.js"} <= names
    assert len(names) >= 20  # the whole module graph, not main.js alone


def test_no_static_file_names_an_unversioned_static_url():
    # An absolute /static/ URL inside a module or a stylesheet would escape the version.
    for path in [*STATIC_DIR.glob("js/*.js"), *STATIC_DIR.glob("css/*.css")]:
        assert "/static/" not in path.read_text(), path


def test_a_versioned_file_revalidated_by_etag_keeps_its_caching(client):
    url = f"/static/{client.app.state.asset_version}/js/main.js"
    etag = client.get(url).headers["etag"]
    response = client.get(url, headers={"if-none-match": etag})
    assert response.status_code == 304
    assert response.headers["cache-control"] == IMMUTABLE


@pytest.mark.parametrize(
    ("path", "cache_control"),
    [
        ("/", "no-cache"),
        ("/?preset=nope", "no-cache"),
        ("/docs", "no-cache"),
        ("/openapi.json", "no-cache"),
        ("/static/js/main.js", "no-cache"),  # unversioned: revalidated
        ("/static/0000000000/js/main.js", "no-cache"),  # another deploy's version: a 404
        ("/api/presets", "no-store"),
        ("/healthz", "no-store"),
        ("/api/nope", "no-store"),
    ],
)
def test_pages_and_unversioned_files_are_revalidated_and_api_answers_never_stored(
    client, path, cache_control
):
    assert client.get(path).headers["cache-control"] == cache_control


def test_api_errors_are_never_stored(make_client):
    client = make_client(max_body_bytes=100, rate_limit_per_minute=2)
    assert client.post("/api/graph", json={"source": "a +"}).headers["cache-control"] == "no-store"
    too_big = client.post("/api/graph", content=b"x" * 101)
    assert (too_big.status_code, too_big.headers["cache-control"]) == (413, "no-store")
    limited = client.post("/api/graph", json={"source": "a"})
    assert (limited.status_code, limited.headers["cache-control"]) == (429, "no-store")


def test_behind_a_root_path_every_asset_url_carries_it(make_client):
    from starlette.testclient import TestClient as AppClient

    app = make_client().app
    with AppClient(app, root_path="/chainrule") as client:
        page = client.get("/chainrule/")
        docs = client.get("/chainrule/docs")
        prefix = f"/chainrule/static/{app.state.asset_version}/"
        urls = asset_urls(page.text) + asset_urls(docs.text)
        assert urls and all(url.startswith(prefix) for url in urls), urls
        assert 'data-openapi-url="/chainrule/openapi.json"' in docs.text
        for url in urls:
            assert client.get(url).status_code == 200, url


def test_static_files_are_served(client):
    response = client.get("/static/vendor/swagger-ui/swagger-ui.css")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/css")
    assert client.get("/static/nope.js").status_code == 404
