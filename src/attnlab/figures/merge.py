"""The end of the multi-head chain for one prompt: each head's output → concat → W_O → output.

:func:`attnlab.figures.chain.plot_chain` draws one head from X to that head's output (panels 1-9);
this figure continues the numbering with what happens after the heads: their outputs side by
side, their concatenation ``[T, C]``, the output projection ``W_O`` ``[C, C]`` and the result
``concat · W_O``.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from matplotlib import colormaps
from matplotlib.cm import ScalarMappable
from matplotlib.colors import Normalize
from matplotlib.figure import Figure

from attnlab.core.pipeline import MultiHeadStages
from attnlab.figures.chain import CHAIN_CMAP, TITLE_SIZE
from attnlab.figures.heatmap import ANNOTATE_MAX_T, draw_heatmap, new_figure
from attnlab.figures.labels import text, token_labels
from attnlab.figures.source import PlotSource
from attnlab.figures.text_room import extra_inches, fit_title, label_inches, tick_size

#: The chain figure of one head ends at panel 9 (that head's output); this one goes on from 10.
FIRST_PANEL = 10


@dataclass(frozen=True)
class _Panel:
    title: str  # "10. head 1 output\n$O^{1}$"
    values: torch.Tensor  # [rows, cols]
    rows: list[str]
    cols: list[str]
    caption: str  # "[B, T, C]\n= [1, 3, 4]"


def _caption(axes: str, shape: torch.Size) -> str:
    return f"[{axes}]\n= [{', '.join(str(n) for n in shape)}]"


def _concat_formula(n_head: int) -> str:
    """``[O^1, O^2]``, or ``[O^1, \\ldots, O^8]`` once listing every head gets long."""
    heads = [f"O^{{{h}}}" for h in range(1, n_head + 1)]
    return "[" + ", ".join(heads if n_head <= 3 else [heads[0], r"\ldots", heads[-1]]) + "]"


def _panels(source: PlotSource, b: int, lang: str) -> list[_Panel]:
    """Panels for prompt ``b``: one per head, then concat, W_O and the output."""
    stages = source.stages
    if not isinstance(stages, MultiHeadStages):
        raise ValueError("plot_merge needs multi-head stages (an input with num_heads)")
    T, C = stages.concat.shape[1:]
    tokens = token_labels(None if source.tokens is None else source.tokens[b], T)
    features = [f"c={i}" for i in range(C)]
    heads = stages.head_outputs  # [B, n_head, T, d_head]
    panels = [
        _Panel(f"{FIRST_PANEL + h}. {text('head_output', lang, head=h + 1)}\n$O^{{{h + 1}}}$",
               heads[b, h], tokens, [f"d={i}" for i in range(heads.size(-1))],
               _caption("B, n_head, T, d_head", heads.shape))
        for h in range(heads.size(1))
    ]  # fmt: skip
    n = FIRST_PANEL + len(panels)
    w_o = torch.eye(C, dtype=stages.concat.dtype) if source.w_o is None else source.w_o  # [C, C]
    w_o_note = text("w_o_identity" if source.w_o is None else "w_o_given", lang)
    panels += [
        _Panel(f"{n}. concat\n${_concat_formula(heads.size(1))}$", stages.concat[b], tokens,
               features, _caption("B, T, C", stages.concat.shape)),
        _Panel(f"{n + 1}. W_O\n{w_o_note}", w_o, features, features, _caption("C, C", w_o.shape)),
        _Panel(f"{n + 2}. output\nconcat$\\,W_O$", stages.output[b], tokens, features,
               _caption("B, T, C", stages.output.shape)),
    ]  # fmt: skip
    return panels


def plot_merge(source: PlotSource, b: int = 0, lang: str = "zh") -> Figure:
    """How prompt ``b``'s heads become one output: ``Concat(O¹..Oⁿ) · W_O``, panel by panel.

    Every head's output ``[T, d_head]``, the concatenation ``[T, C]`` (head h in columns
    ``h·d_head .. (h+1)·d_head - 1``), ``W_O`` ``[C, C]`` (the identity when the input gave no
    ``w_o``, as in the pipeline) and the result, on one colour scale centred on 0.

    Example::

        >>> from attnlab.inputs.model import load_input
        >>> from attnlab.figures.source import input_source
        >>> fig = plot_merge(input_source(load_input("examples/two-heads.toml")), lang="en")
        >>> [ax.get_title().splitlines()[0] for ax in fig.axes[:4]]
        ['10. head 1 output', '11. head 2 output', '12. concat', '13. W_O']
    """
    panels = _panels(source, b, lang)
    limit = float(max(p.values.abs().max() for p in panels).clamp_min(1e-9))
    cmap, norm = colormaps[CHAIN_CMAP], Normalize(-limit, limit)
    T, C = panels[-1].values.shape  # the output's [T, C]
    cell = 0.75 if max(T, C) <= 4 else 0.4
    size = tick_size(T)
    width = sum(cell * p.values.size(1) + 0.6 for p in panels) + 2.2
    # Token labels stand left of the first panel and of the output: long ones widen both.
    width += 2 * extra_inches(label_inches(panels[0].rows, size))
    fig = new_figure(width, cell * max(T, C) + 2.8)
    grid = fig.add_gridspec(1, len(panels) + 1, width_ratios=[
        *(p.values.size(1) for p in panels), 0.3])  # fmt: skip
    annotate = max(T, C) <= ANNOTATE_MAX_T
    for i, panel in enumerate(panels):
        ax = fig.add_subplot(grid[0, i])
        draw_heatmap(ax, panel.values, row_labels=panel.rows, col_labels=panel.cols, cmap=cmap,
                     norm=norm, annotate=annotate, fontsize=size, aspect="auto")  # fmt: skip
        ax.set_title(panel.title, fontsize=11)
        ax.set_xlabel(panel.caption, fontsize=9.5, color="#444444")
        if 0 < i < len(panels) - 2:
            ax.tick_params(labelleft=False)  # same token rows as the first panel
    colours = ScalarMappable(norm=norm, cmap=cmap)
    fig.colorbar(colours, cax=fig.add_subplot(grid[0, -1]), label=text("value", lang))
    title = fit_title(lambda name: text("merge_title", lang, name=name, heads=source.num_heads),
                      source.prompt_label(b), width - 0.5, TITLE_SIZE)  # fmt: skip
    fig.suptitle(title, fontsize=TITLE_SIZE)
    return fig
