"""The page's words (the `ui.*` keys of locales/*.json, static/js/core/i18n.js): every key the
page's
sources name is in the catalogue, and the catalogue has no key that nothing names. Keys are
written whole, as string literals (`t("ui.transport.play")`, `WORDS = {alias: "ui.notes.alias"}`),
in the modules, the page's template and the Python that fills it; tests/engine/test_i18n.py
checks that every language has them with the same placeholders."""

from __future__ import annotations

import re
from pathlib import Path

from chainrule.app.http.pages import ROOT, STATIC_DIR, TEMPLATES_DIR, ui_catalogue
from chainrule.engine.i18n import LANGS, catalogue

KEY = re.compile(r"""["'](ui\.[a-z0-9_-]+(?:\.[a-z0-9_-]+)+)["']""")
# A call of core/i18n.js's t() whose key is not a literal is fine when the key comes from a table of
# literals (`t(WORDS[type])`); a key built from pieces (`t(`ui.${name}`)`) would hide from this
# test, so none is.
BUILT_KEY = re.compile(r"""\bt\(\s*`""")


def sources() -> list[Path]:
    """The files that name the page's words: its modules (not the built bundle), its template
    and the Python that fills the template."""
    return [
        *sorted((STATIC_DIR / "js").rglob("*.js")),
        *sorted(TEMPLATES_DIR.glob("*.html")),
        *sorted((ROOT / "app").rglob("*.py")),
    ]


def keys_named() -> dict[str, list[str]]:
    named: dict[str, list[str]] = {}
    for path in sources():
        for key in KEY.findall(path.read_text(encoding="utf-8")):
            named.setdefault(key, []).append(path.name)
    return named


def test_every_key_the_page_names_is_in_the_catalogue():
    english = catalogue("en")
    missing = {key: files for key, files in keys_named().items() if key not in english}
    assert missing == {}


def test_every_key_of_the_catalogue_is_named_by_the_page():
    ui_keys = {key for key in catalogue("en") if key.startswith("ui.")}
    assert len(ui_keys) > 200
    assert ui_keys - set(keys_named()) == set()


def test_no_key_is_built_from_pieces():
    for path in sources():
        assert not BUILT_KEY.search(path.read_text(encoding="utf-8")), path.name


def test_the_page_catalogue_is_the_ui_keys_of_one_language():
    for lang in LANGS:
        ui = ui_catalogue(lang)
        assert ui["lang"] == lang
        assert ui["text"] == {
            key.removeprefix("ui."): value
            for key, value in catalogue(lang).items()
            if key.startswith("ui.")
        }


# The engine's sentences the page writes itself (engine/i18n.py PAGE_SENTENCES):
# `t("descent.…")`.
SENTENCE_KEY = re.compile(r"""\bt\(\s*["'](descent\.[a-z0-9_]+)["']""")


def test_the_engines_sentences_the_page_writes_are_in_its_catalogue_and_no_other():
    named = {
        key for path in sources() for key in SENTENCE_KEY.findall(path.read_text(encoding="utf-8"))
    }
    descent = {key for key in catalogue("en") if key.startswith("descent.")}
    assert named == descent  # static/js/train/descend.js says every one of engine/descend.py's
    for lang in LANGS:
        assert ui_catalogue(lang)["sentences"] == {key: catalogue(lang)[key] for key in descent}


def test_the_links_know_the_languages_of_the_catalogues():
    links = (STATIC_DIR / "js" / "core" / "links.js").read_text(encoding="utf-8")
    listed = re.search(r"const LANGS = \[([^\]]*)\];", links)
    assert listed and re.findall(r'"([a-z]+)"', listed.group(1)) == list(LANGS)
