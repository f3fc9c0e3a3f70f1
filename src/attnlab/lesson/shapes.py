"""Section 9: the shape of every stage, measured by running tensors through the fused module.

The lesson's own check (``example.SHAPE_CHECK``, ``B=1, T=3, C=4``) runs on real tensors of a few
numbers. :func:`measure_shapes`, behind ``attnlab shapes``, runs on PyTorch's ``meta`` device:
every operation runs and produces its output shape, but no numbers are stored or computed, so
``attnlab shapes --batch 64 --tokens 4096 --embed 4096 --heads 64`` (a quarter TiB of scores) is
measured in a moment with no memory at all. The lesson scripts stay off the meta device because
its Python kernels import ``torch._dynamo`` and sympy, about a second of start-up.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from attnlab.core.modules import CausalSelfAttention
from attnlab.core.pipeline import MultiHeadStages

#: (stage key, attribute of MultiHeadStages, axis names).
_ROWS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("input", "x", ("B", "T", "C")),
    ("qkv", "q", ("B", "n_head", "T", "d_head")),
    ("scores", "raw_scores", ("B", "n_head", "T_query", "T_key")),
    ("weights", "weights", ("B", "n_head", "T_query", "T_key")),
    ("head_outputs", "head_outputs", ("B", "n_head", "T", "d_head")),
    ("merged", "concat", ("B", "T", "C")),
    ("output", "output", ("B", "T", "C")),
)

#: Each stage's axis names, by stage key.
AXES: dict[str, tuple[str, ...]] = {key: axes for key, _, axes in _ROWS}


@dataclass(frozen=True)
class ShapeRow:
    """A stage, its measured shape and the names of its axes."""

    stage: str
    shape: tuple[int, ...]
    axes: tuple[str, ...]


def run_shape_check(
    batch: int, tokens: int, embed: int, heads: int, seed: int = 0
) -> MultiHeadStages:
    """Every stage of ``CausalSelfAttention`` on random ``[batch, tokens, embed]`` input, with
    real numbers (for small sizes, such as the lesson's)."""
    return _stages(batch, tokens, embed, heads, seed, "cpu")


def shape_rows(stages: MultiHeadStages) -> list[ShapeRow]:
    """The section-9 table of ``stages``: each stage's measured shape and axis names."""
    return [ShapeRow(key, tuple(getattr(stages, attr).shape), axes) for key, attr, axes in _ROWS]


def measure_shapes(
    batch: int, tokens: int, embed: int, heads: int, seed: int = 0
) -> list[ShapeRow]:
    """Run ``[batch, tokens, embed]`` input through ``CausalSelfAttention`` and record the shape
    of each stage (on the meta device: shapes only, so any size is measured at once)."""
    return shape_rows(_stages(batch, tokens, embed, heads, seed, "meta"))


def _stages(
    batch: int, tokens: int, embed: int, heads: int, seed: int, device: str
) -> MultiHeadStages:
    """Every stage of ``CausalSelfAttention`` on ``device`` (``"meta"``: shapes, no numbers)."""
    torch.manual_seed(seed)
    with torch.device(device):
        attn = CausalSelfAttention(embed, heads, context_length=tokens)
        x = torch.randn(batch, tokens, embed)  # [B, T, C]
    with torch.no_grad():
        return attn.stages(x)
