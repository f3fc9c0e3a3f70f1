"""The linear layers the auditor reads, whatever class computes them.

A learner's projection is an ``nn.Linear`` (weight stored ``[out, in]``, ``y = x @ Wᵀ + b``) or
a layer of the learner's own class that computes the same map: GPT-2's ``Conv1D`` (weight
stored ``[in, out]``, ``y = x @ W + b``; ``transformers`` itself need not be installed), or a
hand-written linear layer. :func:`recognise` runs in the learner's process and tells them
apart by what the layer computes, not by its name; the judge's mirror then holds an
``nn.Linear`` or a :class:`Conv1D` with the learner's parameters, and :func:`weight` and
:func:`set_weight` read and write either in the lesson's formula convention ``[in, out]``
(``q = x @ w_q``). A :class:`Layout` is what the probe builds from them: where a module keeps
its W_Q, W_K, W_V (and W_O), with a reader and a writer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn

#: W_Q, W_K, W_V ``[C, width]`` and W_O ``[C, C]`` (or None), in formula convention.
Weights = tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor | None]


@dataclass
class Layout:
    """Where a module keeps W_Q, W_K, W_V (and W_O): a description, a reader and a writer."""

    description: str
    read: Callable[[], Weights]
    write: Callable[[Weights], None]
    has_bias: bool = False
    names: tuple[str, str, str, str | None] | None = None  # set for layouts found by matching
    order: tuple[int, ...] | None = None  # set for a fused layer: the row block of q, k, v
    roles: tuple[str, ...] | None = None  # set for layers named by role: the q, k, v names
    spec: dict[str, tuple[str, bool]] | None = None  # set for bare matrices read by matching


class Conv1D(nn.Module):
    """The judge's stand-in for a layer computing ``y = x @ W + b`` with ``W`` stored
    ``[in, out]`` (GPT-2's ``Conv1D(nf, nx)``).

    Args:
        in_features: the input width ``nx``.
        out_features: the output width ``nf``.
        bias: whether the layer has a bias ``[out]``.
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True) -> None:
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.weight = nn.Parameter(torch.zeros(in_features, out_features))  # [in, out]
        self.bias: nn.Parameter | None = nn.Parameter(torch.zeros(out_features)) if bias else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``x @ W + b``: ``[..., in]`` → ``[..., out]``."""
        y = x @ self.weight
        return y if self.bias is None else y + self.bias


#: A layer the probe reads as a projection.
Projection = nn.Linear | Conv1D


def projections(module: nn.Module) -> list[tuple[str, Projection]]:
    """Every ``nn.Linear`` and :class:`Conv1D` of ``module`` with its dotted name."""
    return [(n, m) for n, m in module.named_modules() if isinstance(m, nn.Linear | Conv1D)]


def weight(layer: Projection) -> torch.Tensor:
    """The layer's weight in formula convention ``[in, out]`` (a view: writes go through)."""
    return layer.weight if isinstance(layer, Conv1D) else layer.weight.T


def set_weight(layer: Projection, full: torch.Tensor) -> None:
    """Copy a formula-convention ``[in, out]`` matrix into the layer's weight."""
    layer.weight.copy_(full if isinstance(layer, Conv1D) else full.T)


def zero_bias(layers: list[Projection]) -> None:
    """Set each layer's bias (when it has one) to 0: the lesson's reference has none."""
    for layer in layers:
        if layer.bias is not None:
            layer.bias.zero_()


def _computes(module: nn.Module, w: torch.Tensor, b: torch.Tensor | None, path: Path) -> str | None:
    """``"conv1d"`` when ``module`` computes ``x @ w + b``, ``"linear"`` when ``x @ wᵀ + b``,
    tried with a random weight put in place of its own (then restored), else None."""
    from attnlab.audit.loader import LearnerError, guarded

    gen = torch.Generator().manual_seed(11)
    rows, cols = w.shape
    trial = torch.randn(rows, cols, generator=gen, dtype=w.dtype)
    x = torch.randn(2, 3, max(rows, cols), generator=gen, dtype=w.dtype)  # [B, T, ·]
    own = w.detach().clone()
    found = None
    try:
        for kind, wanted in (("conv1d", trial), ("linear", trial.T)):  # each [in, out]
            size_in, size_out = wanted.shape
            if b is not None and b.numel() != size_out:
                continue
            x_in = x[..., :size_in].contiguous()  # [2, 3, in]
            try:
                with torch.no_grad(), guarded("build", path):
                    w.copy_(trial)
                    y = module(x_in)
            except LearnerError:  # not this layout (a shape mismatch), or not a layer at all
                continue
            expect = x_in @ wanted + (0 if b is None else b.detach())  # [2, 3, out]
            same = isinstance(y, torch.Tensor) and y.shape == expect.shape
            if same and torch.allclose(y.detach().double(), expect.double(), rtol=1e-4, atol=1e-4):
                found = kind
                break
    finally:
        with torch.no_grad():
            w.copy_(own)
    return found


def recognise(module: nn.Module, path: Path) -> tuple[str, dict[str, object]] | None:
    """A leaf module of the learner's own class with a 2-D ``weight`` (and a 1-D ``bias``) that
    computes a linear map: ``("conv1d", {"in", "out", "bias"})`` for weights stored
    ``[in, out]`` (GPT-2's Conv1D), ``("linear", ...)`` for ``[out, in]``; None otherwise.

    Runs the layer on a random input, so only in the learner's process.
    """
    if type(module).__module__.startswith("torch.") or next(module.children(), None) is not None:
        return None
    own = dict(module.named_parameters(recurse=False))
    w, b = own.get("weight"), own.get("bias")
    if w is None or w.dim() != 2 or set(own) - {"weight", "bias"}:
        return None
    if b is not None and (b.dim() != 1 or b.numel() not in w.shape):
        return None
    kind = _computes(module, w, b, path)
    if kind is None:
        return None
    size_in, size_out = w.shape if kind == "conv1d" else (w.shape[1], w.shape[0])
    return kind, {"in": int(size_in), "out": int(size_out), "bias": b is not None}
