"""Copy weights between the lesson's modules, the fused module and ``nn.MultiheadAttention``.

Conventions: the lesson writes projections as ``[C, d_head]`` (``q = x @ w_q``); ``nn.Linear``
stores ``weight = w_q.T`` (``[d_head, C]``). ``nn.MultiheadAttention`` reads a *boolean*
``attn_mask`` the other way round from the lesson: True there means "may NOT attend", so the
lesson's mask must be inverted before it is passed (:func:`torch_attn_mask`).
"""

from __future__ import annotations

from typing import cast

import torch
from torch import nn

from attnlab.core.modules import AttentionHead, CausalSelfAttention, MultiHeadAttention
from attnlab.core.pipeline import causal_mask, check_embeddings


def head_from_formula(
    w_q: torch.Tensor, w_k: torch.Tensor, w_v: torch.Tensor, context_length: int
) -> AttentionHead:
    """An :class:`AttentionHead` whose layers hold the formula matrices ``[C, d_head]``."""
    C, d_head = w_q.shape
    head = AttentionHead(C, d_head, context_length).to(w_q.dtype)
    with torch.no_grad():
        head.query.weight.copy_(w_q.T)  # [d_head, C]
        head.key.weight.copy_(w_k.T)
        head.value.weight.copy_(w_v.T)
    return head


def mha_from_formula(
    w_q: torch.Tensor,
    w_k: torch.Tensor,
    w_v: torch.Tensor,
    w_o: torch.Tensor,
    num_heads: int,
    context_length: int,
) -> MultiHeadAttention:
    """A :class:`MultiHeadAttention` from ``[C, C]`` formula matrices, head h owning columns
    ``h*d_head:(h+1)*d_head`` (the split used by
    :func:`attnlab.core.pipeline.multi_head_stages`)."""
    C = w_q.size(0)
    mha = MultiHeadAttention(C, num_heads, context_length).to(w_q.dtype)
    d = C // num_heads
    with torch.no_grad():
        for h, head in enumerate(_heads(mha)):
            cols = slice(h * d, (h + 1) * d)
            head.query.weight.copy_(w_q[:, cols].T)
            head.key.weight.copy_(w_k[:, cols].T)
            head.value.weight.copy_(w_v[:, cols].T)
        mha.output_projection.weight.copy_(w_o.T)
    return mha


def _heads(mha: MultiHeadAttention) -> list[AttentionHead]:
    return [cast(AttentionHead, h) for h in mha.heads]


def _stacked(mha: MultiHeadAttention, layer: str) -> torch.Tensor:
    return torch.cat([getattr(h, layer).weight for h in mha.heads], dim=0)  # [C, C]


def fused_from_mha(mha: MultiHeadAttention, backend: str = "sdpa") -> CausalSelfAttention:
    """A :class:`CausalSelfAttention` computing exactly what ``mha`` computes."""
    ref = mha.output_projection.weight
    fused = CausalSelfAttention(mha.embed_dim, mha.num_heads, mha.context_length, backend)
    fused = fused.to(dtype=ref.dtype, device=ref.device)
    with torch.no_grad():
        fused.qkv.weight.copy_(
            torch.cat([_stacked(mha, "query"), _stacked(mha, "key"), _stacked(mha, "value")])
        )  # [3C, C]
        fused.output_projection.weight.copy_(mha.output_projection.weight)
    return fused


def mha_from_fused(fused: CausalSelfAttention) -> MultiHeadAttention:
    """The lesson's per-head :class:`MultiHeadAttention` computing what ``fused`` computes."""
    C, n, d = fused.embed_dim, fused.num_heads, fused.embed_dim // fused.num_heads
    ref = fused.output_projection.weight
    mha = MultiHeadAttention(C, n, fused.context_length).to(dtype=ref.dtype, device=ref.device)
    w_q, w_k, w_v = fused.qkv.weight.split(C, dim=0)  # each [C, C]
    with torch.no_grad():
        for h, head in enumerate(_heads(mha)):
            rows = slice(h * d, (h + 1) * d)
            head.query.weight.copy_(w_q[rows])
            head.key.weight.copy_(w_k[rows])
            head.value.weight.copy_(w_v[rows])
        mha.output_projection.weight.copy_(fused.output_projection.weight)
    return mha


def to_torch_mha(module: MultiHeadAttention | CausalSelfAttention) -> nn.MultiheadAttention:
    """An ``nn.MultiheadAttention(batch_first=True, bias=False)`` with the same weights.

    Call it through :func:`torch_mha_forward`, which passes the correctly inverted mask.
    """
    fused = fused_from_mha(module) if isinstance(module, MultiHeadAttention) else module
    ref = fused.output_projection.weight
    torch_mha = nn.MultiheadAttention(
        fused.embed_dim, fused.num_heads, bias=False, batch_first=True
    ).to(dtype=ref.dtype, device=ref.device)
    with torch.no_grad():
        torch_mha.in_proj_weight.copy_(fused.qkv.weight)  # [3C, C]: same Q, K, V row blocks
        torch_mha.out_proj.weight.copy_(fused.output_projection.weight)
    return torch_mha


def torch_attn_mask(T: int, device: torch.device | str | None = None) -> torch.Tensor:
    """The causal mask in ``nn.MultiheadAttention``'s boolean convention (True = blocked)."""
    return ~causal_mask(T, device)  # [T, T]


def torch_mha_forward(
    torch_mha: nn.MultiheadAttention, x: torch.Tensor, need_weights: bool = False
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Causal self-attention through ``nn.MultiheadAttention``: returns (output, weights or None).

    Weights, when asked for, are per head: ``[B, n_head, T, T]``. The mask comes with the
    ``is_causal=True`` hint, which ``nn.MultiheadAttention`` accepts only next to the mask it
    describes: without weights it then runs ``scaled_dot_product_attention(is_causal=True)``,
    which skips the future instead of reading a ``[T, T]`` mask; with weights it uses the mask.
    """
    check_embeddings(x, torch_mha.embed_dim)
    mask = torch_attn_mask(x.size(1), x.device)  # [T, T]
    return torch_mha(
        x, x, x, attn_mask=mask, need_weights=need_weights, average_attn_weights=False,
        is_causal=True,
    )  # fmt: skip
