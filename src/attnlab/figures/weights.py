"""Attention-weight heatmaps: prompts side by side, or a batch × head grid for several heads."""

from __future__ import annotations

import torch
from matplotlib import colormaps
from matplotlib.axes import Axes
from matplotlib.cm import ScalarMappable
from matplotlib.colors import Normalize
from matplotlib.figure import Figure

from attnlab.figures.heatmap import ANNOTATE_MAX_T, draw_heatmap, masked_patch, new_figure
from attnlab.figures.labels import text, token_labels
from attnlab.figures.source import PlotSource
from attnlab.figures.text_room import extra_inches, fit_title, label_inches, tick_size, turn_columns

#: Sequential, light-to-dark, readable in greyscale: a weight's size is its darkness.
WEIGHTS_CMAP = "Blues"
TITLE_SIZE = 11.0


def _panel_inches(T: int) -> float:
    """Side of one heatmap panel: roomy for the lesson's T=2, capped for T=32."""
    return min(max(1.0 + 0.75 * T, 2.6), 9.0)


def _panel_title(source: PlotSource, b: int, h: int | None, lang: str, inches: float) -> str:
    """``Prompt A  [我, 喜欢]`` (``· Head 2``), the tokens cut to fit ``inches``."""

    def make(tokens: str) -> str:
        title = f"{text('prompt', lang)} {source.names[b]}"
        if source.tokens is not None:
            title += "  [" + tokens + "]"
        return title if h is None else f"{title} · {text('head', lang)} {h + 1}"

    listed = ", ".join(source.tokens[b]) if source.tokens is not None else ""
    return fit_title(make, listed, inches, TITLE_SIZE)


def _draw_panel(
    ax: Axes, panel: torch.Tensor, norm: Normalize, source: PlotSource, b: int, h: int | None,
    lang: str, side: float,
) -> None:  # fmt: skip
    T = panel.size(-1)
    labels = token_labels(None if source.tokens is None else source.tokens[b], T)
    size = tick_size(T)
    draw_heatmap(
        ax, panel, row_labels=labels, col_labels=labels, cmap=colormaps[WEIGHTS_CMAP],
        norm=norm, visible=source.stages.causal_mask, masked_text=text("masked", lang),
        annotate=T <= ANNOTATE_MAX_T, fontsize=size,
        turn_columns=turn_columns(label_inches(labels, size), side / T),
    )  # fmt: skip
    ax.set_title(_panel_title(source, b, h, lang, side), fontsize=TITLE_SIZE)


def _label_width(source: PlotSource, T: int) -> float:
    """Inches of the widest tick label of any prompt."""
    rows = [None] if source.tokens is None else [source.tokens[b] for b in source.shown]
    return label_inches([s for row in rows for s in token_labels(row, T)], tick_size(T))


def plot_weights(source: PlotSource, lang: str = "zh") -> Figure:
    """Heatmap of ``weights`` ``[B, T_query, T_key]`` (or ``[B, n_head, T, T]``), one panel each.

    Rows are query positions and columns key positions, labelled with the tokens; each cell
    carries its weight, the future cells are hatched grey and labelled masked, and all panels
    share one colour scale from 0 to 1. A single head puts the prompts side by side; several
    heads make a grid with one row per prompt and one column per head.

    Example::

        >>> from attnlab.figures.source import lesson_source
        >>> fig = plot_weights(lesson_source("en"), lang="en")
        >>> len(fig.axes[0].images)
        1
    """
    weights = source.stages.weights  # [B, T, T] or [B, n_head, T, T]
    shown, heads, T = source.shown, source.num_heads, weights.size(-1)
    grid = source.multi_head  # batch × head; a single head puts the prompts side by side
    n_rows, n_cols = (len(shown), heads) if grid else (1, len(shown))
    side = _panel_inches(T)
    # A learner's long labels widen each panel's label column, and turned upright they
    # heighten its row (attnlab.figures.text_room).
    width = _label_width(source, T)
    tall = width if turn_columns(width, side / T) else 0.0
    fig = new_figure((side + extra_inches(width)) * n_cols + 1.2, (side + tall) * n_rows + 0.9)
    axes = fig.subplots(n_rows, n_cols, squeeze=False)
    # One scale for every panel: a weight is a share of one unit of reading, 0 to 1.
    cmap, norm = colormaps[WEIGHTS_CMAP], Normalize(0.0, 1.0)
    for i, b in enumerate(shown):
        for h in range(heads):
            row, col = (i, h) if grid else (0, i)
            panel = weights[b, h] if grid else weights[b]  # [T_query, T_key]
            _draw_panel(axes[row, col], panel, norm, source, b, h if grid else None, lang, side)
            if col == 0:
                axes[row, col].set_ylabel(text("query", lang))
            if row == 0:
                axes[row, col].set_xlabel(text("key", lang))
                axes[row, col].xaxis.set_label_position("top")
    fig.colorbar(ScalarMappable(norm, cmap), ax=axes, shrink=0.8, label=text("weight", lang))
    suptitle = text("weights_title", lang)
    if T > ANNOTATE_MAX_T:  # no "masked" text in the cells: a legend explains the hatch instead
        suptitle += "\n" + text("no_values", lang, limit=ANNOTATE_MAX_T)
        fig.legend(handles=[masked_patch(text("masked", lang))], loc="lower center")
    fig.suptitle(suptitle, fontsize=11)
    return fig
