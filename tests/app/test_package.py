"""`pip install chainrule` is a real package: the wheel holds one import package, `chainrule`,
with its templates, static files and lessons, and an installed copy serves from any directory."""

from __future__ import annotations

import os
import site
import subprocess
import sys
import time
import venv
import zipfile
from pathlib import Path

import httpx
import pytest
from servers import ROOT, free_port


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
    # Every static file of the checkout ships (vendored libraries with their licences included).
    shipped = {name.removeprefix("chainrule/") for name in names}
    in_checkout = {
        str(path.relative_to(ROOT))
        for path in (ROOT / "static").rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }
    assert in_checkout <= shipped, sorted(in_checkout - shipped)[:5]
    assert not any(name.startswith(("chainrule/tests/", "chainrule/bench/")) for name in names)
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    scripts = zipfile.ZipFile(wheel).read(entry_points).decode()
    assert "chainrule = chainrule.app.cli:main" in scripts


def test_an_installed_wheel_serves_the_page_from_another_directory(wheel, tmp_path):
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    subprocess.run(
        [python, "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    # The dependencies come from this environment's site-packages by a plain path line (so this
    # environment's editable finder, which would map chainrule to the checkout, is not loaded).
    (purelib,) = env_dir.glob("lib/python*/site-packages")
    (purelib / "deps.pth").write_text("\n".join(site.getsitepackages()) + "\n")
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
