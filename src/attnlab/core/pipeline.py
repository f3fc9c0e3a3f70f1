"""The one attention code path: every stage of causal self-attention, named as in the lesson.

    X → Q/K/V → raw_scores → scaled_scores → masked_scores → weights → output

The modules in :mod:`attnlab.core.modules`, the lesson scripts, the command line, the plots, the
auditor's reference and the web lesson all call :func:`attention_output` (through :func:`attend`,
which keeps every stage, or the two wrappers below it), so no two of them can disagree about a
number.

Axis letters (defined once, used in every shape comment): ``B`` batch, ``T`` token positions
(``T_query`` rows, ``T_key`` columns of a score table), ``C`` model width, ``n_head`` heads,
``d_head`` width of one head (the lesson's ``d_k``).
"""

from __future__ import annotations

import math
from collections.abc import Collection
from dataclasses import dataclass, fields

import torch

from attnlab.core.memory_guard import check_scores_fit
from attnlab.text.errors import shape_text

#: The lesson's stage names, in the order the data flows.
STAGE_NAMES: tuple[str, ...] = (
    "x",
    "q",
    "k",
    "v",
    "raw_scores",
    "scaled_scores",
    "causal_mask",
    "masked_scores",
    "weights",
    "output",
)

#: Axis names of each stage for a single head.
STAGE_AXES: dict[str, tuple[str, ...]] = {
    "x": ("B", "T", "C"),
    "q": ("B", "T", "d_head"),
    "k": ("B", "T", "d_head"),
    "v": ("B", "T", "d_head"),
    "raw_scores": ("B", "T_query", "T_key"),
    "scaled_scores": ("B", "T_query", "T_key"),
    "causal_mask": ("T_query", "T_key"),
    "masked_scores": ("B", "T_query", "T_key"),
    "weights": ("B", "T_query", "T_key"),
    "output": ("B", "T", "d_head"),
}


def check_embeddings(x: object, embed_dim: int | None = None, name: str = "x") -> torch.Tensor:
    """Raise a clear error unless ``x`` is a float tensor ``[B, T, C]`` (with ``C=embed_dim``).

    Checklist item 1 of the lesson: attention reads embedding vectors, never token IDs.
    """
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor [B, T, C], got {type(x).__name__}")
    if not torch.is_floating_point(x):
        raise TypeError(
            f"{name} must hold embedding vectors [B, T, C] as floats, not token IDs: got a "
            f"{x.dtype} tensor of shape {shape_text(x.shape)}; look the IDs up in an embedding "
            "table first"
        )
    if x.dim() != 3:
        expected = f"[B, T, C] with C={embed_dim}" if embed_dim is not None else "[B, T, C]"
        raise ValueError(f"{name} must be {expected}, got shape {shape_text(x.shape)}")
    if embed_dim is not None and x.size(-1) != embed_dim:
        raise ValueError(
            f"{name} must be [B, T, C] with C={embed_dim}, got shape {shape_text(x.shape)}"
        )
    if x.size(1) == 0:
        raise ValueError(
            f"{name} must have at least one token (T >= 1), got shape {shape_text(x.shape)}"
        )
    return x


def check_positive(**sizes: int) -> None:
    """Raise ``ValueError`` naming the first size that is not a positive integer."""
    for name, value in sizes.items():
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{name} must be a positive int, got {type(value).__name__}")
        if value <= 0:
            raise ValueError(f"{name} must be a positive int, got {value}")


def causal_mask(T: int, device: torch.device | str | None = None) -> torch.Tensor:
    """Lower-triangular boolean mask ``M[t, j] = (j <= t)``, shape ``[T, T]`` (True = may read)."""
    return torch.tril(torch.ones(T, T, dtype=torch.bool, device=device))  # [T, T]


#: The stages :func:`attention_output` makes between q, k, v and the output, in order: the
#: ``[T, T]`` causal mask and four ``[..., T_query, T_key]`` score tensors.
SCORE_STAGES: tuple[str, ...] = STAGE_NAMES[4:9]


