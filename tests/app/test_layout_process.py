"""Big layouts in a helper process (app/layout/process.py): the same layout as the caller's own,
a helper that dies or cannot start costs nothing but its speed, a learner's script without a
main guard runs once, and the helper ends with its caller."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from test_no_orphan_processes import wait_until_gone

from chainrule import engine
from chainrule.app.layout import process
from chainrule.app.layout.layouter import Layouter, Structure
from chainrule.app.layout.placing import layout_structure
from chainrule.app.layout.process import LayoutProcess
from chainrule.app.settings import AppSettings

# No dot: the layered fallback, the layout the helper exists for (a graph over dot_max_nodes).
SETTINGS = AppSettings(dot_max_nodes=0, layout_process_min_nodes=1)


def program_structure(neurons: int) -> Structure:
    """A program of statements (so groups) like a layer of neurons: each sums its products."""
    lines = [f"x{i} = {i + 1}.5" for i in range(4)]
    for n in range(neurons):
        terms = " + ".join(f"{0.1 * (n + i):.1f} * x{i}" for i in range(4))
        lines.append(f"h{n} = ({terms}).tanh()")
    lines.append("out = " + " + ".join(f"h{n}" for n in range(neurons)))
    return layout_structure(engine.build_graph("\n".join(lines)))


def with_helper() -> Layouter:
    layouter = Layouter.from_settings(SETTINGS)
    layouter.process = LayoutProcess(SETTINGS, SETTINGS.layout_process_min_nodes)
    return layouter


@pytest.fixture
def layouter():
    layouter = with_helper()
    yield layouter
    layouter.process.close()


def test_the_helper_lays_out_as_the_caller_would(layouter: Layouter) -> None:
    graph = program_structure(12)
    layout, cached = layouter.layout(graph)
    assert (layouter.process.layouts, cached) == (1, False)
    assert layout.collapsed is not None  # statements as groups, both layouts
    assert layout == Layouter.from_settings(SETTINGS).layout(graph)[0]
    # Kept by the caller: the same graph again is the caller's cache, not the helper's work.
    assert layouter.layout(graph) == (layout, True) and layouter.process.layouts == 1


def test_a_graph_under_the_threshold_is_laid_out_by_the_caller() -> None:
    layouter = Layouter.from_settings(SETTINGS)
    graph = program_structure(3)
    layouter.process = LayoutProcess(SETTINGS, len(graph.ids) + 1)
    layouter.expect(len(graph.ids))
    assert layouter.process._child is None  # not even started
    layouter.layout(graph)
    assert layouter.process.layouts == 0


def test_a_helper_killed_between_layouts_is_started_again(layouter: Layouter) -> None:
    layouter.expect(10_000)  # started before any layout: the caller expects a big graph
    first = layouter.process._child
    assert first is not None and first.poll() is None
    layouter.layout(program_structure(5))
    os.kill(first.pid, signal.SIGKILL)
    first.wait()
    graph = program_structure(6)
    assert layouter.layout(graph)[0] == Layouter.from_settings(SETTINGS).layout(graph)[0]
    assert layouter.process.layouts == 2 and layouter.process._child.pid != first.pid


def test_a_helper_that_dies_in_a_layout_leaves_it_to_the_caller(
    monkeypatch: pytest.MonkeyPatch, layouter: Layouter
) -> None:
    # A helper that reads the settings' length and dies (killed by the kernel's OOM killer, say).
    monkeypatch.setattr(process, "_CHILD", "import sys; sys.stdin.buffer.read(8); sys.exit(3)")
    graph = program_structure(4)
    assert layouter.layout(graph)[0] == Layouter.from_settings(SETTINGS).layout(graph)[0]
    assert layouter.process.layouts == 0 and layouter.process._child is None


def test_without_an_interpreter_to_start_the_caller_lays_out_itself(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, layouter: Layouter
) -> None:
    monkeypatch.setattr(sys, "executable", str(tmp_path / "no-python"))
    graph = program_structure(4)
    assert layouter.layout(graph)[0] == Layouter.from_settings(SETTINGS).layout(graph)[0]
    assert layouter.process.layouts == 0
    assert not layouter.process.wanted(10**6)  # and it is not tried again in this process


# A learner's script, no `if __name__ == "__main__":` guard. With multiprocessing's spawn, the
# helper would import it again as `__mp_main__`: build the graph, print, and trace once more.
SCRIPT = """
import chainrule
from chainrule.engine import Value
from chainrule.notebook.traces import _layouter
print("the script ran", flush=True)
x = [Value(0.5 * i) for i in range(6)]
out = sum((xi * xi).tanh() for xi in x)
out.backward()
reply = chainrule.trace_value(out)
print("laid out by the helper:", _layouter().process.layouts, flush=True)
"""


def run_script(tmp_path: Path, source: str) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "learner.py"
    script.write_text(source)
    environment = {
        **os.environ,
        "CHAINRULE_LAYOUT_PROCESS_MIN_NODES": "1",
        "CHAINRULE_DOT_MAX_NODES": "0",
    }
    return subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env=environment,
    )


def test_a_script_without_a_main_guard_runs_once(tmp_path: Path) -> None:
    done = run_script(tmp_path, SCRIPT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["the script ran", "laid out by the helper: 1"]


def test_the_helper_ends_with_its_caller_even_killed(tmp_path: Path) -> None:
    """The caller's end closes the helper's stdin, however it ends: here with no exit handler
    run (os._exit), the way a killed kernel ends."""
    done = run_script(
        tmp_path,
        SCRIPT + "import os; print(_layouter().process._child.pid, flush=True); os._exit(0)\n",
    )
    assert done.returncode == 0, done.stderr
    helper = int(done.stdout.splitlines()[-1])
    assert wait_until_gone({helper}) == set(), "the helper outlived its caller"


def test_ctrl_c_in_a_terminal_leaves_the_helper_to_its_caller(layouter: Layouter) -> None:
    """SIGINT reaches a terminal's whole process group; the helper ignores it, and lays out the
    caller's next graph (the caller, which got the KeyboardInterrupt, decides)."""
    layouter.layout(program_structure(3))  # the helper is in its loop: its handlers are set
    child = layouter.process._child
    os.kill(child.pid, signal.SIGINT)
    layouter.layout(program_structure(4))
    assert layouter.process.layouts == 2 and layouter.process._child is child
    assert child.poll() is None
