"""A layout's dot loads only the plugins it uses (app/layout/graphviz.py `layout_environment`): its
own GVBINDIR with dot's layout and the JSON output, none of the text plugins (pango, fontconfig)
whose loading is most of a small drawing's CPU time; and its malloc uses huge pages. It draws
exactly what a dot with every plugin draws: our boxes carry no text. The directory is one for
every process of a user (in their cache): a process killed leaves none behind in /tmp."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from chainrule.app.layout.graphviz import layout_environment, run_bounded
from chainrule.app.layout.layouter import dot_source, structure

DOT = shutil.which("dot")
needs_dot = pytest.mark.skipif(DOT is None, reason="Graphviz is not installed")


def draw(source: bytes, env: dict[str, str] | None) -> bytes:
    return run_bounded(
        [DOT or "dot", "-Tjson0"], source, timeout_s=30, memory_bytes=1 << 30,
        output_bytes=64 << 20, env=env,
    )  # fmt: skip


@needs_dot
def test_the_layout_environment_holds_only_the_layout_plugins() -> None:
    env = layout_environment(DOT or "")
    assert env is not None
    names = sorted(os.listdir(env["GVBINDIR"]))
    libraries = [name for name in names if name.startswith("libgvplugin_")]
    assert {name.split(".so")[0] for name in libraries} == {
        "libgvplugin_core",
        "libgvplugin_dot_layout",
    }
    assert any(name.startswith("config6") for name in names)  # written by `dot -c` there
    assert "glibc.malloc.hugetlb=1" in env["GLIBC_TUNABLES"].split(":")


@needs_dot
def test_dot_draws_the_same_with_only_the_layout_plugins() -> None:
    # A branching graph of every card kind: the same bytes, positions and all.
    kinds = ["leaf", "leaf", "const", "op", "op", "leaf", "op", "op"]
    edges = [(0, 3), (1, 3), (2, 4), (3, 4), (5, 6), (4, 6), (3, 7), (6, 7)]
    source = dot_source(structure([f"n{i}" for i in range(len(kinds))], kinds, edges)).encode()
    assert draw(source, layout_environment(DOT or "")) == draw(source, None)


def test_a_dot_that_is_not_a_graphviz_installation_runs_in_the_usual_environment(
    tmp_path: Path,
) -> None:
    script = tmp_path / "dot"
    script.write_text("#!/bin/sh\nexit 0\n")
    script.chmod(0o755)
    assert layout_environment(str(script)) is None
    assert layout_environment(str(tmp_path / "missing")) is None


@needs_dot
def test_the_layouter_runs_dot_in_the_layout_environment(monkeypatch) -> None:
    from chainrule.app.layout import graphviz
    from chainrule.app.layout.layouter import Layouter

    environments = []
    real = graphviz.run_bounded

    def recorded(command, source, **options):  # noqa: ANN001, ANN202
        environments.append(options.get("env"))
        return real(command, source, **options)

    monkeypatch.setattr(graphviz, "run_bounded", recorded)
    layout, _ = Layouter(dot_timeout_s=30, dot_max_nodes=100, cache_size=0).layout(
        structure(["a", "b", "c"], ["leaf", "leaf", "op"], [(0, 2), (1, 2)])
    )
    assert layout.engine == "dot" and environments == [layout_environment(DOT or "")]


# A process that finds its layout environment, says where its plugins are, then ends as `ending`.
FIND = """
import os, sys
from chainrule.app.layout.graphviz import layout_environment
env = layout_environment("dot")
print(env["GVBINDIR"], flush=True)
if sys.argv[1] == "killed":
    os.kill(os.getpid(), 9)
"""


def find_in_process(tmp_path: Path, ending: str, cache: Path) -> tuple[str, int]:
    temporary = tmp_path / "tmp"
    temporary.mkdir(exist_ok=True)
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), "TMPDIR": str(temporary)}
    done = subprocess.run(
        [sys.executable, "-c", FIND, ending], env=env, capture_output=True, text=True, timeout=60
    )
    return done.stdout.strip(), done.returncode


@needs_dot
def test_processes_share_one_plugin_directory_and_a_killed_one_leaves_nothing(
    tmp_path: Path,
) -> None:
    # Before, each process made its own in /tmp and removed it at exit: a server killed (a
    # test's, a container's) left it there, 399 of them on one machine in a day.
    cache = tmp_path / "cache"
    first, code = find_in_process(tmp_path, "killed", cache)
    assert code == -9
    second, _ = find_in_process(tmp_path, "killed", cache)
    assert first == second and Path(first).parent == cache / "chainrule"
    assert [p.name for p in (cache / "chainrule").iterdir()] == [Path(first).name]
    assert list((tmp_path / "tmp").iterdir()) == []
    assert any(Path(first).glob("config6*"))


@needs_dot
def test_without_a_cache_to_write_a_process_uses_its_own_directory_and_removes_it(
    tmp_path: Path,
) -> None:
    not_a_directory = tmp_path / "cache"
    not_a_directory.write_text("")
    found, code = find_in_process(tmp_path, "exits", not_a_directory)
    assert code == 0 and Path(found).parent == tmp_path / "tmp"
    assert list((tmp_path / "tmp").iterdir()) == []  # removed at exit
