"""Static files gzipped once, not on every request: Pyodide's 9.6 MB of WebAssembly gzipped on
the fly took seconds of a cold start (docs/benchmarks.md, Sandbox). A big compressible file is
compressed the first time it is asked for, into a cache folder under a name made of its content's
hash (so a changed file never gets an old copy), and every later request is sent that file, with
its own Content-Length and `Content-Encoding: gzip`, which the GZip middleware leaves alone."""

from __future__ import annotations

import gzip
import hashlib
import logging
import os
import tempfile
import threading
from pathlib import Path
from typing import Any

import anyio.to_thread
from fastapi.staticfiles import StaticFiles
from starlette.datastructures import Headers
from starlette.responses import FileResponse, Response
from starlette.staticfiles import NotModifiedResponse
from starlette.types import Scope

# Smaller files are gzipped on the fly by the middleware, in well under a millisecond.
PRECOMPRESS_MIN_BYTES = 64 * 1024
# Formats gzip shrinks (a .zip or .whl is compressed already; the middleware skips those).
COMPRESSIBLE_SUFFIXES = frozenset((".wasm", ".js", ".mjs", ".css", ".json", ".svg", ".map", ".txt"))
# Level 9: made once, so the smallest of gzip's levels (the wasm: 3.53 MB in 1.3 s of CPU; -6
# made 3.55 MB in 0.6 s on every request).
LEVEL = 9
DEFAULT_DIR = Path(tempfile.gettempdir()) / "chainrule-precompressed"

logger = logging.getLogger("chainrule")

_locks: dict[Path, threading.Lock] = {}
_locks_guard = threading.Lock()


def accepts_gzip(scope: Scope) -> bool:
    """Whether the request's Accept-Encoding names gzip (without `;q=0`)."""
    for coding in Headers(scope=scope).get("accept-encoding", "").split(","):
        name, _, params = coding.strip().partition(";")
        refused = params.replace(" ", "") in ("q=0", "q=0.0")
        if name.strip().lower() in ("gzip", "*") and not refused:
            return True
    return False


def worth_precompressing(path: Path, size: int) -> bool:
    return size >= PRECOMPRESS_MIN_BYTES and path.suffix.lower() in COMPRESSIBLE_SUFFIXES


def gzipped_copy(path: Path, folder: Path) -> Path:
    """The gzipped copy of `path` in `folder`, made now if it is not there (written whole to a
    temporary name, then renamed: a reader never sees half a file; one maker per process)."""
    content = path.read_bytes()
    digest = hashlib.blake2b(content, digest_size=12).hexdigest()
    target = folder / f"{path.name}.{digest}.gz"
    if target.exists():
        return target
    with _locks_guard:
        lock = _locks.setdefault(target, threading.Lock())
    with lock:
        if not target.exists():
            folder.mkdir(parents=True, exist_ok=True)
            fd, partial = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.")
            try:
                with os.fdopen(fd, "wb") as out:
                    out.write(gzip.compress(content, LEVEL, mtime=0))
                os.replace(partial, target)
            except BaseException:
                Path(partial).unlink(missing_ok=True)
                raise
    return target


def precompress_all(directory: Path, folder: Path) -> None:
    """Make the gzipped copy of every file under `directory` worth one (the server's start does
    this in a thread, so a learner's first run does not wait for the wasm's 1.3 s of CPU; a copy
    already in `folder` costs reading and hashing its file)."""
    try:
        for path in sorted(directory.rglob("*")):
            if path.is_file() and worth_precompressing(path, path.stat().st_size):
                gzipped_copy(path, folder)
    except OSError as err:  # said once; each request then tries, and sends the file if it fails
        logger.warning("cannot keep gzipped static files in %s: %s", folder, err)


def start_precompressing(directory: Path, folder: Path | None) -> threading.Thread | None:
    """`precompress_all` in a daemon thread (None: nothing to do)."""
    if folder is None:
        return None
    thread = threading.Thread(
        target=precompress_all, args=(directory, folder), name="precompress", daemon=True
    )
    thread.start()
    return thread


class PrecompressedStaticFiles(StaticFiles):
    """StaticFiles that send a big compressible file as its gzipped copy to a client accepting
    gzip (`precompressed_dir`: where the copies are kept; None sends every file as it is)."""

    def __init__(self, *args: Any, precompressed_dir: Path | None = DEFAULT_DIR, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.precompressed_dir = precompressed_dir
        # (path, size, mtime) → its copy: the content is hashed once per process, not per request.
        self._copies: dict[tuple[str, int, int], Path] = {}

    async def get_response(self, path: str, scope: Scope) -> Response:
        response = await super().get_response(path, scope)
        source = getattr(response, "path", None)  # a FileResponse's file
        if (
            self.precompressed_dir is None
            or not isinstance(response, FileResponse)
            or response.status_code != 200
            or not worth_precompressing(Path(source), os.stat(source).st_size)
        ):
            return response
        response.headers["vary"] = "Accept-Encoding"
        if not accepts_gzip(scope):
            return response
        stat = os.stat(source)
        key = (str(source), stat.st_size, stat.st_mtime_ns)
        copy = self._copies.get(key)
        if copy is None or not copy.exists():  # (a cleaner of the temporary folder may take it)
            try:
                copy = await anyio.to_thread.run_sync(
                    gzipped_copy, Path(source), self.precompressed_dir
                )
            except OSError:  # an unwritable folder: the file as it is, gzipped by the middleware
                del response.headers["vary"]
                return response
            self._copies[key] = copy
        gzipped = FileResponse(copy, stat_result=os.stat(copy), media_type=response.media_type)
        gzipped.headers["content-encoding"] = "gzip"
        gzipped.headers["vary"] = "Accept-Encoding"
        if self.is_not_modified(gzipped.headers, Headers(scope=scope)):
            return NotModifiedResponse(gzipped.headers)
        return gzipped
