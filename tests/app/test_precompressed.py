"""Big static files are sent gzipped from a copy made once (app/http/precompressed.py): Pyodide's
wasm with its own Content-Length and Content-Encoding, cached for good, never gzipped again."""

from __future__ import annotations

import gzip
import os

import pytest
from fastapi.testclient import TestClient
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.gzip import GZipMiddleware
from starlette.routing import Mount

from chainrule.app.http import precompressed
from chainrule.app.http.middleware import SANDBOX_WORKER_POLICY
from chainrule.app.http.pages import IMMUTABLE, ROOT
from chainrule.app.http.precompressed import PrecompressedStaticFiles, precompress_all

WASM = ROOT / "static/vendor/pyodide/pyodide.asm.wasm"
GZIP = {"accept-encoding": "gzip, deflate"}


def raw(client: TestClient, url: str, headers: dict[str, str]) -> tuple[dict[str, str], bytes]:
    """The reply's headers and its body as it came over the wire (not decoded)."""
    with client.stream("GET", url, headers=headers) as reply:
        assert reply.status_code == 200
        return dict(reply.headers), b"".join(reply.iter_raw())


@pytest.fixture
def folder(tmp_path):
    return tmp_path / "gz"


@pytest.fixture
def small_app(tmp_path, folder):
    """A static folder with one big compressible file, one small one and a zip, served as the
    app serves static/: PrecompressedStaticFiles inside the GZip middleware."""
    static = tmp_path / "static"
    static.mkdir()
    (static / "big.wasm").write_bytes(bytes(range(256)) * 400)  # 100 KB
    (static / "small.js").write_text("export const x = 1;\n" * 100)
    (static / "runtime.zip").write_bytes(os.urandom(100_000))
    app = Starlette(
        routes=[
            Mount("/static", PrecompressedStaticFiles(directory=static, precompressed_dir=folder))
        ],
        middleware=[Middleware(GZipMiddleware, minimum_size=1000, compresslevel=6)],
    )
    return TestClient(app), static


def test_the_runtimes_wasm_is_sent_gzipped_with_its_length_and_cached_for_good(client):
    version = client.app.state.asset_version
    url = f"/static/{version}/vendor/pyodide/pyodide.asm.wasm"
    headers, body = raw(client, url, GZIP)
    gzipped_length = headers["content-length"]
    assert headers["content-encoding"] == "gzip"
    assert gzipped_length == str(len(body))
    assert len(body) < WASM.stat().st_size * 0.4  # 3.5 MB of 9.6
    assert gzip.decompress(body) == WASM.read_bytes()
    assert headers["content-type"] == "application/wasm"  # WebAssembly.compileStreaming needs it
    assert headers["cache-control"] == IMMUTABLE
    assert headers["vary"] == "Accept-Encoding"
    # Without gzip in Accept-Encoding: the file as it is, its length known too.
    headers, body = raw(client, url, {"accept-encoding": "identity"})
    assert "content-encoding" not in headers
    assert headers["content-length"] == str(WASM.stat().st_size) == str(len(body))
    # HEAD says the same, with no body.
    head = client.head(url, headers=GZIP)
    assert head.headers["content-encoding"] == "gzip" and head.content == b""
    assert head.headers["content-length"] == gzipped_length


def test_the_standard_librarys_zip_is_sent_as_it_is(client):
    """Its entries are deflated already: gzip would gain nothing, and the middleware skips zips."""
    url = f"/static/{client.app.state.asset_version}/vendor/pyodide/python_stdlib.zip"
    headers, body = raw(client, url, GZIP)
    assert "content-encoding" not in headers
    assert headers["content-length"] == str(len(body))


def test_the_worker_keeps_its_own_policy_gzipped(client):
    url = f"/static/{client.app.state.asset_version}/js/sandbox/worker.js"
    reply = client.get(url, headers=GZIP)
    assert reply.headers["content-security-policy"] == SANDBOX_WORKER_POLICY