def attention_output(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    mask: torch.Tensor | None = None,
    return_stages: Collection[str] = (),
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """Causal scaled dot-product attention, keeping only the score stages asked for.

    ``softmax(mask(Q Kᵀ / √d_k)) V`` with the softmax over the key axis (dim=-1), one stage after
    the other. A ``[..., T, T]`` score stage not named in ``return_stages`` is freed as soon as
    the next one exists, so at most two of them (plus the ones kept) are alive at once.

    Args:
        q, k, v: ``[..., T, d_head]`` tensors with the same leading axes.
        mask: boolean ``[T_max, T_max]`` lower-triangular mask (True = visible); its top-left
            ``[T, T]`` block is used. Built with :func:`causal_mask` when omitted.
        return_stages: names from :data:`SCORE_STAGES` to keep and return.

    Returns:
        The output ``[..., T, d_head]`` and ``{name: stage}`` for each name in ``return_stages``
        (``[T, T]`` for ``causal_mask``, ``[..., T_query, T_key]`` for the others).

    Raises:
        ValueError: ``return_stages`` names something that is not in :data:`SCORE_STAGES`.
        attnlab.core.memory_guard.ScoresTooLargeError: the score tensors would not fit in memory.

    Example::

        >>> q = torch.randn(2, 5, 4)
        >>> out, kept = attention_output(q, q, q, return_stages=("weights",))
        >>> tuple(out.shape), list(kept), tuple(kept["weights"].shape)
        ((2, 5, 4), ['weights'], (2, 5, 5))
    """
    unknown = [name for name in return_stages if name not in SCORE_STAGES]
    if unknown:
        raise ValueError(
            f"return_stages must name stages from {', '.join(SCORE_STAGES)}, got {unknown}"
        )
    T, d_head = q.size(-2), q.size(-1)
    # Refuse, naming the GiB, before allocating scores the OS would kill us for (section 17).
    check_scores_fit(q, k)
    mask = causal_mask(T, q.device) if mask is None else mask[:T, :T]  # [T, T]
    kept: dict[str, torch.Tensor] = {}

    def stage(name: str, tensor: torch.Tensor) -> torch.Tensor:
        if name in return_stages:
            kept[name] = tensor
        return tensor

    # Each line rebinds ``scores``: the stage before it is freed unless it was kept.
    scores = stage("raw_scores", q @ k.transpose(-2, -1))  # [..., T, T]
    scores = stage("scaled_scores", scores / math.sqrt(d_head))  # [..., T, T]
    stage("causal_mask", mask)
    # −∞ before the softmax: exp(−∞) = 0 removes the future, a 0 fill would not (section 11).
    scores = stage("masked_scores", scores.masked_fill(~mask, float("-inf")))  # [..., T, T]
    scores = stage("weights", torch.softmax(scores, dim=-1))  # [..., T_query, T_key]
    output = scores @ v  # [..., T, d_head]
    return output, kept


@dataclass(frozen=True)
class ScoreStages:
    """What :func:`attend` computes from q, k, v (any leading axes, e.g. ``[B]`` or
    ``[B, n_head]``)."""

    raw_scores: torch.Tensor  # [..., T, T]
    scaled_scores: torch.Tensor  # [..., T, T]
    causal_mask: torch.Tensor  # [T, T]
    masked_scores: torch.Tensor  # [..., T, T]
    weights: torch.Tensor  # [..., T, T]
    output: torch.Tensor  # [..., T, d_head]


def attend(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None = None
) -> ScoreStages:
    """Causal scaled dot-product attention, returning every intermediate stage.

    :func:`attention_output` with every one of :data:`SCORE_STAGES` kept, so four
    ``[..., T, T]`` tensors stay alive. Arguments and shapes as there.

    Raises:
        attnlab.core.memory_guard.ScoresTooLargeError: the score tensors would not fit in memory.
    """
    output, stages = attention_output(q, k, v, mask, return_stages=SCORE_STAGES)
    return ScoreStages(output=output, **stages)


@dataclass(frozen=True)
class AttentionStages:
    """Every named stage of one causal attention head (see :data:`STAGE_AXES` for axes)."""

    x: torch.Tensor  # [B, T, C]
    q: torch.Tensor  # [B, T, d_head]
    k: torch.Tensor  # [B, T, d_head]
    v: torch.Tensor  # [B, T, d_head]
    raw_scores: torch.Tensor  # [B, T, T]
    scaled_scores: torch.Tensor  # [B, T, T]
    causal_mask: torch.Tensor  # [T, T]
    masked_scores: torch.Tensor  # [B, T, T]
    weights: torch.Tensor  # [B, T, T]
    output: torch.Tensor  # [B, T, d_head]

    def items(self) -> list[tuple[str, torch.Tensor]]:
        """(name, tensor) pairs in the lesson's order."""
        return [(f.name, getattr(self, f.name)) for f in fields(self)]


def _check_projection(w: object, name: str, rows: int, cols: int | None, x: torch.Tensor) -> None:
    if not isinstance(w, torch.Tensor) or w.dim() != 2:
        found = shape_text(w.shape) if isinstance(w, torch.Tensor) else type(w).__name__
        raise ValueError(f"{name} must be a 2-D tensor [C, d_head], got {found}")
    if w.size(0) != rows:
        raise ValueError(
            f"{name}: expected {rows} rows (C from x) but found {w.size(0)} "
            f"(shape {shape_text(w.shape)})"
        )
    if cols is not None and w.size(1) != cols:
        raise ValueError(f"{name}: expected {cols} columns (d_head from w_q) but found {w.size(1)}")
    if w.dtype != x.dtype:
        raise TypeError(f"{name} must have the dtype of x ({x.dtype}), got {w.dtype}")


def attention_stages(
    x: torch.Tensor, w_q: torch.Tensor, w_k: torch.Tensor, w_v: torch.Tensor
) -> AttentionStages:
    """One causal head in the lesson's formula convention: ``Q = X W_Q`` and so on.

    Args:
        x: input vectors ``[B, T, C]`` (floats, not token IDs).
        w_q, w_k, w_v: projections ``[C, d_head]``.

    Example::

        >>> from attnlab.core import example
        >>> s = attention_stages(example.lesson_x(), example.lesson_w_q(),
        ...                      example.lesson_w_k(), example.lesson_w_v())
        >>> [round(w, 4) for w in s.weights[0, 1].tolist()]
        [0.5987, 0.4013]
    """
    check_embeddings(x)
    C = x.size(-1)
    _check_projection(w_q, "w_q", C, None, x)
    _check_projection(w_k, "w_k", C, w_q.size(1), x)
    _check_projection(w_v, "w_v", C, None, x)
    q, k, v = x @ w_q, x @ w_k, x @ w_v  # [B, T, d_head] each
    s = attend(q, k, v)
    return AttentionStages(
        x, q, k, v, s.raw_scores, s.scaled_scores, s.causal_mask, s.masked_scores, s.weights,
        s.output,
    )  # fmt: skip


def split_heads(t: torch.Tensor, num_heads: int) -> torch.Tensor:
    """``[B, T, C]`` → ``[B, n_head, T, d_head]``; head h takes features h*d_head:(h+1)*d_head."""
    B, T, C = t.shape
    return t.view(B, T, num_heads, C // num_heads).transpose(1, 2)  # [B, n_head, T, d_head]


def merge_heads(t: torch.Tensor) -> torch.Tensor:
    """``[B, n_head, T, d_head]`` → ``[B, T, C]``: concatenation along the feature axis."""
    B, n_head, T, d_head = t.shape
    return t.transpose(1, 2).reshape(B, T, n_head * d_head)  # [B, T, C]


@dataclass(frozen=True)
class MultiHeadStages:
    """Every stage of multi-head attention; per-head tensors carry an ``n_head`` axis."""

    x: torch.Tensor  # [B, T, C]
    q: torch.Tensor  # [B, n_head, T, d_head]
    k: torch.Tensor  # [B, n_head, T, d_head]
    v: torch.Tensor  # [B, n_head, T, d_head]
    raw_scores: torch.Tensor  # [B, n_head, T, T]
    scaled_scores: torch.Tensor  # [B, n_head, T, T]
    causal_mask: torch.Tensor  # [T, T]
    masked_scores: torch.Tensor  # [B, n_head, T, T]
    weights: torch.Tensor  # [B, n_head, T, T]
    head_outputs: torch.Tensor  # [B, n_head, T, d_head]
    concat: torch.Tensor  # [B, T, C]
    output: torch.Tensor  # [B, T, C]

    def head(self, h: int) -> AttentionStages:
        """The stages of head ``h`` alone, as a single-head result."""
        return AttentionStages(
            self.x, self.q[:, h], self.k[:, h], self.v[:, h], self.raw_scores[:, h],
            self.scaled_scores[:, h], self.causal_mask, self.masked_scores[:, h],
            self.weights[:, h], self.head_outputs[:, h],
        )  # fmt: skip


def multi_head_stages(
    x: torch.Tensor,
    w_q: torch.Tensor,
    w_k: torch.Tensor,
    w_v: torch.Tensor,
    num_heads: int,
    w_o: torch.Tensor | None = None,
) -> MultiHeadStages:
    """Multi-head causal attention in formula convention, ``Concat(O¹..Oⁿ) W_O``.

    Args:
        x: ``[B, T, C]``; w_q, w_k, w_v: ``[C, C]``, head h owning columns
            ``h*d_head:(h+1)*d_head``; w_o: ``[C, C]`` (identity when omitted).
    """
    check_embeddings(x)
    C = x.size(-1)
    check_positive(num_heads=num_heads)
    if C % num_heads != 0:
        raise ValueError(f"embed_dim (C={C}) must be divisible by num_heads, got {num_heads}")
    for name, w in (("w_q", w_q), ("w_k", w_k), ("w_v", w_v)):
        _check_projection(w, name, C, C, x)
    if w_o is None:
        w_o = torch.eye(C, dtype=x.dtype)
    _check_projection(w_o, "w_o", C, C, x)
    q = split_heads(x @ w_q, num_heads)  # [B, n_head, T, d_head]
    k = split_heads(x @ w_k, num_heads)  # [B, n_head, T, d_head]
    v = split_heads(x @ w_v, num_heads)  # [B, n_head, T, d_head]
    s = attend(q, k, v)
    concat = merge_heads(s.output)  # [B, T, C]
    output = concat @ w_o  # [B, T, C]
    return MultiHeadStages(
        x, q, k, v, s.raw_scores, s.scaled_scores, s.causal_mask, s.masked_scores, s.weights,
        s.output, concat, output,
    )  # fmt: skip


def lesson_stages(dtype: torch.dtype = torch.float64) -> AttentionStages:
    """The lesson's single head on prompts A and B (sections 4-11)."""
    from attnlab.core import example

    return attention_stages(
        example.lesson_x(dtype),
        example.lesson_w_q(dtype),
        example.lesson_w_k(dtype),
        example.lesson_w_v(dtype),
    )
