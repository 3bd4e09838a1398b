"""Every script of bench/ (`make bench`) loads: its imports resolve as the Makefile runs it, from
the repository's root (bench/page.py imported tests.conftest, whose helpers had moved to
tests/servers.py, so `make bench` stopped at the page's table). What each script measures is
bench's, never asserted here."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Run a file's module-level code (its imports and constants), not its main, with the path
# `python bench/<file>.py` gives it (its own folder first).
LOAD = """
import runpy, sys
sys.path[0] = sys.argv[1].rsplit("/", 1)[0]
runpy.run_path(sys.argv[1], run_name="bench_loaded")
"""


def test_every_bench_script_loads_from_the_root():
    scripts = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "bench").glob("*.py"))
    assert "bench/page.py" in scripts and "bench/classroom.py" in scripts
    runs = {
        script: subprocess.Popen(
            [sys.executable, "-c", LOAD, script],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        for script in scripts
    }
    failed = {}
    for script, run in runs.items():
        _, err = run.communicate(timeout=120)
        if run.returncode != 0:
            failed[script] = err.strip().splitlines()[-1]
    assert failed == {}
