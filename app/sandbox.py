"""The Python the page's sandbox runs in the learner's browser: the engine (pure Python: the
reader of Value graphs and everything it imports), chainrule.sandbox (which runs the learner's
code there) and the catalogues, zipped from the package's own files when first asked for, so
the worker always gets the engine this server runs (docs/sandbox.md). The server never imports
chainrule.sandbox: it only serves its files."""

from __future__ import annotations

import hashlib
import io
import zipfile
from functools import cache
from pathlib import Path

from fastapi import APIRouter, HTTPException, Request
from starlette.responses import Response

from chainrule.app.pages import IMMUTABLE, ROOT

router = APIRouter(include_in_schema=False)

# What the zip holds: (folder of the package, file pattern). The package's own __init__ is not
# among them: it is the notebook's API, which needs the server's modules; a one-line one stands in.
SHIPPED = (("engine", "*.py"), ("sandbox", "*.py"), ("locales", "*.json"))
PACKAGE_INIT = '"""chainrule in the browser sandbox: the engine and chainrule.sandbox."""\n'
# Fixed entry times: the same files give the same bytes (and the same URL) on every server.
ZIP_TIME = (1980, 1, 1, 0, 0, 0)


def _entry(archive: zipfile.ZipFile, name: str, content: bytes) -> None:
    info = zipfile.ZipInfo(name, date_time=ZIP_TIME)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = 0o644 << 16
    archive.writestr(info, content)


def shipped_files(root: Path = ROOT) -> dict[str, bytes]:
    """{path in the zip: content} of every file the sandbox gets, from the package at `root`."""
    files = {"chainrule/__init__.py": PACKAGE_INIT.encode()}
    for folder, pattern in SHIPPED:
        for path in sorted((root / folder).glob(pattern)):
            files[f"chainrule/{folder}/{path.name}"] = path.read_bytes()
    return files


@cache
def python_zip() -> tuple[bytes, str]:
    """The zip of `shipped_files()` and its short content hash (its URL's version)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, content in sorted(shipped_files().items()):
            _entry(archive, name, content)
    data = buffer.getvalue()
    return data, hashlib.blake2b(data, digest_size=6).hexdigest()


def python_zip_url(request: Request) -> str:
    """Where the page's worker gets the zip: a URL that names its content, kept for good."""
    return f"{request.scope.get('root_path', '')}/sandbox/{python_zip()[1]}/chainrule.zip"


@router.get("/sandbox/{version}/chainrule.zip")
async def sandbox_python(version: str) -> Response:
    """The zip (an old version's URL: 404, and the page that asked is older than the server)."""
    data, current = python_zip()
    if version != current:
        raise HTTPException(404)  # said as the API's 404: no such page
    return Response(data, media_type="application/zip", headers={"cache-control": IMMUTABLE})
