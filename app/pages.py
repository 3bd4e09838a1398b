"""The HTML pages: the app at `/` and the API documentation at `/docs`."""

from __future__ import annotations

import hashlib
from html import escape
from pathlib import Path
from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates

import engine

router = APIRouter(include_in_schema=False)

# templates/ and static/ sit beside app/ in a checkout; an installed package (pip install .)
# runs from the checkout's directory instead.
ROOT = Path(__file__).resolve().parent.parent
if not (ROOT / "static").is_dir():
    ROOT = Path.cwd()
STATIC_DIR = ROOT / "static"
TEMPLATES_DIR = ROOT / "templates"
SWAGGER = "/static/vendor/swagger-ui"


def asset_version(static_dir: Path = STATIC_DIR) -> str:
    """A short hash of the static files' names, sizes and times, for cache-busting URLs."""
    digest = hashlib.blake2b(digest_size=5)
    for path in sorted(static_dir.rglob("*")):
        if path.is_file():
            stat = path.stat()
            digest.update(
                f"{path.relative_to(static_dir)}:{stat.st_size}:{stat.st_mtime_ns};".encode()
            )
    return digest.hexdigest()


def preset_ids() -> list[str]:
    return [preset["id"] for preset in engine.PRESETS]


@router.get("/", response_class=HTMLResponse)
async def index(request: Request, preset: Annotated[str | None, Query()] = None) -> HTMLResponse:
    """The app; `?preset=<id>` opens that preset (an unknown id opens the first)."""
    ids = preset_ids()
    preset_id = preset if preset in ids else (ids[0] if ids else None)
    templates: Jinja2Templates = request.app.state.templates
    context = {"preset_id": preset_id, "asset_version": request.app.state.asset_version}
    return templates.TemplateResponse(request, "index.html", context)


@router.get("/docs", response_class=HTMLResponse)
async def docs(request: Request) -> HTMLResponse:
    """Swagger UI from vendored files, started by a script file (no inline script)."""
    title = escape(f"{request.app.title} API")
    openapi_url = escape(request.app.openapi_url or "/openapi.json")
    return HTMLResponse(
        f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<link rel="stylesheet" href="{SWAGGER}/swagger-ui.css">
<link rel="icon" href="{SWAGGER}/favicon-32x32.png">
</head>
<body>
<div id="swagger-ui" data-openapi-url="{openapi_url}"></div>
<script src="{SWAGGER}/swagger-ui-bundle.js"></script>
<script src="{SWAGGER}/init.js"></script>
</body>
</html>
"""
    )
