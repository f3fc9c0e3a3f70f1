"""The lesson's attention modules, built up step by step.

1. :class:`AttentionHead`: one causal head with separate ``query``/``key``/``value`` layers.
2. :class:`MultiHeadAttention`: several heads side by side, concatenated, then ``W_O``.
3. :class:`CausalSelfAttention`: the production form. What changed from 2: one fused QKV
   projection, heads as a tensor axis instead of a Python loop, and
   ``F.scaled_dot_product_attention(is_causal=True)`` when the weights are not needed.

All three compute their stages through :func:`attnlab.core.pipeline.attention_output`, the one
attention code path, so they agree with each other and with the lesson's numbers. Their
``forward`` keeps a ``[T, T]`` stage only when asked to return it (``return_weights=True``);
``CausalSelfAttention.stages`` keeps every stage, for tracing. Axis letters are defined in
:mod:`attnlab.core.pipeline`.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

from attnlab.core.pipeline import (
    MultiHeadStages,
    attend,
    attention_output,
    causal_mask,
    check_embeddings,
    check_positive,
    merge_heads,
)

Output = torch.Tensor | tuple[torch.Tensor, torch.Tensor]


def _check_length(x: torch.Tensor, context_length: int) -> None:
    T = x.size(1)
    if T > context_length:
        raise ValueError(
            f"sequence length T={T} exceeds context_length={context_length} "
            f"(x has shape [{', '.join(str(s) for s in x.shape)}])"
        )


def _check_heads(embed_dim: int, num_heads: int, context_length: int) -> None:
    check_positive(embed_dim=embed_dim, num_heads=num_heads, context_length=context_length)
    if embed_dim % num_heads != 0:
        raise ValueError(
            f"embed_dim must be divisible by num_heads, got embed_dim={embed_dim} "
            f"and num_heads={num_heads}"
        )


class AttentionHead(nn.Module):
    r"""One causal head: :math:`\mathrm{softmax}(\mathrm{mask}(QK^\top/\sqrt{d_k}))V`.

    Args:
        embed_dim: model width ``C`` of the input.
        head_size: width ``d_head`` of this head's queries, keys and values.
        context_length: the longest sequence the head accepts (size of ``causal_mask``).

    Attributes:
        query, key, value: bias-free ``nn.Linear(embed_dim, head_size)``; their ``weight`` is
            ``[d_head, C]``, the transpose of the lesson's formula matrices.
        causal_mask: boolean buffer ``[context_length, context_length]``, True where a query may
            read a key (not a trainable parameter; moves with ``.to(device)``).

    Shape:
        - Input: ``[B, T, C]`` float vectors with ``T <= context_length``.
        - Output: ``[B, T, d_head]``; with ``return_weights=True`` also weights ``[B, T, T]``
          (without it no ``[B, T, T]`` stage outlives the call).

    Example::

        >>> head = AttentionHead(embed_dim=4, head_size=2, context_length=8)
        >>> head(torch.randn(2, 3, 4)).shape
        torch.Size([2, 3, 2])
    """

    causal_mask: torch.Tensor

    def __init__(self, embed_dim: int, head_size: int, context_length: int) -> None:
        super().__init__()
        check_positive(embed_dim=embed_dim, head_size=head_size, context_length=context_length)
        self.embed_dim, self.head_size, self.context_length = embed_dim, head_size, context_length
        self.query = nn.Linear(embed_dim, head_size, bias=False)
        self.key = nn.Linear(embed_dim, head_size, bias=False)
        self.value = nn.Linear(embed_dim, head_size, bias=False)
        self.register_buffer("causal_mask", causal_mask(context_length))

    def forward(self, x: torch.Tensor, return_weights: bool = False) -> Output:
        check_embeddings(x, self.embed_dim)
        _check_length(x, self.context_length)
        q, k, v = self.query(x), self.key(x), self.value(x)  # [B, T, d_head] each
        keep = ("weights",) if return_weights else ()
        output, kept = attention_output(q, k, v, self.causal_mask, return_stages=keep)
        if return_weights:
            return output, kept["weights"]  # [B, T, d_head], [B, T, T]
        return output  # [B, T, d_head]


class MultiHeadAttention(nn.Module):
    r"""Several :class:`AttentionHead` on the same X, concatenated on features, then ``W_O``.

    :math:`\mathrm{MultiHead}(X) = \mathrm{Concat}(O^{(1)}, \dots, O^{(n)})\,W_O`

    Args:
        embed_dim: model width ``C``; must be divisible by ``num_heads``.
        num_heads: number of heads ``n_head``; each has ``d_head = C / n_head``.
        context_length: the longest sequence accepted.

    Attributes:
        heads: ``nn.ModuleList`` of ``num_heads`` heads, each reading the same input.
        output_projection: bias-free ``nn.Linear(C, C)``: ``W_O``, which mixes the heads.

    Shape:
        - Input: ``[B, T, C]``.
        - Output: ``[B, T, C]``; with ``return_weights=True`` also ``[B, n_head, T, T]``. The
          heads are asked for their weights only then, so by default no ``[B, T, T]`` tensor
          outlives the head that made it.

    Example::

        >>> mha = MultiHeadAttention(embed_dim=4, num_heads=2, context_length=8)
        >>> out, w = mha(torch.randn(1, 3, 4), return_weights=True)
        >>> tuple(out.shape), tuple(w.shape)
        ((1, 3, 4), (1, 2, 3, 3))
    """

    def __init__(self, embed_dim: int, num_heads: int, context_length: int) -> None:
        super().__init__()
        _check_heads(embed_dim, num_heads, context_length)
        self.embed_dim, self.num_heads, self.context_length = embed_dim, num_heads, context_length
        head_size = embed_dim // num_heads
        self.heads = nn.ModuleList(
            AttentionHead(embed_dim, head_size, context_length) for _ in range(num_heads)
        )
        self.output_projection = nn.Linear(embed_dim, embed_dim, bias=False)

    def forward(self, x: torch.Tensor, return_weights: bool = False) -> Output:
        if not return_weights:
            outs = [head(x) for head in self.heads]  # n_head × [B, T, d_head]
            return self.output_projection(torch.cat(outs, dim=-1))  # [B, T, C]
        results = [head(x, return_weights=True) for head in self.heads]
        concat = torch.cat([out for out, _ in results], dim=-1)  # [B, T, C] on the feature axis
        weights = torch.stack([w for _, w in results], dim=1)  # [B, n_head, T, T]
        return self.output_projection(concat), weights  # [B, T, C], [B, n_head, T, T]


def _sdpa(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    return F.scaled_dot_product_attention(q, k, v, is_causal=True)  # [B, n_head, T, d_head]


def _explicit(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    return attention_output(q, k, v)[0]  # [B, n_head, T, d_head], each [T, T] stage freed early


def _tiled(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    from attnlab.core.flash import tiled_attention

    return tiled_attention(q, k, v)  # [B, n_head, T, d_head], no [T, T] tensor kept


#: Attention kernels for :class:`CausalSelfAttention`: (q, k, v) ``[B, n_head, T, d_head]`` → out.
BACKENDS: dict[str, Callable[[torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]] = {
    "sdpa": _sdpa,
    "explicit": _explicit,
    "tiled": _tiled,
}


class CausalSelfAttention(nn.Module):
    r"""Production multi-head causal self-attention: fused QKV, heads as a tensor axis.

    Computes the same function as :class:`MultiHeadAttention` (copy weights across with
    :mod:`attnlab.core.convert`) but with one ``[3C, C]`` projection and no Python loop over heads.

    Args:
        embed_dim: model width ``C``; must be divisible by ``num_heads``.
        num_heads: number of heads ``n_head``.
        context_length: the longest sequence accepted.
        backend: ``"sdpa"`` (``F.scaled_dot_product_attention``, the default), ``"explicit"``
            (the lesson's stage-by-stage path, each ``[B, n_head, T, T]`` stage freed once the
            next exists), ``"tiled"`` (:mod:`attnlab.core.flash`, exact attention with memory linear
            in T) or another name registered in :data:`BACKENDS`.

    Attributes:
        qkv: bias-free ``nn.Linear(C, 3C)``; rows ``[0:C]`` are W_Q, ``[C:2C]`` W_K, ``[2C:3C]``
            W_V (transposed), head h owning rows ``h*d_head:(h+1)*d_head`` of each block.
        output_projection: bias-free ``nn.Linear(C, C)``, ``W_O``.

    Shape:
        - Input: ``[B, T, C]``. Output: ``[B, T, C]``; with ``return_weights=True`` also
          ``[B, n_head, T, T]`` (this always takes the explicit path, keeping only the weights).

    Example::

        >>> attn = CausalSelfAttention(embed_dim=8, num_heads=2, context_length=16)
        >>> attn(torch.randn(2, 5, 8)).shape
        torch.Size([2, 5, 8])
    """

    def __init__(
        self, embed_dim: int, num_heads: int, context_length: int, backend: str = "sdpa"
    ) -> None:
        super().__init__()
        _check_heads(embed_dim, num_heads, context_length)
        self.embed_dim, self.num_heads, self.context_length = embed_dim, num_heads, context_length
        self.backend = backend
        self.qkv = nn.Linear(embed_dim, 3 * embed_dim, bias=False)
        self.output_projection = nn.Linear(embed_dim, embed_dim, bias=False)

    @property
    def backend(self) -> str:
        """Name of the attention kernel used when weights are not requested."""
        return self._backend

    @backend.setter
    def backend(self, name: str) -> None:
        if name not in BACKENDS:
            raise ValueError(f"backend must be one of {', '.join(sorted(BACKENDS))}, got {name!r}")
        self._backend = name

    def _project(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        check_embeddings(x, self.embed_dim)
        _check_length(x, self.context_length)
        B, T, C = x.shape
        d_head = C // self.num_heads
        qkv = self.qkv(x).view(B, T, 3, self.num_heads, d_head)  # [B, T, 3, n_head, d_head]
        q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)  # each [B, n_head, T, d_head]
        return q, k, v

    def stages(self, x: torch.Tensor) -> MultiHeadStages:
        """Every stage of this module on ``x`` through the explicit path (for tracing shapes)."""
        q, k, v = self._project(x)
        s = attend(q, k, v)
        concat = merge_heads(s.output)  # [B, T, C]
        output = self.output_projection(concat)  # [B, T, C]
        return MultiHeadStages(
            x, q, k, v, s.raw_scores, s.scaled_scores, s.causal_mask, s.masked_scores,
            s.weights, s.output, concat, output,
        )  # fmt: skip

    def forward(self, x: torch.Tensor, return_weights: bool = False) -> Output:
        q, k, v = self._project(x)
        if return_weights:
            out, kept = attention_output(q, k, v, return_stages=("weights",))
            output = self.output_projection(merge_heads(out))  # [B, T, C]
            return output, kept["weights"]  # [B, T, C], [B, n_head, T, T]
        out = BACKENDS[self.backend](q, k, v)  # [B, n_head, T, d_head]
        return self.output_projection(merge_heads(out))  # [B, T, C]
