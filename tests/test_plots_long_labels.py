"""Figures stay readable with the longest token labels a learner can give (24 characters, the
limit of ``tokens`` in an input file): no two tick labels overlap, every tick label lies inside
the figure, matplotlib warns of nothing, and each label is drawn in full on its axis."""

from __future__ import annotations

import itertools

import pytest
import torch
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from attnlab.figures import input_source, lesson_source, plot_chain, plot_merge, plot_weights
from attnlab.figures.labels import figure_label
from attnlab.inputs.model import TOKEN_MAX, parse_input

#: The widest Latin letter and a wide CJK character, each filling the 24 characters.
WIDE = {"latin": "W", "cjk": "长"}


def long_input(B: int, T: int, heads: int | None, letter: str):
    """Random numbers with ``tokens`` of :data:`TOKEN_MAX` characters, each ending in its
    position so no two are alike."""
    gen = torch.Generator().manual_seed(T)
    C = 4
    width = C if heads else 2
    data = {
        "x": torch.randn(B, T, C, generator=gen).tolist(),
        **{k: torch.randn(C, width, generator=gen).tolist() for k in ("w_q", "w_k", "w_v")},
        "tokens": [[letter * (TOKEN_MAX - 2) + f"{t:02d}" for t in range(T)] for _ in range(B)],
    }
    if heads:
        data["num_heads"] = heads
    return parse_input(data, source="long.json")


def tick_labels(fig: Figure, heatmaps_only: bool = False) -> list:
    """Every tick label drawn (visible and not empty), on every axes of ``fig`` (or only those
    of the heatmaps, the colour bar aside)."""
    return [
        label
        for ax in fig.axes
        if not heatmaps_only or (ax.images and ax.get_label() != "<colorbar>")
        for axis in (ax.xaxis, ax.yaxis)
        for label in axis.get_ticklabels()
        if label.get_visible() and label.get_text()
    ]


def assert_readable(fig: Figure, what: str) -> None:
    """No two tick labels overlap, and each label of a heatmap lies inside the figure (after a
    full draw's layout; the colour bar's end labels may stand half a line past its ends).

    ``draw_without_rendering`` runs the whole draw (layout, text measured with the Agg
    renderer, every warning) and only skips the pixels: the label boxes are the very boxes of
    ``canvas.draw()``, in half the time."""
    fig.draw_without_rendering()
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    boxes = [(label.get_text(), label.get_window_extent(renderer)) for label in tick_labels(fig)]
    overlaps = [
        (a, b) for (a, box_a), (b, box_b) in itertools.combinations(boxes, 2)
        if box_a.overlaps(box_b)
    ]  # fmt: skip
    assert not overlaps, f"{what}: {len(overlaps)} overlapping tick labels, e.g. {overlaps[:3]}"
    page = fig.bbox
    heatmaps = [(x.get_text(), x.get_window_extent(renderer)) for x in tick_labels(fig, True)]
    outside = [text for text, box in heatmaps if not (
        box.x0 >= page.x0 - 1 and box.x1 <= page.x1 + 1
        and box.y0 >= page.y0 - 1 and box.y1 <= page.y1 + 1)]  # fmt: skip
    assert not outside, f"{what}: tick labels outside the figure: {outside[:3]}"


def figures(B: int, T: int, heads: int | None, letter: str) -> dict[str, Figure]:
    source = input_source(long_input(B, T, heads, letter))
    drawn = {"weights": plot_weights(source, "en"), "chain": plot_chain(source, 0, 0, "zh")}
    if heads:
        drawn["merge"] = plot_merge(source, B - 1, "en")
    return drawn


@pytest.mark.filterwarnings("error")  # matplotlib's "axes sizes collapsed" warning fails
@pytest.mark.parametrize("letter", sorted(WIDE.values()))
@pytest.mark.parametrize(
    ("T", "heads"),
    [
        (2, None),
        pytest.param(3, 2, marks=pytest.mark.heavy),
        pytest.param(8, None, marks=pytest.mark.heavy),
    ],
)
def test_the_longest_labels_never_overlap(T: int, heads: int | None, letter: str) -> None:
    for name, fig in figures(2, T, heads, letter).items():
        assert_readable(fig, f"{name} T={T} heads={heads} {letter}")
        # Each position's label is on the figure in full.
        texts = {label.get_text() for label in tick_labels(fig)}
        for t in range(T):
            full = letter * (TOKEN_MAX - 2) + f"{t:02d}"
            assert f"t={t} {full}" in texts, (name, t)


@pytest.mark.slow
@pytest.mark.heavy
@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("letter", sorted(WIDE.values()))
@pytest.mark.parametrize(("B", "T"), [(2, 16), (1, 32)])
def test_the_longest_labels_on_the_largest_figures(B: int, T: int, letter: str) -> None:
    for name, fig in figures(B, T, 2, letter).items():
        assert_readable(fig, f"{name} T={T} {letter}")


@pytest.mark.filterwarnings("error")
def test_the_lesson_figures_are_as_readable() -> None:
    source = lesson_source("zh")
    for name, fig in {"weights": plot_weights(source, "zh"), "chain": plot_chain(source)}.items():
        assert_readable(fig, name)


def test_a_label_escaped_longer_than_the_limit_is_cut_with_an_ellipsis() -> None:
    """Control characters are drawn as escapes (``\\x1b``), four characters each: a label of
    24 of them is cut to the limit, so no label is wider than the longest plain one."""
    shown = figure_label("\x1b" * TOKEN_MAX)
    assert len(shown) == TOKEN_MAX and shown.endswith("…") and shown.startswith("\\x1b")
    assert figure_label("W" * TOKEN_MAX) == "W" * TOKEN_MAX  # a plain label is never cut
    assert figure_label("$a$") == r"\$a\$"  # read as text, not as mathtext


def test_the_overlap_check_can_fail() -> None:
    """Labels of 24 characters on cells a quarter of an inch wide, not turned, overlap."""
    fig = Figure(figsize=(3, 3))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.set_xticks(range(8), labels=["W" * TOKEN_MAX] * 8)
    with pytest.raises(AssertionError, match="overlapping tick labels"):
        assert_readable(fig, "crowded")
