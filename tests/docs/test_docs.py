"""The documentation a newcomer reads first stays true to the tree: README.md fits on a screen or
two and links every page of docs/; every relative link in README.md and docs/ leads to a file
that exists; docs/architecture.md's module tables name every module of engine/, app/ and
static/js/ once, and only modules that exist, each with tests that exist."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARCHITECTURE = ROOT / "docs" / "architecture.md"
README_MAX_LINES = 150

# [text](target) and ![alt](target), targets without a scheme: files of the repository.
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
# | `module` | its job | its tests |
MODULE_ROW = re.compile(r"^\| `([^`]+)` \| .* \| (.*) \|$")
TEST_FILE = re.compile(r"`([\w/]+\.py)`")
# Each table: its heading, and the folder its modules are named from.
TABLES = {
    "## Engine": "engine/",
    "## Server": "app/",
    "### Modules (`static/js/`)": "static/js/",
}


def tracked(pattern: str) -> set[str]:
    listed = subprocess.run(
        ["git", "ls-files", pattern], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return set(listed.stdout.split())


def table_rows(heading: str) -> list[tuple[str, str]]:
    """(module, its tests cell) of every row of the table under `heading`."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    after = text[text.index(heading) :]
    table = after[after.index("| module |") :].split("\n\n", 1)[0]
    return [m.groups() for line in table.splitlines() if (m := MODULE_ROW.match(line))]


def test_the_readme_fits_and_links_every_page_of_the_docs():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= README_MAX_LINES
    assert "make run" in readme and "make test" in readme
    linked = {target.split("#")[0] for target in LINK.findall(readme)}
    pages = {f"docs/{path.name}" for path in (ROOT / "docs").glob("*.md")}
    assert pages - linked == set(), "pages of docs/ the README does not link"


@pytest.mark.parametrize(
    "document", ["README.md", *sorted(str(p.relative_to(ROOT)) for p in ROOT.glob("docs/*.md"))]
)
def test_every_relative_link_leads_to_a_file(document):
    path = ROOT / document
    broken = [
        target
        for target in LINK.findall(path.read_text(encoding="utf-8"))
        if not re.match(r"[a-z]+:|#", target)
        and not (path.parent / target.split("#")[0]).exists()
    ]
    assert broken == []


@pytest.mark.parametrize(("heading", "folder"), TABLES.items())
def test_the_architecture_tables_name_every_module_once(heading, folder):
    suffix = ".js" if folder.startswith("static") else ".py"
    modules = {
        path.removeprefix(folder)
        for path in tracked(f"{folder}**{suffix}") | tracked(f"{folder}*{suffix}")
        if not path.endswith("__init__.py")
    }
    named = [module for module, _ in table_rows(heading)]
    assert sorted(name for name in set(named) if named.count(name) > 1) == []
    assert sorted(modules - set(named)) == [], "modules the table does not name"
    assert sorted(set(named) - modules) == [], "rows naming no module"


@pytest.mark.parametrize(("heading", "folder"), TABLES.items())
def test_every_module_names_tests_that_exist(heading, folder):
    for module, tests in table_rows(heading):
        named = TEST_FILE.findall(tests)
        assert named, f"{folder}{module} names no tests"
        assert [t for t in named if not (ROOT / "tests" / t).exists()] == [], module
