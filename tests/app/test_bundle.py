"""static/embed/ (the embeddable player's bundle, app/build/bundle.py) is built from the sources as
they
are: each file's stamp is the sha256 of today's sources. No esbuild needed to check it."""

from __future__ import annotations

import re
import shutil

from chainrule.app.build import bundle

STALE = "static/embed is stale: run make bundle"


def test_the_bundle_is_built_from_the_sources_as_they_are():
    current = bundle.digest()
    for path in (bundle.BUNDLE_JS, bundle.BUNDLE_CSS):
        assert bundle.stamped_digest(path) == current, f"{path.name}: {STALE}"


def test_the_sources_are_the_players_modules_and_styles():
    names = {path.relative_to(bundle.ROOT).as_posix() for path in bundle.sources()}
    assert {
        "static/js/embed.js",
        "static/js/graph/view.js",
        "static/js/core/player.js",
        "static/js/controls/transport.js",
        "static/js/core/keys.js",
        "static/js/controls/explain-view.js",
        "static/js/controls/trace-tables.js",
        "static/js/controls/grad-table.js",
        "static/js/controls/sliders.js",
        "static/js/core/store.js",
        "static/js/compute/ops.js",
        # The features the page has and that need no server (features.js): the marks, the
        # minimap, follow, the predict lab, and the Train lab with the page's own descent.
        "static/js/features.js",
        "static/js/graph/marks.js",
        "static/js/gradients/gradmap.js",
        "static/js/graph/minimap.js",
        "static/js/graph/follow.js",
        "static/js/labs/panel.js",
        "static/js/labs/predict.js",
        "static/js/train/lab.js",
        "static/js/train/descend.js",
        "static/css/embed.css",
        "static/css/app.css",
        "static/css/classroom.css",
        "static/css/real-size.css",
        "static/css/labs.css",
    } <= names
    # The page's shell (server calls, the lessons, the labs that need the server, the 3D view
    # and three.js) stays out of the player.
    assert not names & {
        "static/js/main.js",
        "static/js/core/api.js",
        "static/js/lessons/panel.js",
        "static/js/labs/order.js",
        "static/js/labs/overwrite.js",
        "static/js/view-3d/view.js",
    }


def copy_sources(tmp_path, monkeypatch):
    """The bundle's sources and built CSS copied under tmp_path; app/build/bundle.py looks there."""
    root = tmp_path / "chainrule"
    for path in [*bundle.sources(), bundle.BUNDLE_CSS]:
        target = root / path.relative_to(bundle.ROOT)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    static = root / "static"
    monkeypatch.setattr(bundle, "ROOT", root)
    monkeypatch.setattr(bundle, "JS_ENTRY", static / "js" / "embed.js")
    monkeypatch.setattr(bundle, "CSS_ENTRY", static / "css" / "embed.css")
    monkeypatch.setattr(bundle, "BUNDLE_CSS", static / "embed" / "chainrule-embed.css")
    return static


def test_any_change_to_a_source_or_to_the_pinned_esbuild_changes_the_digest(tmp_path, monkeypatch):
    before = bundle.digest()
    static = copy_sources(tmp_path, monkeypatch)
    assert bundle.digest() == before  # the same bytes under another root
    for name in ("js/core/frames.js", "css/classroom.css"):
        path = static / name
        original = path.read_bytes()
        path.write_bytes(original + b"\n")
        assert bundle.digest() != before, name
        path.write_bytes(original)
    assert bundle.digest() == before
    monkeypatch.setattr(bundle, "ESBUILD_VERSION", "0.0.1")
    assert bundle.digest() != before


def test_a_module_newly_imported_joins_the_sources(tmp_path, monkeypatch):
    static = copy_sources(tmp_path, monkeypatch)
    (static / "js" / "extra.js").write_text("export const extra = 1;\n")
    before = set(bundle.sources())
    timeline = static / "js" / "core" / "frames.js"
    timeline.write_text('import { extra } from "../extra.js";\n' + timeline.read_text())
    assert set(bundle.sources()) == before | {(static / "js" / "extra.js").resolve()}


def test_the_bundle_is_one_es_module_exporting_the_player_and_the_widget():
    text = bundle.BUNDLE_JS.read_text()
    assert text.startswith(bundle.banner())
    assert "mountPlayer" in text.rsplit("export{", 1)[1]
    assert " as default" in text.rsplit("export{", 1)[1]
    assert not re.search(r"\bimport\s*(?:[{(*\"']|\w+\s*from)", text), "nothing left to fetch"


def test_the_op_functions_module_is_the_op_tables():
    """static/js/compute/op-functions.js (the page's evaluator runs it) is engine/ops.py's
    javascript_module as it is today: a row changed since `make bundle` fails here."""
    from chainrule.engine.ops import javascript_module

    written = bundle.OP_FUNCTIONS.read_text(encoding="utf-8")
    assert written == javascript_module(), (
        "static/js/compute/op-functions.js is stale: run make bundle"
    )
