"""The house rules: packages by responsibility, an explicit table of which package may import
which, no import cycle, a docstring in every package saying what it owns and may import, and one
home for the section count.

The table is the whole rule: a package not listed under another's allowed imports may not be
imported by it, at module level or inside a function. Module size is reported, not enforced.
"""

from __future__ import annotations

import ast
import re
import warnings
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "attnlab"
#: package → the packages it may import (itself always). Front ends at the bottom of the table.
ALLOWED: dict[str, frozenset[str]] = {
    name: frozenset(allowed)
    for name, allowed in {
        "text": (),
        "core": ("text",),
        "inputs": ("text", "core"),
        "lesson": ("text", "core"),
        "mistakes": ("text", "core", "lesson"),
        "progress": ("text", "core", "inputs"),
        "content": ("text", "core", "inputs", "lesson", "mistakes", "progress"),
        "grading": ("text", "core", "inputs", "lesson", "mistakes", "content"),
        "audit": ("text", "core", "inputs", "lesson", "mistakes"),
        "bench": ("text", "core"),
        "figures": ("text", "core", "inputs", "lesson", "bench"),
        "notebook": ("text", "core", "inputs", "lesson", "mistakes", "content", "grading",
                     "figures"),
        "web": ("text", "core", "inputs", "lesson", "mistakes", "content", "grading", "progress",
                "audit", "figures"),
        "cli": ("text", "core", "inputs", "lesson", "mistakes", "progress", "content", "grading",
                "audit", "bench", "figures", "notebook", "web"),
        "root": ("core", "cli"),  # attnlab/__init__.py (the public names) and __main__.py
    }.items()
}  # fmt: skip
#: Where the package must never be imported at module import time (the scripts parse their
#: arguments before torch loads).
NO_TORCH_AT_IMPORT = ("text",)
MAX_LINES = 350


def _package(module: str) -> str:
    """``attnlab.lesson.numbers`` → ``lesson``; ``attnlab`` and ``attnlab.__main__`` → ``root``."""
    parts = module.split(".")
    if len(parts) < 2 or not (PACKAGE / parts[1]).is_dir():
        return "root"
    return parts[1]


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, top_only: bool = False) -> set[str]:
    """Every module ``path`` imports (``attnlab`` or not), at any depth of the file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = tree.body if top_only else list(ast.walk(tree))
    found: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found |= {node.module, *(f"{node.module}.{a.name}" for a in node.names)}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
    return found


def _attnlab(names: set[str]) -> set[str]:
    return {name for name in names if name.split(".")[0] == "attnlab"}


MODULES = sorted(PACKAGE.rglob("*.py"))
PACKAGES = sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file())


def test_the_table_names_every_package() -> None:
    assert set(PACKAGES) | {"root"} == set(ALLOWED)


@pytest.mark.parametrize("path", MODULES, ids=lambda p: _module_name(p))
def test_imports_follow_the_table(path: Path) -> None:
    own = _package(_module_name(path))
    outside = sorted(
        n for n in _attnlab(_imports(path)) if _package(n) not in ALLOWED[own] | {own, "root"}
    )
    assert not outside, f"{_module_name(path)} ({own}) may not import {outside}"


@pytest.mark.parametrize("package", PACKAGES)
def test_every_package_says_what_it_owns_and_may_import(package: str) -> None:
    doc = ast.get_docstring(ast.parse((PACKAGE / package / "__init__.py").read_text("utf-8")))
    assert doc and len(doc) > 80, f"attnlab.{package} has no docstring saying what it owns"
    if ALLOWED[package]:
        assert "May import" in doc or "may import" in doc, f"attnlab.{package}: no 'May import'"


@pytest.mark.parametrize("package", NO_TORCH_AT_IMPORT)
def test_packages_that_load_before_torch_do_not_import_it(package: str) -> None:
    for path in sorted((PACKAGE / package).glob("*.py")):
        heavy = {n for n in _imports(path, top_only=True) if n.split(".")[0] in ("torch", "numpy")}
        assert not heavy, f"{_module_name(path)} imports {sorted(heavy)} at import time"


def test_the_rule_sees_a_forbidden_import(tmp_path: Path) -> None:
    fake = tmp_path / "demo.py"
    fake.write_text("def f():\n    from attnlab.cli import walk\n", encoding="utf-8")
    assert _attnlab(_imports(fake)) == {"attnlab.cli", "attnlab.cli.walk"}
    assert _package("attnlab.cli.walk") == "cli" and "cli" not in ALLOWED["lesson"]
    assert _package("attnlab") == "root" and _package("attnlab.core.pipeline") == "core"


def _first_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A cycle of ``graph`` (each node to the nodes it reaches), depth first, else None."""
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> list[str] | None:
        state[node] = 1
        for nxt in sorted(graph.get(node, set())):
            if state.get(nxt) == 1:
                return [*path, node, nxt]
            if nxt not in state and (found := visit(nxt, [*path, node])):
                return found
        state[node] = 2
        return None

    return next((c for n in sorted(graph) if n not in state and (c := visit(n, []))), None)


def test_the_table_has_no_cycle() -> None:
    cycle = _first_cycle({p: set(allowed) - {"root"} for p, allowed in ALLOWED.items()})
    assert cycle is None, "cycle in the table: " + " -> ".join(cycle or [])


def test_the_cycle_search_finds_a_cycle() -> None:
    assert _first_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _first_cycle({"a": {"b"}, "b": set()}) is None


def test_the_section_count_has_one_home() -> None:
    """The page's 20 sections are ``example.SECTION_IDS``; the checks and the web follow it."""
    from attnlab.content import knowledge, sections
    from attnlab.core import example

    assert [s.id for s in knowledge.sections("en")] == list(example.SECTION_IDS)
    assert sorted(sections.BUILDERS) == list(example.SECTION_IDS)
    literal = re.compile(r"\brange\(20\)|\b< 20\b|SECTION_COUNT\s*=")
    homes = [
        _module_name(path)
        for path in MODULES
        if literal.search(path.read_text(encoding="utf-8")) and path.stem != "example"
    ]
    assert not homes, f"the section count is defined again in {homes}"


def test_no_import_cycle_at_module_level() -> None:
    """Imports at the top of a module form no cycle (function-level imports may defer)."""
    names = {_module_name(p): p for p in MODULES}
    graph = {m: (_imports(p, top_only=True) & names.keys()) - {m} for m, p in names.items()}
    cycle = _first_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_long_modules_are_reported() -> None:
    """The line cap is a warning: a long module is worth a look, not a failed build."""
    long = {
        _module_name(p): n
        for p in MODULES
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    if long:
        warnings.warn(f"modules over {MAX_LINES} lines: {long}", stacklevel=1)
