"""``attnlab notebook``: the lesson as a Jupyter notebook that runs top to bottom in a fresh
kernel (nbclient + ipykernel), in both languages, and shows the lesson's numbers.

The two notebooks are written by the command and executed once, side by side, for the module.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient
from published import row
from typer.testing import CliRunner

from attnlab.cli.main import app
from attnlab.content import knowledge, listings
from attnlab.content.sections import all_sections
from attnlab.core.example import LANGS
from attnlab.figures.registry import NAMES
from attnlab.notebook import build, kernel
from attnlab.notebook.build import FILE_NAME, write_notebook
from attnlab.notebook.kernel import check
from attnlab.notebook.markdown import escape

runner = CliRunner()


def _write_and_run(root: Path) -> dict[str, Any]:
    """Each language's notebook, written by ``attnlab notebook`` and executed (both at once)."""
    notebooks = {}
    for lang in LANGS:
        out = root / lang / "fresh"  # created by the command
        result = runner.invoke(app, ["notebook", "--lang", lang, "--out", str(out)])
        assert result.exit_code == 0, result.output
        assert f"jupyter lab {out / FILE_NAME}" in result.stdout
        notebooks[lang] = nbformat.read(out / FILE_NAME, as_version=4)

    async def run_all() -> None:
        clients = [
            NotebookClient(nb, timeout=240, kernel_name="python3") for nb in notebooks.values()
        ]
        await asyncio.gather(*(c.async_execute() for c in clients))

    # In a thread of its own: a worker that ran a browser test holds Playwright's event loop in
    # this thread, and asyncio.run() refuses to start inside a running loop.
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, run_all()).result()  # a cell that raises fails here
    return notebooks


def _outputs(nb: Any) -> str:
    parts = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            assert out.output_type != "error", out
            parts.append(out.get("text", ""))
            parts += [v for k, v in out.get("data", {}).items() if k.startswith("text/")]
    return "\n".join(parts)


def _check_numbers_and_figures(nb: Any, lang: str) -> None:
    text = _outputs(nb)
    for key in ("weights.A.final", "weights.B.final", "experiment.grad"):
        assert row(key).text in text, f"{lang}: {key} {row(key).text} not in the outputs"
    images = [o for c in nb.cells for o in c.get("outputs", []) if "image/png" in o.get("data", {})]
    shown = {b.data["name"] for s in all_sections(lang) for b in s.blocks if b.kind == "figure"}
    assert len(images) == len(shown) and shown <= set(NAMES), (lang, len(images), shown)


def _check_cells(nb: Any, lang: str) -> None:
    markdown = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    for s in all_sections(lang):
        assert f"## {escape(s.label)} {escape(s.title)}" in markdown
    assert "$$\n" in markdown and "|---|" in markdown and "\n1. " in markdown
    sources = {c.source: c for c in nb.cells if c.cell_type == "code"}
    for name in listings.NAMES:
        cell = sources[listings.listing(name, lang).rstrip("\n")]  # exactly the tested text
        printed = "".join(o.get("text", "") for o in cell.outputs)
        assert all(line in printed for line in listings.expected_lines(name)), printed
    exercises = [c for c in nb.cells if "\ncheck(" in c.source]
    ids = [c.source.split("check(")[1].split(",")[0].strip("'") for c in exercises]
    assert ids == list(knowledge.exercise_ids())
    waiting = "还没有作答" if lang == "zh" else "Not answered yet"
    assert all(waiting in c.outputs[0]["text"] for c in exercises)


@pytest.mark.process
def test_notebook_runs_in_a_fresh_kernel_and_shows_the_lesson(tmp_path: Path) -> None:
    """Both languages in one test, so the two kernels start once even under xdist: no cell
    fails; the outputs hold the published numbers and every figure; sections are Markdown,
    the listings runnable cells of exactly the tested text, each exercise a grader cell."""
    for lang, nb in _write_and_run(tmp_path).items():
        _check_numbers_and_figures(nb, lang)
        _check_cells(nb, lang)


@pytest.mark.parametrize(
    ("lang", "answer", "verdict"),
    [
        ("en", "0.40", "✓ Right: 0.40"),
        ("zh", "0.40", "✓ 正确：0.40"),
        ("en", ["0.40"], "✓ Right: 0.40"),
        ("en", 0.5, "✗ Not yet"),
        ("zh", "abc", "⚠ 无法读取 · "),
    ],
)
def test_exercise_cell_prints_the_graders_verdict(
    capsys: pytest.CaptureFixture[str], lang: str, answer: object, verdict: str
) -> None:
    kernel._WRONG.clear()
    check("4c", answer, lang)
    printed = capsys.readouterr().out
    assert printed.startswith(verdict) or verdict in printed.splitlines()[0], printed
    # A wrong try earns the first rung of help on its next line, nothing more.
    assert printed.count("\n") == (2 if verdict.startswith("✗") else 1), printed


def test_markdown_escapes_what_would_become_markup() -> None:
    assert escape("W_Q*, $5 <b>") == r"W\_Q\*, \$5 \<b\>"


def test_bad_out_is_one_line_exit_2_and_writes_nothing(tmp_path: Path) -> None:
    a_file = tmp_path / "notes.txt"
    a_file.write_text("mine", encoding="utf-8")
    for out, message in [
        (a_file, "--out: expected a directory, found a file"),
        (a_file / "sub", "--out: cannot write into"),
    ]:
        result = runner.invoke(app, ["notebook", "--out", str(out), "--lang", "en"])
        assert result.exit_code == 2 and result.stdout == "", result.output
        assert result.stderr.count("\n") == 1 and message in result.stderr, result.stderr
    assert a_file.read_text(encoding="utf-8") == "mine" and sorted(tmp_path.iterdir()) == [a_file]


def test_a_failed_write_leaves_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(nb: object, f: Any) -> None:
        f.write('{"cells": [')  # half a notebook, then the disk fills up
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(build.nbformat, "write", broken)
    with pytest.raises(ValueError, match="No space left on device"):
        write_notebook("en", tmp_path)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("found", [None, "/usr/bin/jupyter"])
def test_the_command_says_what_opens_the_notebook(
    found: str | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without JupyterLab the command names the extra that installs it, never a bare
    ``jupyter lab`` that would fail."""
    monkeypatch.setattr("shutil.which", lambda name: found)
    result = runner.invoke(app, ["notebook", "--lang", "en", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert (tmp_path / FILE_NAME).is_file()
    if found is None:
        assert "pip install 'attnlab[notebook]'" in result.stdout
        assert not result.stdout.rstrip().endswith(f"jupyter lab {tmp_path / FILE_NAME}")
    else:
        assert f"Open it: jupyter lab {tmp_path / FILE_NAME}" in result.stdout
