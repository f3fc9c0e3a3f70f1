"""The house rules: no module imports from a layer above its own, no import cycle, a small flat
core, small modules, and one home for the section count.

Bottom to top: the flat core < lesson < show < debug < learn < course < bench < plots <
notebook < web < commands
(the ``attnlab`` entry point, ``cli`` and ``__main__``, belongs to commands). Function-level
imports count too. In particular nothing in ``lesson/`` imports show/, debug/, learn/, plots/,
web/ or commands/: the lesson's numbers know nothing of how they are shown or graded.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "attnlab"
LAYERS = (
    "core", "lesson", "show", "debug", "learn", "course", "bench", "plots", "notebook", "web",
    "commands",
)  # fmt: skip
ENTRY_POINTS = ("cli", "__main__")


def _layer(module: str) -> str:
    """``attnlab.lesson.numbers`` → ``lesson``; flat modules are the core."""
    parts = module.split(".")
    if len(parts) < 2:
        return "core"
    if parts[1] in ENTRY_POINTS:
        return "commands"
    return parts[1] if parts[1] in LAYERS else "core"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Every ``attnlab`` module ``path`` imports, at any depth of the file."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found |= {node.module, *(f"{node.module}.{a.name}" for a in node.names)}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
    return {name for name in found if name.split(".")[0] == "attnlab"}


MODULES = sorted(PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: _module_name(p))
def test_no_import_from_a_higher_layer(path: Path) -> None:
    module = _module_name(path)
    own = LAYERS.index(_layer(module))
    upward = sorted(n for n in _imports(path) if LAYERS.index(_layer(n)) > own)
    assert not upward, f"{module} ({LAYERS[own]}) imports from a higher layer: {upward}"


def test_lesson_imports_only_the_core_and_itself() -> None:
    lesson = [p for p in MODULES if _layer(_module_name(p)) == "lesson"]
    assert {_module_name(p) for p in lesson} >= {
        "attnlab.lesson.numbers",
        "attnlab.lesson.demos",
        "attnlab.lesson.steps",
    }
    for path in lesson:
        outside = {_layer(n) for n in _imports(path)} - {"core", "lesson"}
        assert not outside, f"{_module_name(path)} imports {sorted(outside)}"


def test_the_rule_sees_an_upward_import(tmp_path: Path) -> None:
    fake = tmp_path / "demo.py"
    fake.write_text("def f():\n    from attnlab.show import walk\n", encoding="utf-8")
    assert _imports(fake) == {"attnlab.show", "attnlab.show.walk"}
    assert _layer("attnlab.show.walk") == "show" and _layer("attnlab.pipeline") == "core"


def test_the_section_count_has_one_home() -> None:
    """The page's 20 sections are ``example.SECTION_IDS``; the checks and the web follow it."""
    from attnlab import example
    from attnlab.course import content
    from attnlab.learn import knowledge

    assert [s.id for s in knowledge.sections("en")] == list(example.SECTION_IDS)
    assert sorted(content.BUILDERS) == list(example.SECTION_IDS)
    literal = re.compile(r"\brange\(20\)|\b< 20\b|SECTION_COUNT\s*=")
    homes = [
        _module_name(path)
        for path in MODULES
        if literal.search(path.read_text(encoding="utf-8")) and path.stem != "example"
    ]
    assert not homes, f"the section count is defined again in {homes}"


MAX_FLAT = 12
MAX_LINES = 350


def test_no_import_cycle_at_module_level() -> None:
    """Imports at the top of a module form no cycle (function-level imports may defer)."""
    names = {_module_name(p): p for p in MODULES}

    def top(path: Path) -> set[str]:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found = set()
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found |= {node.module, *(f"{node.module}.{a.name}" for a in node.names)}
            elif isinstance(node, ast.Import):
                found |= {a.name for a in node.names}
        return found & names.keys()

    graph = {m: top(p) - {m} for m, p in names.items()}
    state: dict[str, int] = {}

    def visit(m: str, path: list[str]) -> None:
        state[m] = 1
        for t in sorted(graph[m]):
            assert state.get(t) != 1, "import cycle: " + " -> ".join([*path, m, t])
            if t not in state:
                visit(t, [*path, m])
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [])


def test_the_core_stays_small_and_flat() -> None:
    flat = sorted(p.stem for p in PACKAGE.glob("*.py") if p.stem not in ("__init__", "__main__"))
    assert len(flat) <= MAX_FLAT, f"{len(flat)} flat modules (at most {MAX_FLAT}): {flat}"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: _module_name(p))
def test_modules_are_small(path: Path) -> None:
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{_module_name(path)} has {lines} lines (at most {MAX_LINES})"
