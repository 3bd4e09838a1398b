"""Runs a driver script under Node beside copies of the page's modules (static/js), the way the
tests of the page's own executions of the math (the evaluator, descent) run them, and reads its
JSON output back as Python numbers."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path
from typing import Any

NODE = shutil.which("node")
JS = Path(__file__).resolve().parents[2] / "static" / "js"


# A page module's imports of its neighbours (`import { x } from "./y.js"`).
LOCAL_IMPORT = re.compile(r'\bfrom\s+"\./([\w.-]+\.js)"')


def with_imports(modules: Iterable[Path]) -> list[Path]:
    """`modules` and every page module they import, directly or not: a module that gains an
    import of its own (numbers.js of attached.js) needs no test's list changed."""
    found: dict[str, Path] = {}
    waiting = list(modules)
    while waiting:
        path = waiting.pop()
        if path.name in found:
            continue
        found[path.name] = path
        # Copied side by side: a test's own driver module imports the page's from static/js.
        for name in LOCAL_IMPORT.findall(path.read_text()):
            waiting.append(path.parent / name if (path.parent / name).exists() else JS / name)
    return list(found.values())


def run_node(tmp_path: Path, cases: Any, driver: str, modules: Iterable[Path]) -> Any:
    """`driver`'s output on `cases` (its argv[2], as JSON), run in `tmp_path` beside copies of
    `modules` and of the page modules they import."""
    for path in with_imports(modules):
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
