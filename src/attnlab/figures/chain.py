"""The whole chain for one prompt in one figure: X → Q, K, V → scores → weights → output."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from matplotlib import colormaps
from matplotlib.cm import ScalarMappable
from matplotlib.colors import Colormap, Normalize
from matplotlib.figure import Figure
from matplotlib.gridspec import SubplotSpec

from attnlab.core.pipeline import STAGE_AXES, MultiHeadStages
from attnlab.figures.heatmap import ANNOTATE_MAX_T, draw_heatmap, new_figure
from attnlab.figures.labels import text, token_labels
from attnlab.figures.source import PlotSource
from attnlab.figures.text_room import extra_inches, fit_title, label_inches, tick_size, turn_columns

#: Diverging and centred on 0: Q, K, V and the outputs have signs. ColorBrewer's RdBu prints
#: well and keeps a colour-blind reader's contrast; masked cells stay grey with a hatch.
CHAIN_CMAP = "RdBu_r"
TITLE_SIZE = 13.0

#: (stage, formula) in the order the data flows; row 1 projects, row 2 attends. Stage names are
#: the lesson's (and the pipeline's), so a learner can find each panel in the code. "input" and
#: "future" are translated labels rather than formulas.
_ROWS: tuple[tuple[tuple[str, str], ...], ...] = (
    (("x", "input"), ("q", "$XW_Q$"), ("k", "$XW_K$"), ("v", "$XW_V$")),
    (
        ("raw_scores", r"$QK^\top$"),
        ("scaled_scores", r"$S/\sqrt{d_k}$"),
        ("masked_scores", "future"),
        ("weights", "softmax(dim=-1)"),
        ("output", r"weights$\,V$"),
    ),
)
#: Stages whose columns are key positions (labelled with tokens) rather than features.
_SCORE_STAGES = ("raw_scores", "scaled_scores", "masked_scores", "weights")
#: What a masked (future) cell says in the stages that have one.
_MASKED_TEXT = {"masked_scores": "−∞", "weights": "0"}


@dataclass(frozen=True)
class _Panel:
    number: int
    stage: str
    title: str
    values: torch.Tensor  # [rows, cols] of this prompt (and head)
    caption: str  # the stage's full shape, e.g. "[B, T, d_head]\n= [2, 2, 2]"


def _panels(source: PlotSource, b: int, h: int) -> list[list[_Panel]]:
    """The nine panels of prompt ``b`` (head ``h``), grouped in the figure's two rows."""
    stages = source.stages
    multi_head = isinstance(stages, MultiHeadStages)
    rows, number = [], 0
    for row in _ROWS:
        panels = []
        for stage, title in row:
            number += 1
            name = "head_outputs" if multi_head and stage == "output" else stage
            full = getattr(stages, name)  # [B, T, .] or [B, n_head, T, .]
            per_head = multi_head and stage != "x"
            axes = STAGE_AXES[stage]
            axes = (axes[0], "n_head", *axes[1:]) if per_head else axes
            caption = f"[{', '.join(axes)}]\n= [{', '.join(str(n) for n in full.shape)}]"
            values = full[b, h] if per_head else full[b]  # [rows, cols]
            panels.append(_Panel(number, stage, title, values, caption))
        rows.append(panels)
    return rows


def _draw_panel(
    fig: Figure, spec: SubplotSpec, panel: _Panel, source: PlotSource, tokens: list[str],
    cmap: Colormap, norm: Normalize, lang: str, turned: bool,
) -> None:  # fmt: skip
    """One stage's heatmap; with ``turned`` its token column labels stand upright."""
    ax = fig.add_subplot(spec)
    letter = "c" if panel.stage == "x" else "d"
    features = [f"{letter}={i}" for i in range(panel.values.size(1))]
    masked = _MASKED_TEXT.get(panel.stage)
    T = len(tokens)
    scores = panel.stage in _SCORE_STAGES
    draw_heatmap(
        ax, panel.values, row_labels=tokens, col_labels=tokens if scores else features,
        cmap=cmap, norm=norm, visible=source.stages.causal_mask if masked else None,
        masked_text=masked or "", annotate=T <= ANNOTATE_MAX_T, fontsize=tick_size(T),
        aspect="auto", turn_columns=turned and scores,
    )  # fmt: skip
    formula = text(panel.title, lang) if panel.title in ("input", "future") else panel.title
    ax.set_title(f"{panel.number}. {panel.stage}\n{formula}", fontsize=11)
    ax.set_xlabel(panel.caption, fontsize=9.5, color="#444444")


