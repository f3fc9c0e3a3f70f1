"""What a figure is drawn from: the pipeline's stages plus the names of prompts and tokens.

The command line and the web lesson build a :class:`PlotSource` (from the lesson's numbers or a
learner's ``--input`` file) and hand it to the figure functions; no figure computes attention.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import torch

from attnlab.core import example
from attnlab.core.pipeline import AttentionStages, MultiHeadStages
from attnlab.figures.labels import figure_label
from attnlab.inputs.model import LabInput
from attnlab.lesson import numbers
from attnlab.text.errors import InputError, shape_text

#: Largest T and C a figure stays readable at; bigger inputs belong to `cost` or `trace`.
MAX_TOKENS = 32
MAX_WIDTH = 32
#: Largest number of heatmap panels (batch × head) in one weights figure.
MAX_PANELS = 16

Stages = AttentionStages | MultiHeadStages


@dataclass(frozen=True)
class PlotSource:
    """Stages of one attention computation and the labels to draw them with.

    Attributes:
        stages: the pipeline's result (single head, or multi-head with an ``n_head`` axis).
        tokens: token strings ``[B][T]``, or None when the input named none.
        names: one short name per batch row ("A", "B" for the lesson; "0", "1", ... otherwise).
        stem: file-name stem of the input ("" for the lesson).
        rows: batch rows to draw (None: all).
        w_o: the output projection ``[C, C]`` that mixed the heads, or None when the input gave
            none (the pipeline then uses the identity).
    """

    stages: Stages
    tokens: list[list[str]] | None
    names: list[str]
    stem: str = ""
    rows: tuple[int, ...] | None = None
    w_o: torch.Tensor | None = None  # [C, C]

    @property
    def multi_head(self) -> bool:
        """True when the stages carry an ``n_head`` axis (even a single head)."""
        return isinstance(self.stages, MultiHeadStages)

    @property
    def num_heads(self) -> int:
        """1 for a single head, else the size of the ``n_head`` axis."""
        return self.stages.weights.size(1) if self.multi_head else 1

    @property
    def shown(self) -> list[int]:
        """The batch rows to draw, in order (all of them unless :meth:`select` narrowed it)."""
        return list(range(len(self.names))) if self.rows is None else list(self.rows)

    def prompt_label(self, b: int) -> str:
        """Prompt ``b``'s name for a title, with its tokens when known: ``"A [我, 喜欢]"``."""
        if self.tokens is None:
            return self.names[b]
        return f"{self.names[b]} [{', '.join(self.tokens[b])}]"

    def select(self, rows: list[int]) -> PlotSource:
        """The same source drawing only batch rows ``rows``; shapes still name the full batch."""
        return replace(self, rows=tuple(rows))


def lesson_source(lang: str = "zh") -> PlotSource:
    """Prompts A and B through the lesson's single head (sections 4-11)."""
    stages = numbers.stages()
    return PlotSource(stages, example.prompt_tokens(lang), example.prompt_names(stages.x.size(0)))


def input_source(lab: LabInput) -> PlotSource:
    """A learner's input, checked to be small enough to draw, through the pipeline."""
    check_plot_size(lab.x)
    B, T, _ = lab.x.shape
    # The loader fills in "0", "1", ... when the file names no tokens: "t=1" alone says that.
    unnamed = all(row == [str(t) for t in range(T)] for row in lab.tokens)
    # Labels from a file are shown as text: escaped once here for every title and tick label.
    tokens = None if unnamed else [[figure_label(tok) for tok in row] for row in lab.tokens]
    stem = Path(lab.source).stem
    return PlotSource(lab.stages(), tokens, example.prompt_names(B), stem, w_o=lab.w_o)


def check_plot_size(x: torch.Tensor) -> None:
    """Raise :class:`InputError` when ``x`` ``[B, T, C]`` is too big to draw readably."""
    _, T, C = x.shape
    if T > MAX_TOKENS or C > MAX_WIDTH:
        raise InputError(
            f"x is [B, T, C] = {shape_text(x.shape)}, too large to draw (figures need T <= "
            f"{MAX_TOKENS} and C <= {MAX_WIDTH}); use `attnlab cost` for large T or "
            "`attnlab trace --format json` for the numbers"
        )
