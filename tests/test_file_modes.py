"""Files attnlab writes get the mode a normal file gets: ``0o666`` under the umask when new, the
old mode when replaced; and every write in the package goes through the one atomic helper."""

from __future__ import annotations

import ast
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from attnlab.cli.main import app
from attnlab.notebook.build import FILE_NAME
from attnlab.progress.store import ProgressStore
from attnlab.text import atomic

runner = CliRunner()
SRC = Path(__file__).parents[1] / "src" / "attnlab"


@pytest.fixture(params=[0o022, 0o027])
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    """Run the test under this umask (and put the old one back)."""
    old = os.umask(request.param)
    yield request.param
    os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_helper_gives_a_new_file_the_umask_mode_and_keeps_an_old_ones(
    tmp_path: Path, umask: int
) -> None:
    new = tmp_path / "new.txt"
    atomic.write_text(new, "one")
    assert _mode(new) == 0o666 & ~umask, oct(_mode(new))
    new.chmod(0o604)
    atomic.write_text(new, "two")
    assert new.read_text() == "two" and _mode(new) == 0o604, oct(_mode(new))


def test_notebook_file_has_a_normal_files_mode(tmp_path: Path, umask: int) -> None:
    result = runner.invoke(app, ["notebook", "--lang", "en", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert _mode(tmp_path / FILE_NAME) == 0o666 & ~umask, oct(_mode(tmp_path / FILE_NAME))


def test_figure_file_has_a_normal_files_mode(tmp_path: Path, umask: int) -> None:
    result = runner.invoke(app, ["plot", "mask", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert _mode(tmp_path / "mask.png") == 0o666 & ~umask, oct(_mode(tmp_path / "mask.png"))


def test_progress_export_has_a_normal_files_mode(tmp_path: Path, umask: int) -> None:
    with ProgressStore.open(tmp_path / "home") as store:
        store.mark_complete(3)
    target = tmp_path / "export.json"
    args = ["--lang", "en", "progress", "export", str(target), "--data-dir", str(tmp_path / "home")]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert _mode(target) == 0o666 & ~umask, oct(_mode(target))


# Writes that are not files a learner keeps: kernel knobs and the null device.
NOT_FILES = {("bench/rss.py", "/proc/self/clear_refs"), ("bench/measure.py", "os.devnull")}
WRITERS = {"write_text", "write_bytes", "mkstemp", "NamedTemporaryFile"}
MOVERS = {"replace", "rename"}  # as os.replace / os.rename (str.replace is no write)


def _raw_writes(path: Path) -> Iterator[str]:
    """Calls in ``path`` that write a file by hand instead of through :mod:`attnlab.text.atomic`."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        owner = func.value if isinstance(func, ast.Attribute) else None
        moves = name in MOVERS and isinstance(owner, ast.Name) and owner.id == "os"
        helper = isinstance(owner, ast.Name) and owner.id == "atomic"
        if (name in WRITERS and not helper) or moves:
            yield f"{name}() at line {node.lineno}"
        elif name == "open" and any(
            isinstance(a, ast.Constant) and isinstance(a.value, str) and "w" in a.value
            for a in [*node.args[1:2], *(k.value for k in node.keywords if k.arg == "mode")]
        ):
            target = ast.unparse(node.args[0]) if node.args else ""
            if (path.relative_to(SRC).as_posix(), target.strip("'\"")) not in NOT_FILES:
                yield f"open({target}, 'w') at line {node.lineno}"


def test_every_file_is_written_through_the_atomic_helper() -> None:
    found = {
        path.relative_to(SRC).as_posix(): list(_raw_writes(path))
        for path in SRC.rglob("*.py")
        if path != SRC / "text" / "atomic.py"
    }
    assert {name: calls for name, calls in found.items() if calls} == {}


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads Linux's /proc")
def test_the_umask_is_read_without_being_changed(
    umask: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Changing the umask, even for a moment, would give a file another thread creates then
    the borrowed mask (the web server writes from several threads)."""
    from attnlab.text import atomic

    def changed(mask: int) -> int:
        raise AssertionError("the umask was changed to read it")

    with monkeypatch.context() as patched:  # undone before the umask fixture puts it back
        patched.setattr(atomic.os, "umask", changed)
        assert atomic.new_file_mode() == 0o666 & ~umask