def plot_chain(source: PlotSource, b: int = 0, h: int = 0, lang: str = "zh") -> Figure:
    """Every stage of prompt ``b`` (head ``h``) as a small annotated heatmap, in order.

    Row 1: X and its projections Q, K, V. Row 2: raw scores, scaled, masked (future → −∞),
    weights, output. All panels share one colour scale centred on 0, each names the full shape
    of its stage under it, and score panels label their columns with the key tokens.

    Example::

        >>> from attnlab.figures.source import lesson_source
        >>> fig = plot_chain(lesson_source("en"), b=1, lang="en")
        >>> fig.axes[7].get_title().splitlines()[0]
        '8. weights'
    """
    rows = _panels(source, b, h)
    T = source.stages.x.size(1)
    tokens = token_labels(None if source.tokens is None else source.tokens[b], T)
    finite = torch.cat([p.values[p.values.isfinite()].flatten() for r in rows for p in r])
    limit = float(finite.abs().max().clamp_min(1e-9))
    cmap, norm = colormaps[CHAIN_CMAP], Normalize(-limit, limit)
    cell = 0.75 if T <= 4 else 0.4
    # Inches: cells, plus room per panel for its row labels, titles and shape caption; long
    # token labels widen the row labels' column and, turned upright, heighten the score row.
    label_width = label_inches(tokens, tick_size(T))
    turned = turn_columns(label_width, cell)
    width = max(sum(cell * p.values.size(1) + 0.35 for p in r) for r in rows) + 2.2
    width += extra_inches(label_width)
    # Each row's inches: its cells and room for titles and captions; the score row also holds
    # its upright labels (a nested grid keeps its labels inside its row's share).
    rows_inches = [cell * T + 1.7, cell * T + 1.7 + (label_width if turned else 0.0)]
    fig = new_figure(width, sum(rows_inches))
    fig.set_layout_engine("constrained", hspace=0.12)  # room between the two rows' captions
    # The colour bar gets its own column: one bar spanning two nested grids confuses the layout.
    grid = fig.add_gridspec(2, 2, width_ratios=[1.0, 0.02], height_ratios=rows_inches)
    for r, panels in enumerate(rows):
        widths = [p.values.size(1) for p in panels]
        sub = grid[r, 0].subgridspec(1, len(panels), width_ratios=widths)
        for i, panel in enumerate(panels):
            _draw_panel(fig, sub[i], panel, source, tokens, cmap, norm, lang, turned)
    for ax in fig.axes[1:4] + fig.axes[5:]:
        ax.tick_params(labelleft=False)  # the row labels of the first panel serve the row
    colours = ScalarMappable(norm=norm, cmap=cmap)
    fig.colorbar(colours, cax=fig.add_subplot(grid[:, 1]), label=text("value", lang))
    fig.suptitle(_chain_title(source, b, h, lang, width - 0.5), fontsize=TITLE_SIZE)
    return fig


def _chain_title(source: PlotSource, b: int, h: int, lang: str, inches: float) -> str:
    """The figure's title, naming prompt ``b`` with its tokens cut to fit ``inches``."""
    key = "chain_head_title" if isinstance(source.stages, MultiHeadStages) else "chain_title"
    return fit_title(lambda name: text(key, lang, name=name, head=h + 1),
                     source.prompt_label(b), inches, TITLE_SIZE)  # fmt: skip
