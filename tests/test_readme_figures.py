"""README.md's figure file names are the real ones: every ``attnlab ... plot`` line in its shell
blocks is run in an empty folder and must write exactly the files its comment names, and every
image the README shows is one of those names."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from matplotlib.figure import Figure
from test_plots_cli import bench_rows
from typer.testing import CliRunner

from attnlab.bench import write_csv
from attnlab.cli.main import app
from attnlab.figures import effects

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
SHELL_BLOCK = re.compile(r"```(?:sh|bash)\n(.*?)```", re.S)
FIGURE_NAME = re.compile(r"[\w./-]+\.(?:png|svg)")


def plot_lines() -> list[tuple[str, list[str]]]:
    """``(command, file names its comment declares)`` for each README line running ``plot``."""
    found = []
    for block in SHELL_BLOCK.findall(README):
        for line in block.splitlines():
            command, _, comment = line.partition("#")
            words = shlex.split(command)
            if words[:1] == ["attnlab"] and "plot" in words:
                # The names come before the comment's first ": " (what follows explains them).
                found.append((command.strip(), FIGURE_NAME.findall(comment.split(": ")[0])))
    return found


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    """Run every README plot line in its own empty folder: the files each one wrote."""
    runner, out = CliRunner(), {}
    small = effects.scale_data(d_values=(1, 4, 16), tokens=8, samples=16)
    with pytest.MonkeyPatch.context() as mp:
        # Only the file names are under test, so the slow parts are skipped: rendering pixels
        # (test_plots_cli.py checks real PNG/SVG files) and the full section 8 measurement
        # (test_plots.py checks its data).
        mp.setattr(Figure, "savefig", lambda self, file, **_: file.write(b"figure"))
        mp.setattr(effects, "scale_data", lambda: small)
        for i, (command, _) in enumerate(plot_lines()):
            folder = tmp_path_factory.mktemp(f"readme{i}")
            (folder / "examples").symlink_to(ROOT / "examples")
            write_csv(folder / "attnlab-bench.csv", bench_rows())
            before = {p for p in folder.rglob("*")}
            mp.chdir(folder)
            result = runner.invoke(app, shlex.split(command)[1:])
            assert result.exit_code == 0, f"{command}: {result.output}"
            new = [p for p in folder.rglob("*") if p not in before and p.is_file()]
            out[command] = sorted(str(p.relative_to(folder)) for p in new)
    return out


def test_the_readme_shows_the_plot_commands() -> None:
    commands = [command for command, _ in plot_lines()]
    kinds = {shlex.split(c)[shlex.split(c).index("plot") + 1] for c in commands}
    assert kinds == {"weights", "chain", "scale", "mask", "cost", "bench"}, commands
    assert "attnlab plot chain --input examples/two-heads.toml" in commands


@pytest.mark.parametrize(("command", "names"), plot_lines())
def test_each_plot_line_names_exactly_the_files_it_writes(
    written: dict[str, list[str]], command: str, names: list[str]
) -> None:
    assert names, f"README: {command!r} has no '# file.png' comment naming what it writes"
    assert written[command] == sorted(names), command


def test_readme_images_are_files_the_commands_write(written: dict[str, list[str]]) -> None:
    images = re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", README)
    real = {Path(name).name for names in written.values() for name in names}
    assert images, "README shows no figure"
    for image in images:
        assert (ROOT / image).is_file(), f"README shows {image}, which is not in the repository"
        assert Path(image).name in real, f"{image} is no name `attnlab plot` writes: {real}"
