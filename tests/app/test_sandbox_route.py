"""The sandbox's files on the server (app/api/sandbox.py, app/http/middleware.py): the zip of the
engine, the layout and chainrule.sandbox that the page's worker loads holds exactly the package's
own files (so it never lags the engine), under a URL that names its content, and runs without
the server's libraries; the worker's script alone may compile WebAssembly."""

from __future__ import annotations

import io
import re
import subprocess
import sys
import zipfile
from pathlib import Path

from chainrule.app.api.sandbox import imported_modules, python_zip, shipped_files
from chainrule.app.http.middleware import CONTENT_SECURITY_POLICY, SANDBOX_WORKER_POLICY
from chainrule.app.http.pages import IMMUTABLE, ROOT


def zip_url(client) -> str:
    page = client.get("/").text
    (url,) = re.findall(r'data-sandbox-python="([^"]+)"', page)
    return url


def test_the_zip_holds_the_reader_and_the_sandbox_as_they_are_on_disk(client):
    url = zip_url(client)
    assert re.fullmatch(r"/sandbox/[0-9a-f]{12}/chainrule\.zip", url)
    reply = client.get(url)
    assert reply.status_code == 200
    assert reply.headers["content-type"] == "application/zip"
    assert reply.headers["cache-control"] == IMMUTABLE
    archive = zipfile.ZipFile(io.BytesIO(reply.content))
    names = set(archive.namelist())
    # The reader and the engine modules it imports (found in its import statements), those the
    # sandbox imports (a graph too big to send is traced and laid out in the browser:
    # sandbox/local_trace.py), the sandbox, the catalogues: each byte for byte the package's; the
    # packages' __init__ files are one-line stand-ins (the engine's would import the whole
    # engine) or their own (empty).
    reader = {"errors", "formulas", "gc_pause", "i18n", "ieee", "lexer", "ops", "value_reader"}
    tracing = {"tracing", "reply", "steps", "builder", "backward", "narration", "overview"}
    assert {f"chainrule/engine/{name}.py" for name in reader | tracing} <= names
    app = {name for name in names if name.startswith("chainrule/app/")}
    assert app == {
        "chainrule/app/__init__.py",
        "chainrule/app/http/__init__.py",
        "chainrule/app/http/cache.py",
        "chainrule/app/layout/__init__.py",
        *(f"chainrule/app/layout/{name}.py" for name in ("graphviz", "groups", "layered")),
        *(f"chainrule/app/layout/{name}.py" for name in ("layouter", "placing")),
    }
    whole = {
        f"chainrule/{folder}/{path.name}"
        for folder, pattern in (("sandbox", "*.py"), ("locales", "*.json"))
        for path in (ROOT / folder).glob(pattern)
    }
    assert whole <= names
    stand_ins = {
        "chainrule/__init__.py",
        "chainrule/engine/__init__.py",
        "chainrule/app/__init__.py",
    }
    for name in names - stand_ins:
        assert archive.read(name) == (ROOT / name.removeprefix("chainrule/")).read_bytes(), name
    for name in stand_ins:
        assert archive.read(name).count(b"\n") == 1
    assert not any(name.startswith(("chainrule/notebook/", "chainrule/app/api/")) for name in names)


RUN_FROM_THE_ZIP = """
import sys
sys.path.insert(0, sys.argv[1])
from chainrule.sandbox.runner import Session
result = Session().run("from micrograd.engine import Value\\na = Value(2.0)\\na.label = 'a'\\n"
                       "b = a * a\\nb.backward()")
assert not any(name.startswith("chainrule.app") for name in sys.modules)
print(result["program"]["source"], end="")
"""


