"""The interface the course's later weeks import from ``week07_attention.py``.

Week 8 begins with ``from week07_attention import fixed_example, attend``: the fixed example as
float64 tensors, and one head of causal self-attention in the lesson's formula convention. Both
lesson scripts re-export these two names, so importing a script prints nothing and runs nothing.

Example::

    >>> x, wq, wk, wv = fixed_example()
    >>> head, (query, key, value, scaled, masked, weights) = attend(x, wq, wk, wv)
    >>> [round(v, 6) for v in head[0, -1].tolist()]
    [0.598688, 0.401312]
"""

from __future__ import annotations

import torch

from attnlab.core import example
from attnlab.core.pipeline import attention_stages


def fixed_example() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """The lesson's X ``[2, 2, 4]`` and W_Q, W_K, W_V ``[4, 2]`` (float64, √2 factors exact)."""
    return example.lesson_x(), example.lesson_w_q(), example.lesson_w_k(), example.lesson_w_v()


def attend(
    x: torch.Tensor, wq: torch.Tensor, wk: torch.Tensor, wv: torch.Tensor
) -> tuple[torch.Tensor, tuple[torch.Tensor, ...]]:
    """One causal head on ``x`` ``[B, T, C]``: ``softmax(mask(XW_Q (XW_K)ᵀ / √d_k)) XW_V``.

    Returns:
        ``(output [B, T, d], (query, key, value, scaled_scores, masked_scores, weights))``;
        gradients flow to ``wq``, ``wk`` and ``wv``. Computed by :mod:`attnlab.core.pipeline`.
    """
    s = attention_stages(x, wq, wk, wv)
    return s.output, (s.q, s.k, s.v, s.scaled_scores, s.masked_scores, s.weights)


__all__ = ["attend", "fixed_example"]
