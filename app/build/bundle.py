"""The embeddable player's bundle (static/embed/): what it is built from, how, and whether the
committed files are current.

`make bundle` runs `python -m chainrule.app.build.bundle`, which first writes
static/js/compute/op-functions.js
(the op table's forward, local derivatives and warnings in JavaScript, engine/ops.py
`javascript_module`: the page's evaluator runs them), then builds with esbuild from npm, pinned
(ESBUILD_VERSION), in two steps: static/css/embed.css with the CSS files it imports, minified,
into chainrule-embed.css; then static/js/embed.js with every module it imports and that CSS (as
text) into chainrule-embed.js, one ES module. Each file opens with a comment naming the sha256
of its inputs (the esbuild version and every source file), which tests/app/test_bundle.py
recomputes from the sources without esbuild: a source changed since the last build fails it.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ESBUILD_VERSION = "0.28.2"

ROOT = Path(__file__).resolve().parents[2]
STATIC_DIR = ROOT / "static"
JS_ENTRY = STATIC_DIR / "js" / "embed.js"
CSS_ENTRY = STATIC_DIR / "css" / "embed.css"
BUNDLE_DIR = STATIC_DIR / "embed"
BUNDLE_JS = BUNDLE_DIR / "chainrule-embed.js"
BUNDLE_CSS = BUNDLE_DIR / "chainrule-embed.css"
OP_FUNCTIONS = STATIC_DIR / "js" / "compute" / "op-functions.js"

# `import … from "./x.js"`, `export … from "./x.js"`, `import "./x.js"` (a statement's start).
_JS_IMPORT = re.compile(r'^\s*(?:import|export)\b[^;"]*?(?:\bfrom\s*)?"(\.{1,2}/[^"]+)"', re.M)
_CSS_IMPORT = re.compile(r'@import\s+(?:url\(\s*)?"([^"]+)"')
_STAMP = re.compile(r"sources sha256 ([0-9a-f]{64})")


def _closure(entry: Path, imports: re.Pattern[str]) -> set[Path]:
    """`entry` and every file it imports, directly or not (relative imports only); a file of
    another kind than `entry` (a CSS file a module imports) is named, not read."""
    seen: set[Path] = set()
    todo = [entry.resolve()]
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        if path.suffix != entry.suffix:
            continue
        for target in imports.findall(path.read_text(encoding="utf-8")):
            todo.append((path.parent / target).resolve())
    return seen


def sources() -> list[Path]:
    """Every file the bundle is built from, sorted: embed.js's modules and embed.css's files.
    The one CSS file embed.js imports is the built chainrule-embed.css, made from the latter."""
    modules = _closure(JS_ENTRY, _JS_IMPORT)
    built = {path for path in modules if path.suffix == ".css"}
    if built != {BUNDLE_CSS}:
        raise ValueError(f"embed.js must import only {BUNDLE_CSS.name} as CSS, not {built}")
    return sorted((modules - built) | _closure(CSS_ENTRY, _CSS_IMPORT))


def digest() -> str:
    """sha256 over the esbuild version and each source's path and bytes."""
    h = hashlib.sha256(f"esbuild {ESBUILD_VERSION}\n".encode())
    for path in sources():
        content = path.read_bytes()
        h.update(f"{path.relative_to(ROOT).as_posix()}\0{len(content)}\0".encode())
        h.update(content)
    return h.hexdigest()


def banner() -> str:
    """The comment each built file opens with."""
    return (
        f"/* chainrule embeddable player, built by esbuild {ESBUILD_VERSION} from "
        f"static/js/embed.js and static/css/embed.css (make bundle); sources sha256 {digest()} */"
    )


def stamped_digest(path: Path) -> str | None:
    """The sources' sha256 a built file was stamped with, or None."""
    with path.open(encoding="utf-8") as file:
        match = _STAMP.search(file.readline())
    return match.group(1) if match else None


def esbuild_command() -> list[str]:
    npx = shutil.which("npx")
    if npx is None:
        raise SystemExit("make bundle needs npx (Node.js and npm: apt-get install npm)")
    return [npx, "--yes", f"esbuild@{ESBUILD_VERSION}"]


def write_op_functions() -> None:
    """Write static/js/compute/op-functions.js from the op table (tests/app/test_bundle.py checks
    it is
    current)."""
    from chainrule.engine.ops import javascript_module

    OP_FUNCTIONS.write_text(javascript_module(), encoding="utf-8")


def build() -> None:
    """Write the op functions, then build both files with esbuild and stamp them (needs npx and
    the npm registry); fails if esbuild read other files than `sources()` names, so the stamp
    covers exactly the inputs."""
    write_op_functions()
    esbuild = esbuild_command()
    common = ["--bundle", "--minify", "--legal-comments=none", "--log-level=warning"]
    stamp = banner()
    BUNDLE_DIR.mkdir(exist_ok=True)
    steps = [
        [str(CSS_ENTRY), *common, f"--banner:css={stamp}", f"--outfile={BUNDLE_CSS}"],
        [
            str(JS_ENTRY),
            *common,
            "--format=esm",
            "--loader:.css=text",
            f"--banner:js={stamp}",
            f"--outfile={BUNDLE_JS}",
        ],
    ]
    read: set[Path] = set()
    with tempfile.TemporaryDirectory() as scratch:
        for i, arguments in enumerate(steps):
            metafile = Path(scratch) / f"meta{i}.json"
            subprocess.run([*esbuild, *arguments, f"--metafile={metafile}"], check=True, cwd=ROOT)
            inputs = json.loads(metafile.read_text())["inputs"]
            read |= {(ROOT / name).resolve() for name in inputs}
    expected = set(sources()) | {BUNDLE_CSS}
    if read != expected:
        raise SystemExit(f"esbuild read {sorted(map(str, read ^ expected))} unlike sources()")


if __name__ == "__main__":
    build()
    sys.stdout.write(f"{BUNDLE_JS.relative_to(ROOT)} and {BUNDLE_CSS.relative_to(ROOT)}\n")