def test_the_runner_works_from_the_zip_alone(tmp_path):
    """What the worker unpacks is enough: a Python with only the zip's files and micrograd
    (which the worker installs from its wheel) on its path runs code and reads its graph."""
    import micrograd

    zipfile.ZipFile(io.BytesIO(python_zip()[0])).extractall(tmp_path / "lib")
    site = str(Path(micrograd.__file__).resolve().parent.parent)
    out = subprocess.run(
        [sys.executable, "-c", RUN_FROM_THE_ZIP, str(tmp_path / "lib")],
        capture_output=True, text=True, check=True, cwd=tmp_path,
        env={"PYTHONPATH": site, "PYTHONNOUSERSITE": "1", "PATH": ""},
    )  # fmt: skip
    assert out.stdout == "a = 2.0\nb = a * a\n"  # named as the code names it


TRACE_FROM_THE_ZIP = """
import sys
sys.path[:0] = sys.argv[1:]
from chainrule.sandbox.runner import Session
code = ("from micrograd.engine import Value\\nxs = [Value(float(i)) for i in range(6)]\\n"
        "L = sum(x * x for x in xs)\\nL.backward()")
result = Session(max_nodes=10).run(code)
trace = result["trace"]
print(len(trace["nodes"]), trace["root"], trace["layout"]["engine"], trace["structure"])
print(trace["nodes"][-1]["data"], [leaf["name"] for leaf in trace["leaves"]][:2])
print(sorted(name for name in ("orjson", "pydantic", "fastapi") if name in sys.modules))
"""


def test_a_graph_too_big_to_send_is_traced_from_the_zip_alone(tmp_path):
    """Past the server's `max_nodes` the runner traces and lays the graph out itself
    (sandbox/local_trace.py), with no library the worker lacks: a Python without site-packages
    (`-S`), with the zip and micrograd alone on its path, as in Pyodide."""
    import micrograd

    zipfile.ZipFile(io.BytesIO(python_zip()[0])).extractall(tmp_path / "lib")
    (tmp_path / "micrograd").mkdir()
    for path in Path(micrograd.__file__).parent.glob("*.py"):
        (tmp_path / "micrograd" / path.name).write_bytes(path.read_bytes())
    out = subprocess.run(
        [sys.executable, "-S", "-c", TRACE_FROM_THE_ZIP, str(tmp_path / "lib"), str(tmp_path)],
        capture_output=True, text=True, check=True, cwd=tmp_path, env={"PATH": ""},
    )  # fmt: skip
    # 6 leaves, 6 squares, 6 sums (micrograd's sum starts at 0): 18 nodes and the constant.
    assert out.stdout.splitlines() == [
        "19 n18 sugiyama None",
        "55.0 ['xs0', 'xs1']",
        "[]",
    ]


def test_the_zip_is_the_same_bytes_for_the_same_files():
    data, version = python_zip()
    python_zip.cache_clear()
    try:
        assert python_zip() == (data, version)
    finally:
        python_zip.cache_clear()
    # sandbox/check.py: the autograd check's diagnosis; engine/gc_pause.py: the reader's pause;
    # sandbox/datasets.py: micrograd demo's numpy and scikit-learn; sandbox/local_trace.py: the
    # engine's trace and the layered layout (29 more).
    assert len(shipped_files()) == 50


def test_a_module_imported_as_from_dot_import_ships_too(tmp_path):
    """`from . import ieee` (engine/formulas.py) names its module in `names`, not `module`: the
    reader's imports are followed through both forms, so the zip is never one module short."""
    engine = tmp_path / "engine"
    engine.mkdir()
    (engine / "value_reader.py").write_text("from .ops import OPS\n", encoding="utf-8")
    (engine / "ops.py").write_text("from . import ieee, lexer\nOPS = {}\n", encoding="utf-8")
    (engine / "ieee.py").write_text("import math\n", encoding="utf-8")
    (engine / "lexer.py").write_text("", encoding="utf-8")
    (engine / "unused.py").write_text("", encoding="utf-8")
    found = [path.name for path in imported_modules(tmp_path)]
    assert found == ["ieee.py", "lexer.py", "ops.py", "value_reader.py"]


