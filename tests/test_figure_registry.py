"""One registry of the lesson's figures: the web, the notebook and ``attnlab plot`` read it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from matplotlib.figure import Figure

from attnlab import figures
from attnlab.content.sections import all_sections
from attnlab.figures import registry
from attnlab.figures.files import make_figures
from attnlab.notebook import cells

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_every_figure_the_lesson_shows_is_registered_once() -> None:
    shown = {b.data["name"] for s in all_sections("en") for b in s.blocks if b.kind == "figure"}
    assert shown == set(registry.NAMES)
    assert len(set(registry.NAMES)) == len(registry.LESSON)


def test_the_notebook_shows_the_registered_line_of_code() -> None:
    (block,) = [b for s in all_sections("en") for b in s.blocks
                if b.kind == "figure" and b.data["name"] == "chain_a"]  # fmt: skip
    assert cells.block_cell(block, "en").splitlines()[1] == (
        "figures.plot_chain(figures.lesson_source(LANG), b=0, lang=LANG)"
    )
    for f in registry.LESSON:
        assert f.code.startswith(f"figures.{f.function}(") and f.code.endswith("lang=LANG)")
        assert callable(getattr(figures, f.function)), f.function


def _drawn(fig: Figure) -> list[list[float]]:
    """What a figure shows: each image's numbers, each line's y values, each bar's height."""
    out: list[list[float]] = []
    for ax in fig.axes:
        out += [im.get_array().ravel().tolist() for im in ax.images]
        out += [list(map(float, line.get_ydata())) for line in ax.get_lines()]
        out += [[float(p.get_height())] for p in ax.patches if hasattr(p, "get_height")]
    return out


@pytest.mark.parametrize("name", ["chain_a", "mask"])
def test_the_notebook_line_draws_what_the_registry_draws(name: str) -> None:
    f = registry.figure(name)
    by_code = eval(f.code, {"figures": figures, "LANG": "en"})  # our own registered line
    assert _drawn(by_code) == _drawn(f.draw("en")) != []


def test_plot_names_the_lesson_figures_as_the_registry_does() -> None:
    for f in registry.LESSON:
        if f.kind in registry.SOURCE_KINDS:
            source = figures.lesson_source("en").select([0] if f.args.get("b") == 0 else [0, 1])
            stems = [stem for stem, _ in make_figures(f.kind, source, "en")]
        else:
            stems = [stem for stem, _ in make_figures(f.kind, None, "en")]
        assert f.file in stems, (f.name, stems)


def test_an_unknown_figure_names_the_figures_there_are() -> None:
    with pytest.raises(KeyError, match=r"figure must be one of weights, chain_a, .*got 'pie'"):
        registry.figure("pie")


@pytest.mark.process
def test_the_registry_loads_no_matplotlib() -> None:
    code = "import sys, attnlab.figures.registry; print('matplotlib' in sys.modules)"
    src = Path(registry.__file__).parents[2]
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={"PYTHONPATH": str(src)}, timeout=120, check=True)  # fmt: skip
    assert done.stdout.strip() == "False"
