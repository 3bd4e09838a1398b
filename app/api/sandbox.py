"""The Python the page's sandbox runs in the learner's browser: the engine's reader of Value
graphs (engine/value_reader.py), chainrule.sandbox (which runs the learner's code there, and
traces and lays out a graph too big to send: sandbox/local_trace.py), every module of the
package they import, and the catalogues, zipped from the package's own files when first asked
for, so the worker always gets the reader this server runs (docs/sandbox.md). The server never
imports chainrule.sandbox: it only serves its files."""

from __future__ import annotations

import ast
import hashlib
import io
import zipfile
from functools import cache
from pathlib import Path

from fastapi import APIRouter, HTTPException, Request
from starlette.responses import Response

from chainrule.app.http.pages import IMMUTABLE, ROOT

router = APIRouter(include_in_schema=False)

# The reader and chainrule.sandbox, whose imports decide which other modules ship (the engine's,
# and the layout's for a graph traced in the browser); chainrule.sandbox and the catalogues ship
# whole. The packages' own __init__ files do not: chainrule's is the notebook's API (it needs the
# server's modules), chainrule.engine's imports the whole engine, which costs Pyodide seconds at
# a cold start on a busy machine, and chainrule.app's asks for the installed version; one-line
# ones stand in (the others ship as they are).
READER = "engine/value_reader.py"
SHIPPED = (("sandbox", "*.py"), ("locales", "*.json"))
STAND_INS = {
    "chainrule/__init__.py": '"""chainrule in the browser: the reader and the sandbox."""\n',
    "chainrule/engine/__init__.py": '"""The engine modules the sandbox imports."""\n',
    "chainrule/app/__init__.py": '"""The layout modules the sandbox imports."""\n',
}
# Fixed entry times: the same files give the same bytes (and the same URL) on every server.
ZIP_TIME = (1980, 1, 1, 0, 0, 0)
# The files the page fetches for the worker besides the zip (static/js/sandbox/files.js names
# their URLs; tests/app/test_sandbox_route.py holds the two lists to one): their decoded size is
# the "MB of MB" of a cold start's download (the wire may carry them gzipped, with no length).
RUNTIME_FILES = (
    "static/vendor/pyodide/pyodide.asm.wasm",
    "static/vendor/pyodide/python_stdlib.zip",
    "static/vendor/micrograd/micrograd-0.1.0-py3-none-any.whl",
)


def _entry(archive: zipfile.ZipFile, name: str, content: bytes) -> None:
    info = zipfile.ZipInfo(name, date_time=ZIP_TIME)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = 0o644 << 16
    archive.writestr(info, content)


def _type_checking(node: ast.AST) -> bool:
    """`if TYPE_CHECKING:` (its imports are annotations only: they never run)."""
    return isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING"


def _imported(path: Path, root: Path) -> list[Path]:
    """The modules of the package at `root` that `path` imports, wherever (a function's own
    imports too, not those under TYPE_CHECKING): relative (`from .ops import OPS`, `from . import
    ieee`) and absolute (`from chainrule.app.layout.layouter import Layouter`); packages aside."""
    found: list[Path] = []
    todo: list[ast.AST] = [ast.parse(path.read_text(encoding="utf-8"))]
    while todo:
        node = todo.pop()
        todo.extend(child for child in ast.iter_child_nodes(node) if not _type_checking(child))
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level == 1:
            base = path.parent / (node.module or "").replace(".", "/")
        elif node.level == 0 and (node.module or "").split(".")[0] == "chainrule":
            base = root.joinpath(*node.module.split(".")[1:])
        else:
            continue
        found.append(base.with_suffix(".py"))
        found.extend(base / f"{alias.name}.py" for alias in node.names)
    return [module for module in found if module.is_file()]


def imported_modules(root: Path = ROOT) -> list[Path]:
    """The reader, and every module of the package that it or chainrule.sandbox imports,
    directly or not: the engine's, and the layout's (sandbox/local_trace.py)."""
    found: list[Path] = []
    todo = [root / READER, *sorted((root / "sandbox").glob("*.py"))]
    while todo:
        path = todo.pop()
        if path not in found:
            found.append(path)
            todo.extend(_imported(path, root))
    return sorted(path for path in found if path.parent.name != "sandbox")


def shipped_files(root: Path = ROOT) -> dict[str, bytes]:
    """{path in the zip: content} of every file the sandbox gets, from the package at `root`:
    the modules imported, each package's __init__ (its stand-in, or its own), the folders
    shipped whole."""
    files = {name: text.encode() for name, text in STAND_INS.items()}
    for path in imported_modules(root):
        name = f"chainrule/{path.relative_to(root).as_posix()}"
        files[name] = path.read_bytes()
        package = name.rsplit("/", 1)[0] + "/__init__.py"
        files.setdefault(package, (path.parent / "__init__.py").read_bytes())
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


@cache
def runtime_bytes() -> int:
    """What a cold start downloads, decoded: the runtime's files and the zip; 0 (unknown: the
    page counts what arrives) where the runtime is not beside the package (a wheel leaves it out:
    docs/deployment.md)."""
    paths = [ROOT / name for name in RUNTIME_FILES]
    if not all(path.is_file() for path in paths):
        return 0
    return sum(path.stat().st_size for path in paths) + len(python_zip()[0])


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