def test_another_versions_zip_is_not_found_in_the_error_shape(client):
    reply = client.get("/sandbox/000000000000/chainrule.zip")
    assert reply.status_code == 404
    assert reply.json()["error"]["type"] == "NotFound"


def test_only_the_worker_may_compile_webassembly(client):
    page = client.get("/")
    static = re.search(r'src="(/static/[0-9a-f]+)/js/main.js"', page.text).group(1)
    worker = client.get(f"{static}/js/sandbox/worker.js")
    assert worker.status_code == 200
    assert worker.headers["content-security-policy"] == SANDBOX_WORKER_POLICY
    assert "'wasm-unsafe-eval'" in SANDBOX_WORKER_POLICY and "'unsafe-eval'" not in (
        SANDBOX_WORKER_POLICY.replace("'wasm-unsafe-eval'", "")
    )
    # The walls (docs/sandbox.md): no URL of any kind for the worker's own requests, and an
    # opaque origin. tests/browser/test_sandbox_walls.py holds Chromium to them.
    directives = dict(
        (part.split()[0], part.split()[1:]) for part in SANDBOX_WORKER_POLICY.split("; ")
    )
    assert directives["default-src"] == ["'none'"]
    assert directives["script-src"] == ["'wasm-unsafe-eval'"]
    assert directives["sandbox"] == ["allow-scripts"]
    assert not any(d.endswith("-src") for d in directives if d not in ("default-src", "script-src"))
    for other in ("/", f"{static}/js/main.js", f"{static}/js/sandbox/sandbox.js", zip_url(client)):
        assert client.get(other).headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    # The plain /static/ path (links from elsewhere) is the worker too.
    assert (
        client.get("/static/js/sandbox/worker.js").headers["content-security-policy"]
        == SANDBOX_WORKER_POLICY
    )


def test_the_sandboxs_standard_library_is_compiled_ahead():
    """static/vendor/pyodide/python_stdlib.zip is npm's compiled by Pyodide's own CPython 3.14
    (`make pyodide-stdlib`, tools/pyodide_stdlib_pyc.mjs): sourceless bytecode, which a cold start
    loads instead of compiling ~190 modules (bench/sandbox.py)."""
    archive = zipfile.ZipFile(ROOT / "static" / "vendor" / "pyodide" / "python_stdlib.zip")
    names = archive.namelist()
    compiled = [name for name in names if name.endswith(".pyc")]
    assert {"json/__init__.pyc", "asyncio/__init__.pyc", "pyodide/__init__.pyc"} <= set(compiled)
    assert len(compiled) > 500 and not [n for n in names if n.endswith(".py")]
    magic_314 = bytes.fromhex("2b0e0d0a")  # CPython 3.14's importlib.util.MAGIC_NUMBER
    for name in compiled[:50]:
        assert archive.read(name)[:16] == magic_314 + bytes(12), name


def test_the_runtime_a_cold_start_downloads_is_the_files_the_page_fetches():
    """files.js names the files' URLs, app/api/sandbox.py their paths (for the page's "MB of
    MB"): the same files."""
    import re

    from chainrule.app.api.sandbox import RUNTIME_FILES, runtime_bytes
    from chainrule.app.http.pages import ROOT

    files_js = (ROOT / "static/js/sandbox/files.js").read_text()
    named = set(re.findall(r"\$\{PYODIDE\}([\w.]+)`", files_js))
    named |= {f"micrograd/{m}" for m in re.findall(r"micrograd/([\w.-]+\.whl)", files_js)}
    shipped = {
        name.removeprefix("static/vendor/").removeprefix("pyodide/") for name in RUNTIME_FILES
    }
    assert named == shipped
    assert runtime_bytes() == sum((ROOT / n).stat().st_size for n in RUNTIME_FILES) + len(
        python_zip()[0]
    )
