"""Runs a driver script under Node beside copies of the page's modules (static/js), the way the
tests of the page's own executions of the math (the evaluator, descent) run them, and reads its
JSON output back as Python numbers."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path
from typing import Any

NODE = shutil.which("node")
JS = Path(__file__).resolve().parents[2] / "static" / "js"


def run_node(tmp_path: Path, cases: Any, driver: str, modules: Iterable[Path] = ()) -> Any:
    """`driver`'s output on `cases` (its argv[2], as JSON), run in `tmp_path` beside a copy of
    the page's modules as they are laid out in static/js (so `driver` imports
    "./compute/evaluator.js", and a module's own imports resolve as in the page) and of the test's
    own `modules` (which import the page's the same way)."""
    shutil.copytree(JS, tmp_path, dirs_exist_ok=True)
    for path in modules:
        shutil.copyfile(path, tmp_path / path.name)
    (tmp_path / "package.json").write_text('{"type": "module"}')
    (tmp_path / "driver.js").write_text(driver)
    (tmp_path / "cases.json").write_text(json.dumps(cases))
    done = subprocess.run(
        [NODE, "driver.js", "cases.json"], cwd=tmp_path, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    # JSON.stringify writes 4.8e16 as 48828657853843010: read integers as the doubles they are.
    return negative_zeros(json.loads(done.stdout, parse_int=float))


def negative_zeros(value: Any) -> Any:
    """`value` with a driver's "-0" strings as -0.0 (JSON writes -0 as 0; a driver writes the
    sign of zero as the string "-0"), and its integers as the doubles they are."""
    if value == "-0":
        return -0.0
    if isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, list):
        return [negative_zeros(x) for x in value]
    if isinstance(value, dict):
        return {key: negative_zeros(x) for key, x in value.items()}
    return value