def test_a_big_file_is_gzipped_once_then_sent_from_its_copy(small_app, folder, monkeypatch):
    client, static = small_app
    headers, body = raw(client, "/static/big.wasm", GZIP)
    (copy,) = folder.iterdir()
    assert body == copy.read_bytes()
    assert headers["content-encoding"] == "gzip" and headers["content-length"] == str(len(body))

    # From now on nothing is compressed: not by us, and not by the middleware (its gzip -6 of
    # the file would not be the copy's -9 bytes, and would have no Content-Length).
    def refuse(*args, **kwargs):
        raise AssertionError("compressed on a request")

    monkeypatch.setattr(precompressed.gzip, "compress", refuse)
    assert raw(client, "/static/big.wasm", GZIP) == (headers, body)
    # A copy taken away (a cleaner of the temporary folder) is made again.
    monkeypatch.undo()
    copy.unlink()
    assert raw(client, "/static/big.wasm", GZIP)[1] == body
    # A new server process (a new StaticFiles) finds the copy on disk.
    again = PrecompressedStaticFiles(directory=static, precompressed_dir=folder)
    client.app.router.routes[0].app = again
    assert raw(client, "/static/big.wasm", GZIP)[1] == body


def test_a_changed_file_gets_a_new_copy(small_app, folder):
    client, static = small_app
    first = raw(client, "/static/big.wasm", GZIP)[1]
    (static / "big.wasm").write_bytes(b"changed " * 20_000)
    second = raw(client, "/static/big.wasm", GZIP)[1]
    assert gzip.decompress(second) == b"changed " * 20_000 and second != first
    assert len(list(folder.iterdir())) == 2


def test_small_files_and_zips_get_no_copy(small_app, folder):
    client, _ = small_app
    small, _ = raw(client, "/static/small.js", GZIP)
    assert small["content-encoding"] == "gzip"  # the middleware's, as before
    archive, body = raw(client, "/static/runtime.zip", GZIP)
    assert "content-encoding" not in archive and len(body) == 100_000
    assert not folder.exists()


def test_a_revalidation_of_the_gzipped_copy_is_not_modified(small_app):
    client, _ = small_app
    etag = client.get("/static/big.wasm", headers=GZIP).headers["etag"]
    reply = client.get("/static/big.wasm", headers={**GZIP, "if-none-match": etag})
    assert reply.status_code == 304


def test_the_servers_start_makes_every_copy_ahead(small_app, folder):
    _, static = small_app
    precompress_all(static, folder)
    (copy,) = folder.iterdir()
    assert copy.name.startswith("big.wasm.") and copy.suffix == ".gz"


def test_a_folder_that_cannot_be_written_sends_the_file_as_before(tmp_path, make_client):
    blocked = tmp_path / "a file, not a folder"
    blocked.write_text("")
    client = make_client(precompressed_dir=blocked / "gz")
    url = f"/static/{client.app.state.asset_version}/vendor/pyodide/pyodide.asm.mjs"
    headers, body = raw(client, url, GZIP)
    assert headers["content-encoding"] == "gzip" and "content-length" not in headers
    assert gzip.decompress(body) == (ROOT / "static/vendor/pyodide/pyodide.asm.mjs").read_bytes()


def test_precompress_off_sends_the_file_for_the_middleware_to_gzip(make_client):
    client = make_client(precompress_static=False)
    url = f"/static/{client.app.state.asset_version}/vendor/pyodide/pyodide.asm.mjs"
    headers, body = raw(client, url, GZIP)
    assert headers["content-encoding"] == "gzip" and "content-length" not in headers


@pytest.mark.parametrize(
    ("header", "accepts"),
    [
        ("gzip, deflate, br", True),
        ("identity", False),
        ("gzip;q=0", False),
        ("*", True),
        ("", False),
    ],
)
def test_accept_encoding_is_read_as_http_says(header, accepts):
    assert (
        precompressed.accepts_gzip(
            {"type": "http", "headers": [(b"accept-encoding", header.encode())]}
        )
        is accepts
    )
