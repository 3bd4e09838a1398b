"""Issue 39's install figures: what `pip install chainrule` puts on a learner's machine.

Run: .venv/bin/python bench/install.py   (also part of `make bench`; about half a minute, most
     of it pip fetching the dependencies from the index or its cache). Prints a markdown table.

Rows: the wheel's size and its size unpacked; its dependencies (the unconditional
Requires-Dist, and the `server` extra's); then the wheel installed with its dependencies into a
fresh venv: the time, the packages installed, the venv's size, and that none of the server's
packages came with it and `chainrule.show` builds the player there (docs/python.md, README).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
import venv
import zipfile
from email.parser import Parser
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SERVER_ONLY = ("fastapi", "starlette", "uvicorn", "redis", "jinja2", "pydantic-settings")

# In the fresh venv: the player built for a micrograd-shaped Value (the widget itself, as a
# kernel's show() returns it), with nothing of the server importable.
SHOW = """
import sys
import chainrule
from chainrule.engine import Value
from chainrule.notebook.widget import widget
a = Value(2.0); loss = (a * a + 1).tanh(); loss.backward()
player = widget(loss)
assert len(player.trace["nodes"]) == 5, player.trace["nodes"]
print(type(chainrule.show(loss)).__name__)
assert not [m for m in sys.modules if m.split(".")[0] in ("fastapi", "uvicorn", "redis", "jinja2")]
"""


def mb(size: int) -> str:
    return f"{size / 1e6:.2f} MB"


def requires(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        metadata = Parser().parsestr(archive.read(name).decode())
    return metadata.get_all("Requires-Dist") or []


def main() -> None:
    with tempfile.TemporaryDirectory() as work:
        work = Path(work)
        subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
             "-w", str(work), str(ROOT)],
            check=True, capture_output=True,
        )  # fmt: skip
        (wheel,) = work.glob("chainrule-*.whl")
        unpacked = sum(info.file_size for info in zipfile.ZipFile(wheel).infolist())
        deps = requires(wheel)
        plain = [dep for dep in deps if "extra ==" not in dep]
        server = [dep.split(";")[0] for dep in deps if 'extra == "server"' in dep]
        print("| measure | figure |\n| --- | --- |")
        print(f"| wheel | {mb(wheel.stat().st_size)} ({mb(unpacked)} unpacked) |")
        print(f"| dependencies | {', '.join(f'`{dep}`' for dep in plain)} |")
        print(f"| `[server]` extra | {', '.join(f'`{dep}`' for dep in server)} |")

        env = work / "venv"
        venv.create(env, with_pip=True)
        python = env / "bin" / "python"
        start = time.perf_counter()
        subprocess.run(
            [python, "-m", "pip", "install", "-q", str(wheel)], check=True, capture_output=True
        )
        took = time.perf_counter() - start
        listed = subprocess.run(
            [python, "-m", "pip", "list", "--format=freeze"],
            check=True, capture_output=True, text=True,
        ).stdout.split()  # fmt: skip
        names = sorted(line.split("==")[0].lower() for line in listed)
        size = sum(path.stat().st_size for path in env.rglob("*") if path.is_file())
        print(f"| `pip install` into a fresh venv | {took:.1f} s, {len(names)} packages,", end=" ")
        print(f"{mb(size)} |")
        leaked = [name for name in names if name in SERVER_ONLY]
        print(f"| the server's packages installed | {', '.join(leaked) or 'none'} |")
        shown = subprocess.run(
            [python, "-c", SHOW], cwd=work, capture_output=True, text=True, check=True
        ).stdout.strip()
        print(f"| `chainrule.show(loss)` there | builds the player; outside a kernel: `{shown}` |")
        assert not leaked, leaked


if __name__ == "__main__":
    main()
