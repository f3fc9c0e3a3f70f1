"""The one annotated heatmap every matrix figure uses, and the figure factory.

Figures are built with :class:`matplotlib.figure.Figure` on an Agg canvas, never through
``pyplot``: no global figure list, no GUI backend, safe in a web server, and a notebook still
shows the returned figure.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
import torch
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import Colormap, Normalize
from matplotlib.figure import Figure
from matplotlib.image import AxesImage
from matplotlib.patches import Rectangle

from attnlab.figures.fonts import use_cjk_font
from attnlab.text.fmt import cell

#: Fill and hatch of a masked (future) cell: greys that survive black-and-white printing.
MASKED_FILL = "#e6e6e6"
MASKED_HATCH = "#9a9a9a"
#: Above this many tokens the cells are too small to carry a number.
ANNOTATE_MAX_T = 16


def new_figure(width: float, height: float) -> Figure:
    """A blank figure of ``width × height`` inches on an Agg canvas, CJK font in place."""
    use_cjk_font()
    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def masked_patch(label: str) -> Rectangle:
    """A legend handle that looks like a masked cell."""
    return Rectangle((0, 0), 1, 1, facecolor=MASKED_FILL, edgecolor=MASKED_HATCH, hatch="///",
                     label=label)  # fmt: skip


def _text_colour(cmap: Colormap, norm: Normalize, value: float) -> str:
    """White on dark cells, near-black on light ones (relative luminance of the cell)."""
    r, g, b, _ = cmap(norm(value))
    luminance = 0.2126 * r + 0.7152 * g + 0.0722 * b
    return "white" if luminance < 0.5 else "#1a1a1a"


def draw_heatmap(
    ax: Axes,
    values: torch.Tensor,
    *,
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    cmap: Colormap,
    norm: Normalize,
    visible: torch.Tensor | None = None,
    masked_text: str = "",
    annotate: bool = True,
    fontsize: float = 9.0,
    aspect: Literal["equal", "auto"] = "equal",
    turn_columns: bool = False,
) -> AxesImage:
    """Draw ``values`` ``[rows, cols]`` as a heatmap with a number in each cell.

    Cells where ``visible`` is False (the causal mask's future) are masked in the image array,
    filled grey with a hatch and labelled ``masked_text``, so they never look like a small value.
    Column labels sit on top, leaving the space under the axes for a caption, and are turned
    upright with ``turn_columns`` (labels wider than a cell, :mod:`attnlab.figures.text_room`).
    ``aspect="auto"`` lets cells fill a grid slot (square cells leave gaps that upset
    constrained layout).

    Returns:
        The :class:`AxesImage`; its ``get_array()`` is ``values`` with the hidden cells masked.
    """
    data = values.detach().to(torch.float64).cpu().numpy()  # [rows, cols]
    hidden = np.zeros(data.shape, bool) if visible is None else ~visible.cpu().numpy()
    image = ax.imshow(np.ma.masked_array(data, mask=hidden), cmap=cmap, norm=norm, aspect=aspect)
    for r, c in np.argwhere(hidden):
        ax.add_patch(
            Rectangle((c - 0.5, r - 0.5), 1, 1, facecolor=MASKED_FILL, edgecolor=MASKED_HATCH,
                      hatch="///", linewidth=0)
        )  # fmt: skip
    if annotate:
        _annotate(ax, data, hidden, cmap, norm, masked_text, fontsize)
    _label_axes(ax, row_labels, col_labels, fontsize, 90.0 if turn_columns else 0.0)
    return image


def _annotate(
    ax: Axes, data: np.ndarray, hidden: np.ndarray, cmap: Colormap, norm: Normalize,
    masked_text: str, fontsize: float,
) -> None:  # fmt: skip
    """Write each visible cell's value, and ``masked_text`` on a grey ground in hidden cells."""
    for (r, c), value in np.ndenumerate(data):
        if hidden[r, c]:
            ground = {"facecolor": MASKED_FILL, "edgecolor": "none", "pad": 1.0}
            ax.text(c, r, masked_text, ha="center", va="center", fontsize=fontsize,
                    color="#222222", bbox=ground)  # fmt: skip
        else:
            colour = _text_colour(cmap, norm, float(value))
            ax.text(c, r, cell(float(value)), ha="center", va="center",
                    fontsize=fontsize, color=colour)  # fmt: skip


def _label_axes(
    ax: Axes, row_labels: Sequence[str], col_labels: Sequence[str], size: float, turn: float
) -> None:
    """Token labels on both axes, column labels on top (turned ``turn`` degrees), thin white
    lines between cells."""
    ax.set_xticks(range(len(col_labels)), labels=list(col_labels), fontsize=size, rotation=turn)
    ax.set_yticks(range(len(row_labels)), labels=list(row_labels), fontsize=size)
    ax.xaxis.tick_top()
    ax.tick_params(length=0)
    ax.set_xticks(np.arange(len(col_labels) + 1) - 0.5, minor=True)
    ax.set_yticks(np.arange(len(row_labels) + 1) - 0.5, minor=True)
    ax.grid(which="minor", color="white", linewidth=2)
    ax.tick_params(which="minor", length=0)
    for spine in ax.spines.values():
        spine.set_visible(False)
