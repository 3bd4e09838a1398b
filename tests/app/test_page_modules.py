"""The page's modules (static/js/, served by app/http/pages.py) as a newcomer meets them: in
folders of at most MAX_MODULES_A_FOLDER modules, with no import cycle, every relative import
naming a module that exists, and the 3D view built on the graph's geometry, not on the 2D pane
(the page assembles the two side by side)."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from chainrule.app.http.pages import STATIC_DIR

JS = STATIC_DIR / "js"
MAX_MODULES_A_FOLDER = 25
# `import … from "./x.js"`, `export … from "./x.js"`, `import "./x.js"`, `import("./x.js")`.
RELATIVE_IMPORT = re.compile(
    r"""(?:^\s*(?:import|export)\b[^;"']*?(?:\bfrom\s*)?|\bimport\s*\(\s*)["'](\.{1,2}/[^"']+\.js)["']""",
    re.M,
)


def imports() -> dict[str, set[str]]:
    """Each module (by its path under static/js) → the page modules it imports."""
    graph = {}
    for path in sorted(JS.rglob("*.js")):
        found = RELATIVE_IMPORT.findall(path.read_text(encoding="utf-8"))
        targets = {(path.parent / target).resolve() for target in found}
        graph[path.relative_to(JS).as_posix()] = {
            t.relative_to(JS.resolve()).as_posix() for t in targets if JS.resolve() in t.parents
        }
    return graph


def cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of `graph` (its modules in order), or None: a depth-first walk on an
    explicit stack."""
    state: dict[str, str] = {}
    for start in graph:
        if start in state:
            continue
        path = [start]
        todo = [iter(sorted(graph[start]))]
        state[start] = "open"
        while todo:
            step = next(todo[-1], None)
            if step is None:
                state[path.pop()] = "done"
                todo.pop()
            elif state.get(step) == "open":
                return [*path[path.index(step) :], step]
            elif step not in state:
                state[step] = "open"
                path.append(step)
                todo.append(iter(sorted(graph.get(step, ()))))
    return None


def reaches(graph: dict[str, set[str]], start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo.extend(graph.get(module, ()))
    return seen


def test_every_relative_import_names_a_module_that_exists():
    missing = {
        (module, target)
        for module, targets in imports().items()
        for target in targets
        if not (JS / target).exists()
    }
    assert missing == set()


def test_the_pages_modules_have_no_import_cycle():
    assert cycle(imports()) is None


def test_the_cycle_finder_finds_a_cycle():
    assert cycle({"a.js": {"b.js"}, "b.js": {"c.js"}, "c.js": {"a.js"}}) == [
        "a.js",
        "b.js",
        "c.js",
        "a.js",
    ]
    assert cycle({"a.js": {"b.js"}, "b.js": set()}) is None


def test_no_folder_holds_more_than_a_newcomer_can_scan():
    folders = Counter(Path(module).parent.as_posix() for module in imports())
    assert {f: n for f, n in folders.items() if n > MAX_MODULES_A_FOLDER} == {}


def test_the_3d_view_does_not_sit_on_the_2d_pane():
    """main.js assembles both; the 3D view reads the graph's geometry, never the 2D pane."""
    graph = imports()
    under_3d = set().union(*(reaches(graph, m) for m in graph if m.startswith("view-3d/")))
    assert "graph/view.js" not in under_3d
    assert "graph/view.js" in graph["features.js"] | graph["main.js"]
