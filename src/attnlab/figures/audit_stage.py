"""``attnlab audit --figure``: the first stage where a learner's forward departs from the
reference, drawn side by side, the learner's table next to the reference's, with the cells that
differ outlined.

It draws from the plain data an audit result carries (``result["stage"]``, made by
:func:`attnlab.audit.stages.stage_data`), so the ``attnlab audit`` process needs neither the
auditor nor the learner's code: two 2-D tables of numbers (``None`` for −∞ or NaN) and their
labels.
"""

from __future__ import annotations

from typing import Any

import torch
from matplotlib import colormaps
from matplotlib.colors import Normalize
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from attnlab.figures.heatmap import ANNOTATE_MAX_T, draw_heatmap, new_figure

#: Diverging, centred on 0: the sign of a score or feature reads as its colour.
STAGE_CMAP = "RdBu_r"
#: Outline of a cell whose two values differ.
DIFF_EDGE = "#d62728"
#: Two values closer than this (absolute plus relative) count as equal, as in the audit.
TOL = 2e-4


def _tensor(rows: list[list[float | None]]) -> tuple[torch.Tensor, torch.Tensor]:
    """A table as ``[rows, cols]`` values (−∞/NaN drawn as 0) and the mask of real numbers."""
    known = torch.tensor([[v is not None for v in row] for row in rows], dtype=torch.bool)
    values = torch.tensor([[v if v is not None else 0.0 for v in row] for row in rows])
    return values.double(), known


def differing(got: torch.Tensor, want: torch.Tensor, got_known: torch.Tensor,
              want_known: torch.Tensor) -> torch.Tensor:  # fmt: skip
    """The cells where two same-shaped tables differ: a number against none, or two numbers
    further apart than :data:`TOL`."""
    apart = (got - want).abs() > TOL + TOL * want.abs()
    return (got_known != want_known) | (got_known & want_known & apart)


def plot_stage(stage: dict[str, Any], lang: str = "zh") -> Figure:
    """Two heatmaps, the learner's table and the reference's, cells that differ outlined.

    Args:
        stage: ``result["stage"]`` of an audit: ``label``, ``input`` (``{"zh", "en"}``),
            ``line``, ``got`` and ``want`` (lists of rows).
        lang: ``"zh"`` or ``"en"``.

    Returns:
        The figure (an Agg canvas; save it with ``savefig``).
    """
    got, got_known = _tensor(stage["got"])
    want, want_known = _tensor(stage["want"])
    limit = max(float(got.abs().max()), float(want.abs().max()), 1e-6)
    cmap, norm = colormaps[STAGE_CMAP], Normalize(-limit, limit)
    rows = max(got.size(0), want.size(0))
    cols = got.size(1) + want.size(1)
    fig = new_figure(min(2.0 + 0.7 * cols, 16.0), min(2.2 + 0.6 * rows, 10.0))
    axes = fig.subplots(1, 2)
    same_shape = got.shape == want.shape
    marks = differing(got, want, got_known, want_known) if same_shape else None
    line = stage.get("line")
    at_zh, at_en = (f"（第 {line} 行）", f" (line {line})") if line else ("", "")
    titles = (("你的代码" + at_zh, "your code" + at_en), ("参考", "reference"))
    for ax, values, known, title in zip(axes, (got, want), (got_known, want_known), titles,
                                        strict=True):  # fmt: skip
        draw_heatmap(
            ax, values, row_labels=[str(i) for i in range(values.size(0))],
            col_labels=[str(j) for j in range(values.size(1))], cmap=cmap, norm=norm,
            visible=known, masked_text="−∞", annotate=max(values.shape) <= ANNOTATE_MAX_T,
            fontsize=8.0,
        )  # fmt: skip
        ax.set_title(title[0] if lang == "zh" else title[1], fontsize=10)
        if marks is not None:
            for r, c in marks.nonzero().tolist():
                ax.add_patch(Rectangle((c - 0.44, r - 0.44), 0.88, 0.88, fill=False,
                                       edgecolor=DIFF_EDGE, linewidth=2.5, zorder=4))  # fmt: skip
    label, where = stage["label"][lang], stage["input"][lang]
    fig.suptitle(
        f"第一个不同的步骤：{label}（{where}；红框 = 不同）"
        if lang == "zh"
        else f"first stage that differs: {label} ({where}; red = differs)",
        fontsize=11,
    )
    return fig
