"""The import layers of the package: no module imports from a layer above its own.

Bottom to top: the flat core < lesson < show < debug < learn < bench < plots < web < commands
(the ``attnlab`` entry point, ``cli`` and ``__main__``, belongs to commands). Function-level
imports count too. In particular nothing in ``lesson/`` imports show/, debug/, learn/, plots/,
web/ or commands/: the lesson's numbers know nothing of how they are shown or graded.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "attnlab"
LAYERS = ("core", "lesson", "show", "debug", "learn", "bench", "plots", "web", "commands")
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
