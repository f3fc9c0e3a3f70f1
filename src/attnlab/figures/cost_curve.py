"""Section 17 drawn: score elements ``B·n_head·T²`` against T on log-log axes."""

from __future__ import annotations

import math
from dataclasses import dataclass

from matplotlib.axes import Axes
from matplotlib.figure import Figure

from attnlab.core import example
from attnlab.figures.effects import REFERENCE_STYLE, UNSCALED_STYLE
from attnlab.figures.heatmap import new_figure
from attnlab.figures.labels import text
from attnlab.lesson import numbers
from attnlab.lesson.cost import score_elements

#: T = 2, 4, ..., 16384.
COST_TOKENS: tuple[int, ...] = tuple(2**i for i in range(1, 15))


@dataclass(frozen=True)
class CostData:
    """Measured score elements for each T, and the lesson's two table rows."""

    batch: int
    heads: int
    tokens: list[int]
    elements: list[int]
    lesson_tokens: list[int]
    lesson_elements: list[int]


def cost_data(tokens: tuple[int, ...] = COST_TOKENS) -> CostData:
    """Score elements for the lesson's B and n_head (section 17's table) at each T."""
    batch, heads = example.COST_CHECK.batch, example.COST_CHECK.heads
    lesson = numbers.cost_rows()
    return CostData(
        batch, heads, list(tokens), [score_elements(batch, heads, t) for t in tokens],
        [r.tokens for r in lesson], [r.elements for r in lesson],
    )  # fmt: skip


def plot_cost(data: CostData | None = None, lang: str = "zh") -> Figure:
    """Log-log curve of score elements, a T² reference line, the lesson's T=2 and T=1000 marked.

    On log-log axes T² is a straight line of slope 2: doubling T moves one step right and two
    steps up, i.e. ×4 elements.
    """
    data = cost_data() if data is None else data
    fig = new_figure(8.0, 5.2)
    ax = fig.subplots()
    label = text("cost_curve", lang, B=data.batch, H=data.heads)
    ax.plot(data.tokens, data.elements, label=label, **UNSCALED_STYLE)
    ax.plot(data.tokens, [t * t for t in data.tokens], label=text("t_squared", lang),
            **REFERENCE_STYLE)  # fmt: skip
    ax.plot(data.lesson_tokens, data.lesson_elements, "D", color="#d95f02", markersize=9,
            label=text("lesson_rows", lang), zorder=3)  # fmt: skip
    first = data.lesson_elements[0]
    for t, n in zip(data.lesson_tokens, data.lesson_elements, strict=True):
        note = f"T={t}: {n:,}" + ("" if n == first else f"  (×{n // first:,})")
        _annotate_row(ax, note, t, n, data.tokens)
    ax.set_ylim(1, max(data.elements) * 5)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=10)
    ax.set_xticks(data.tokens[::2], labels=[f"{t:,}" for t in data.tokens[::2]])
    ax.set_xlabel(text("tokens_axis", lang))
    ax.set_ylabel(text("elements_axis", lang))
    ax.grid(True, which="major", color="#dddddd", linewidth=0.8)
    ax.legend(loc="upper left", fontsize=10)
    ax.set_title(text("cost_title", lang), fontsize=12)
    return fig


def _annotate_row(ax: Axes, note: str, t: int, n: int, tokens: list[int]) -> None:
    """Label the lesson's row (t, n) below the T² reference line, where the plot is empty.

    A label near the right end is centred under its point rather than starting at it, so the
    long T=1000 label stays inside the axes."""
    place = math.log(t / tokens[0]) / math.log(tokens[-1] / tokens[0])  # 0 left .. 1 right
    if place < 0.25:
        where, ha = (t * 2.5, n / 8), "left"
    else:
        where, ha = (t, n / 1000), "center" if place < 0.8 else "right"
    arrow = {"arrowstyle": "->", "color": "#a04000"}
    ax.annotate(note, (t, n), xytext=where, ha=ha, va="center", fontsize=11, color="#a04000",
                arrowprops=arrow)  # fmt: skip
