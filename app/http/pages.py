"""The HTML pages (the app at `/`, the API documentation at `/docs`) and their static files."""

from __future__ import annotations

import hashlib
import json
from functools import cache, partial
from html import escape
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates
from starlette.responses import Response
from starlette.types import Scope

from chainrule import engine
from chainrule.app.api.language import lang_of
from chainrule.app.http.precompressed import PrecompressedStaticFiles
from chainrule.engine.i18n import LANGS, text, ui_catalogue
from chainrule.engine.ops import page_table
from chainrule.engine.reply import REPLY_BYTES_PER_NODE

router = APIRouter(include_in_schema=False)

# templates/ and static/ are package data beside app/: chainrule/templates in an installed package,
# the repository's top-level folders in a checkout (the repository's root is the package).
ROOT = Path(__file__).resolve().parents[2]
STATIC_DIR = ROOT / "static"
TEMPLATES_DIR = ROOT / "templates"
# What a versioned URL may be kept for: it names one content for good.
IMMUTABLE = "public, max-age=31536000, immutable"
# The table of operations as the page reads it (static/js/compute/ops.js), embedded in the page as
# a JSON
# data block; `<` is escaped so nothing in it can close the block.
OP_TABLE_JSON = json.dumps(page_table(), ensure_ascii=False).replace("<", "\\u003c")


@cache
def ui_catalogue_json(lang: str) -> str:
    """`ui_catalogue(lang)` as the text of the page's JSON data block (`<` escaped)."""
    return json.dumps(ui_catalogue(lang), ensure_ascii=False).replace("<", "\\u003c")


def language_menu(lang: str) -> list[dict[str, Any]]:
    """The header's language menu: every language named in itself, `lang` selected."""
    return [
        {"code": code, "name": text(code, "ui.language.name"), "selected": code == lang}
        for code in LANGS
    ]


def asset_version(static_dir: Path = STATIC_DIR) -> str:
    """A short hash of the static files' names and contents: the same on every worker and
    replica serving the same files (times would differ), and new whenever any file changes."""
    digest = hashlib.blake2b(digest_size=5)
    for path in sorted(static_dir.rglob("*")):
        if path.is_file():
            content = path.read_bytes()
            digest.update(f"{path.relative_to(static_dir).as_posix()}:{len(content)};".encode())
            digest.update(content)
    return digest.hexdigest()


class VersionedStaticFiles(PrecompressedStaticFiles):
    """The static files under `/static/<asset version>/`, cacheable for a year, immutable (big
    ones gzipped once: app/http/precompressed.py)."""

    async def get_response(self, path: str, scope: Scope) -> Response:
        response = await super().get_response(path, scope)
        response.headers["cache-control"] = IMMUTABLE
        return response


def static_prefix(request: Request) -> str:
    """`/static/<version>` under the app's root path, e.g. `/chainrule/static/3f2a9c01de`."""
    return f"{request.scope.get('root_path', '')}/static/{request.app.state.asset_version}"


def preset_ids() -> list[str]:
    return [preset["id"] for preset in [*engine.PRESETS, *engine.TENSOR_PRESETS]]


@router.get("/", response_class=HTMLResponse)
async def index(request: Request, preset: Annotated[str | None, Query()] = None) -> HTMLResponse:
    """The app; `?preset=<id>` opens that preset (an unknown id opens the first). Its words are
    in the language of `?lang=`, else of `Accept-Language`, else English (an unknown `?lang=`
    is passed over, as the header is: a page is not refused for it)."""
    return page_response(request, preset)


def page_response(
    request: Request, preset: str | None = None, class_code: str | None = None
) -> HTMLResponse:
    """The app's page opening `preset`; with `class_code` (`/c/<code>`, "" when the code cannot
    be one) it is a student's page joining that live class."""
    from chainrule.app.api.sandbox import python_zip_url, runtime_bytes  # they read ROOT

    ids = preset_ids()
    preset_id = preset if preset in ids else (ids[0] if ids else None)
    lang = lang_of(request.scope)
    jinja: Jinja2Templates = request.app.state.templates
    settings = request.app.state.settings
    context = {
        "preset_id": preset_id,
        "class_code": class_code or "",
        "class_join": class_code is not None,
        "static": static_prefix(request),
        "op_table": OP_TABLE_JSON,
        "lang": lang,
        "t": partial(text, lang),
        "ui_text": ui_catalogue_json(lang),
        "languages": language_menu(lang),
        "sandbox_python": python_zip_url(request),
        "sandbox_bytes": runtime_bytes(),
        # The sandbox posts the program of a graph up to the server's bound here, and traces a
        # bigger one itself, up to the bound of a graph read from a Value (docs/sandbox.md).
        "sandbox_max_nodes": settings.max_nodes,
        "sandbox_max_value_nodes": settings.max_value_nodes,
        # The most characters of a runner's reply that holds such a trace: as the server bounds
        # its own replies, so much a node (engine/reply.py), at the most nodes read.
        "sandbox_traced_max_chars": REPLY_BYTES_PER_NODE * settings.max_value_nodes,
    }
    response = jinja.TemplateResponse(request, "index.html", context)
    response.headers["Vary"] = "Accept-Language"  # the page's words follow that header
    return response


@router.get("/docs", response_class=HTMLResponse)
async def docs(request: Request) -> HTMLResponse:
    """Swagger UI from vendored files, started by a script file (no inline script)."""
    title = escape(f"{request.app.title} API")
    root_path = request.scope.get("root_path", "")
    openapi_url = escape(root_path + (request.app.openapi_url or "/openapi.json"))
    swagger = escape(f"{static_prefix(request)}/vendor/swagger-ui")
    return HTMLResponse(
        f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<link rel="stylesheet" href="{swagger}/swagger-ui.css">
<link rel="icon" href="{swagger}/favicon-32x32.png">
</head>
<body>
<div id="swagger-ui" data-openapi-url="{openapi_url}"></div>
<script src="{swagger}/swagger-ui-bundle.js"></script>
<script src="{swagger}/init.js"></script>
</body>
</html>
"""
    )
