"""The implementations ``attnlab bench`` compares, each turned into a call on fixed inputs.

Two levels, compared only within their level:

- ``layer``: a whole attention layer, ``x [B, T, C] → [B, T, C]`` with the QKV and output
  projections. Reference: ``F.linear`` + ``F.scaled_dot_product_attention`` written out by hand
  ("F.sdpa"). ``nn.MHA`` is ``nn.MultiheadAttention`` with a causal mask and the
  ``is_causal=True`` hint (:func:`attnlab.core.convert.torch_mha_forward`).
- ``kernel``: the attention alone, ``q, k, v [B, n_head, T, d_head] → [B, n_head, T, d_head]``.
  Reference: ``F.scaled_dot_product_attention(is_causal=True)``.

Every layer implementation gets the same weights (copied with :mod:`attnlab.core.convert`) and the
same ``x``; every kernel the same q, k, v.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from attnlab.core.convert import mha_from_fused, to_torch_mha, torch_mha_forward
from attnlab.core.flash import tiled_attention
from attnlab.core.modules import CausalSelfAttention
from attnlab.core.pipeline import attention_output, merge_heads

LAYER, KERNEL = "layer", "kernel"
FORWARD, FORWARD_BACKWARD = "forward", "forward+backward"


@dataclass(frozen=True)
class Shape:
    """Batch ``B``, tokens ``T``, width ``C`` and heads ``n_head`` of one measurement."""

    B: int
    T: int
    C: int
    n_head: int

    @property
    def d_head(self) -> int:
        return self.C // self.n_head


@dataclass(frozen=True)
class Impl:
    """One implementation: CSV ``key``, table ``label``, ``level``; ``dense`` if it builds
    ``[B, n_head, T, T]`` tensors; ``reference`` if ratios of its level are taken against it."""

    key: str
    label: str
    level: str
    dense: bool = False
    reference: bool = False


IMPLS: tuple[Impl, ...] = (
    Impl("layer_sdpa", "F.linear + F.sdpa", LAYER, reference=True),
    Impl("csa_sdpa", "CausalSelfAttention(sdpa)", LAYER),
    Impl("csa_tiled", "CausalSelfAttention(tiled)", LAYER),
    Impl("csa_explicit", "CausalSelfAttention(explicit)", LAYER, dense=True),
    Impl("mha_loop", "MultiHeadAttention (head loop)", LAYER, dense=True),
    Impl("torch_mha", "nn.MHA(need_weights=False)", LAYER),
    Impl("torch_mha_weights", "nn.MHA(need_weights=True)", LAYER, dense=True),
    Impl("sdpa", "F.sdpa", KERNEL, reference=True),
    Impl("tiled", "tiled_attention", KERNEL),
    Impl("explicit", "attention_output (explicit)", KERNEL, dense=True),
)

Forward = Callable[..., torch.Tensor]


def _fused(shape: Shape, backend: str = "sdpa") -> CausalSelfAttention:
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)  # same weights for every layer implementation
        return CausalSelfAttention(shape.C, shape.n_head, shape.T, backend)


def _functional_sdpa(shape: Shape) -> tuple[Forward, list[torch.Tensor]]:
    fused = _fused(shape)
    w_qkv, w_o = fused.qkv.weight.detach(), fused.output_projection.weight.detach()
    B, T, n_head, d_head = shape.B, shape.T, shape.n_head, shape.d_head

    def forward(x: torch.Tensor, w_qkv: torch.Tensor, w_o: torch.Tensor) -> torch.Tensor:
        qkv = F.linear(x, w_qkv).view(B, T, 3, n_head, d_head)  # [B, T, 3, n_head, d_head]
        q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)  # [B, n_head, T, d_head] each
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return F.linear(merge_heads(out), w_o)  # [B, T, C]

    return forward, [w_qkv, w_o]


def _layer(key: str, shape: Shape) -> tuple[Forward, list[torch.Tensor]]:
    """The layer's forward(x, *weights) and its weights."""
    if key == "layer_sdpa":
        return _functional_sdpa(shape)
    if key.startswith("csa_"):
        module: torch.nn.Module = _fused(shape, backend=key.removeprefix("csa_"))
        return (lambda x, *_: module(x)), list(module.parameters())
    if key == "mha_loop":
        module = mha_from_fused(_fused(shape))
        return (lambda x, *_: module(x)), list(module.parameters())
    torch_mha = to_torch_mha(_fused(shape))
    need_weights = key == "torch_mha_weights"
    return (lambda x, *_: torch_mha_forward(torch_mha, x, need_weights)[0]), list(
        torch_mha.parameters()
    )


KERNELS: dict[str, Forward] = {
    "sdpa": lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
    "tiled": tiled_attention,
    "explicit": lambda q, k, v: attention_output(q, k, v)[0],  # the explicit backend's kernel
}


def build(impl: Impl, shape: Shape, mode: str) -> Callable[[], None]:
    """A call running ``impl`` once on fixed random inputs of ``shape``.

    ``forward`` runs under ``torch.no_grad()`` (inference); ``forward+backward`` also computes
    the gradients of the inputs and weights with ``torch.autograd.grad``, as training would.
    """
    gen = torch.Generator().manual_seed(1)
    B, T, C, n_head, d_head = shape.B, shape.T, shape.C, shape.n_head, shape.d_head
    if impl.level == LAYER:
        forward, weights = _layer(impl.key, shape)
        inputs = [torch.randn(B, T, C, generator=gen)]  # [B, T, C]
    else:
        forward, weights = KERNELS[impl.key], []
        inputs = list(torch.randn(3, B, n_head, T, d_head, generator=gen).unbind(0))
    if mode == FORWARD:

        def run_forward() -> None:
            with torch.no_grad():
                forward(*inputs, *weights)

        return run_forward
    leaves = [t.requires_grad_() for t in (*inputs, *weights)]
    out_shape = (B, T, C) if impl.level == LAYER else (B, n_head, T, d_head)
    grad_out = torch.randn(out_shape, generator=gen)

    def run_forward_backward() -> None:
        out = forward(*inputs, *weights)
        torch.autograd.grad(out, leaves, grad_out)

    return run_forward_backward
