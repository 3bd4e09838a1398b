"""`pip install chainrule` is a real package: the wheel holds one import package, `chainrule`,
with its templates, static files and lessons, and an installed copy serves from any directory.
It is lean: the Python API and the widget need none of the server's packages (the `server`
extra), and the wheel leaves Pyodide out (bench/install.py installs it from the index into a
fresh venv and measures it; here nothing is fetched)."""

from __future__ import annotations

import os
import site
import subprocess
import sys
import time
import venv
import zipfile
from email.parser import Parser
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

import httpx
import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from servers import ROOT, free_port

# The server's packages: none of them is installed by `pip install chainrule`, nor imported by
# the Python API or the widget.
SERVER_ONLY = {"fastapi", "starlette", "uvicorn", "redis", "jinja2", "pydantic-settings"}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    # No build isolation: the test environment already has the build backend (setuptools>=77).
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(out), str(ROOT)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    (built,) = out.glob("chainrule-*.whl")
    return built


def test_the_wheel_holds_one_import_package_with_its_data(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/")[0] for name in names}
    assert {top for top in tops if not top.endswith(".dist-info")} == {"chainrule"}
    for needed in (
        "chainrule/__init__.py",
        "chainrule/engine/tracing.py",
        "chainrule/app/main.py",
        "chainrule/app/api/graph.py",
        "chainrule/templates/index.html",
        "chainrule/static/js/main.js",
        "chainrule/static/css/app.css",
        "chainrule/static/favicon.svg",
        "chainrule/lessons/chain-rule.json",
        "chainrule/locales/en.json",
        "chainrule/locales/ru.json",
        "chainrule/locales/et.json",
    ):
        assert needed in names, needed
    # Every static file of the checkout ships (vendored libraries with their licences included),
    # but Pyodide: the web app's sandbox runs in it, served from the checkout (docs/python.md).
    shipped = {name.removeprefix("chainrule/") for name in names}
    in_checkout = {
        str(path.relative_to(ROOT))
        for path in (ROOT / "static").rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }
    pyodide = {path for path in in_checkout if path.startswith("static/vendor/pyodide/")}
    assert pyodide and not pyodide & shipped, sorted(pyodide & shipped)[:5]
    assert in_checkout - pyodide <= shipped, sorted(in_checkout - pyodide - shipped)[:5]
    assert any(name.endswith(".dist-info/licenses/LICENSE") for name in names)
    assert not any(name.startswith(("chainrule/tests/", "chainrule/bench/")) for name in names)
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    scripts = zipfile.ZipFile(wheel).read(entry_points).decode()
    assert "chainrule = chainrule.app.cli:main" in scripts


def requirements(wheel: Path) -> list[Requirement]:
    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        metadata = Parser().parsestr(archive.read(name).decode())
    return [Requirement(line) for line in metadata.get_all("Requires-Dist")]


def installed_closure(requirements: list[Requirement]) -> set[str]:
    """The distributions `requirements` pull in, as installed in this environment (markers read
    without extras), followed through each one's own requirements."""
    seen: set[str] = set()
    todo = [r for r in requirements if r.marker is None or r.marker.evaluate({"extra": ""})]
    while todo:
        name = canonicalize_name(todo.pop().name)
        if name in seen:
            continue
        seen.add(name)
        try:
            needs = distribution(name).requires or []
        except PackageNotFoundError:
            continue
        for line in needs:
            needed = Requirement(line)
            if needed.marker is None or needed.marker.evaluate({"extra": ""}):
                todo.append(needed)
    return seen


def test_pip_install_chainrule_brings_no_server(wheel):
    needs = requirements(wheel)
    plain = {canonicalize_name(r.name) for r in needs if r.marker is None}
    assert plain == {"pydantic", "graphviz", "orjson", "anywidget", "ipywidgets"}, plain
    # Compatible ranges, not pins.
    widgets = {r.name: r.specifier for r in needs if r.name in ("anywidget", "ipywidgets")}
    assert all(len(spec) == 2 and "==" not in str(spec) for spec in widgets.values()), widgets
    closure = installed_closure(needs)
    assert {"anywidget", "ipywidgets", "pydantic"} <= closure
    assert not closure & SERVER_ONLY, closure & SERVER_ONLY
    server = {canonicalize_name(r.name) for r in needs if r.marker and "server" in str(r.marker)}
    assert {"fastapi", "uvicorn", "redis", "jinja2"} <= server


def test_the_sdist_holds_the_license(tmp_path):
    # setuptools' own PEP 517 hook, as `python -m build --sdist` calls it (no network).
    subprocess.run(
        [sys.executable, "-c", "import sys, setuptools.build_meta as b; b.build_sdist(sys.argv[1])",
         str(tmp_path)],
        cwd=ROOT, check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    (sdist,) = tmp_path.glob("chainrule-*.tar.gz")
    import tarfile

    with tarfile.open(sdist) as archive:
        names = archive.getnames()
    assert any(name.endswith("/LICENSE") and name.count("/") == 1 for name in names), names[:20]


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """A fresh venv with the wheel installed; its dependencies come from this environment's
    site-packages by a plain path line (so this environment's editable finder, which would map
    chainrule to the checkout, is not loaded)."""
    env_dir = tmp_path_factory.mktemp("venv")
    venv.create(env_dir, with_pip=False)
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(env_dir / "bin" / "python"), "install",
         "-q", "--no-deps", "--no-index", str(wheel)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    (purelib,) = env_dir.glob("lib/python*/site-packages")
    (purelib / "deps.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    return env_dir


# The Python API and the widget with the server's packages made unimportable (they are in this
# environment, which the venv reads its dependencies from).
WITHOUT_THE_SERVER = """
import sys
class Refuse:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {"fastapi", "starlette", "uvicorn", "redis", "jinja2",
                                  "pydantic_settings"}:
            raise ImportError(f"{name} is the server's")
sys.meta_path.insert(0, Refuse())
import chainrule
from chainrule.engine import Value
from chainrule.notebook.widget import widget
a = Value(2.0); loss = (a * a + 1).tanh(); loss.backward()
assert len(widget(loss).trace["nodes"]) == 5
assert type(chainrule.show(loss)).__name__ == "StaticGraph"  # no kernel here
chainrule.save_html(loss, "loss.html")
print(chainrule.__file__)
"""


def test_the_api_and_the_widget_import_nothing_of_the_server(installed, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "CHAINRULE_"))}
    where = subprocess.run(
        [installed / "bin" / "python", "-c", WITHOUT_THE_SERVER],
        cwd=tmp_path, env=env, check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    assert str(installed) in where
    assert (tmp_path / "loss.html").stat().st_size > 100_000


def test_an_installed_wheel_serves_the_page_from_another_directory(installed, tmp_path):
    env_dir = installed
    python = env_dir / "bin" / "python"
    (purelib,) = env_dir.glob("lib/python*/site-packages")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "CHAINRULE_"))}

    where = subprocess.run(
        [python, "-c", "import chainrule.app.http.pages as p, chainrule; "
         "print(chainrule.__file__); print(p.STATIC_DIR)"],
        cwd=elsewhere, env=env, check=True, capture_output=True, text=True,
    ).stdout.split()  # fmt: skip
    assert all(str(purelib) in line for line in where), where

    port = free_port()
    server = subprocess.Popen(
        [env_dir / "bin" / "chainrule", "serve", "--port", str(port), "--workers", "1"],
        cwd=elsewhere, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            assert server.poll() is None, server.stderr.read().decode()
            try:
                if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                try:  # not listening yet: wait a little, or less if the server exits meanwhile
                    server.wait(timeout=0.1)
                except subprocess.TimeoutExpired:
                    pass
            assert time.monotonic() < deadline, "the installed server did not start"
        page = httpx.get(f"{base}/")
        assert page.status_code == 200 and 'id="op-table"' in page.text
        script = page.text.split('<script type="module" src="', 1)[1].split('"', 1)[0]
        assert httpx.get(f"{base}{script}").status_code == 200
        assert len(httpx.get(f"{base}/api/lessons").json()) >= 6
        reply = httpx.post(f"{base}/api/graph", json={"source": "a = 2\nb = a * a"}).json()
        assert reply["nodes"][0]["grad"] == 4.0 and reply["layout"]["width"] > 0
    finally:
        server.terminate()
        server.wait(timeout=10)
