"""Find how to call a learner's forward by trying it: the causal mask's convention, and
whether the module takes its input time first (see :mod:`~attnlab.audit.calling` for the
candidates). The judge runs the candidates in the learner's process and reads only outputs.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import torch
from torch import nn

from attnlab.audit.calling import PROBE_BT, Convention, candidates, plan
from attnlab.audit.loader import LearnerError
from attnlab.audit.observe import close


def _run(module: nn.Module, x: torch.Tensor, path: Path, conv: Convention) -> torch.Tensor:
    from attnlab.audit.remote import forward

    return forward(module, x, path, conv).out


@dataclass(frozen=True)
class Probe:
    """What one candidate call showed: ``causal`` (no later position changes an earlier
    output), ``apart`` (changing batch rows ≥ 1 leaves row 0 alone), ``finite``, and for a
    module that is not causal, how far from it: the first position ``t0`` whose change moved
    an earlier output, and by how much (``leak``)."""

    causal: bool
    apart: bool
    finite: bool
    t0: int = 0
    leak: float = 0.0

    @property
    def ok(self) -> bool:
        return self.causal and self.apart and self.finite


def _probe(module: nn.Module, x: torch.Tensor, path: Path, conv: Convention) -> Probe | None:
    """How the module behaves under ``conv`` on ``x`` ``[B, T, C]``; None when it raised or
    gave an output that is not ``[B, T, ·]``."""
    B, T = x.shape[:2]
    gen = torch.Generator().manual_seed(17)
    try:
        out = _run(module, x, path, conv)
        if out.dim() != 3 or tuple(out.shape[:2]) != (B, T):
            return None
        x3 = x.clone()
        x3[1:] = torch.randn(x3[1:].shape, generator=gen)  # only rows ≥ 1 change
        out3 = _run(module, x3, path, conv)
        apart = out3.shape == out.shape and close(out[0], out3[0], 1e-5)
        finite = bool(out.isfinite().all())
        for t0 in range(1, T):
            x2 = x.clone()
            x2[:, t0:] = torch.randn(x2[:, t0:].shape, generator=gen)
            out2 = _run(module, x2, path, conv)
            if out2.shape != out.shape:
                return Probe(False, apart, finite, t0, float("inf"))
            if not close(out[:, :t0], out2[:, :t0], 1e-5):
                leak = (out[:, :t0] - out2[:, :t0]).abs().nan_to_num(float("inf")).max()
                return Probe(False, apart, finite, t0, float(leak))
    except LearnerError:
        return None
    return Probe(True, apart, finite)


def settle(module: nn.Module, params: list[list[Any]] | None, path: Path, width: int) -> Convention:
    """The convention to call ``module`` with: :func:`plan`, then, for a mask parameter, the
    candidate under which it is causal, found by probing.

    The first batch-first candidate under which the module is causal, finite and keeps batch
    rows apart is taken, else the first such time-first one. Failing both, the layout is the
    one under which some call keeps rows apart (a batch-first attention fed ``[T, B, C]``
    attends across the batch, and a time-first one fed ``[B, T, C]`` too): time first only when
    no batch-first call does and a time-first one does. In that layout the first candidate
    under which the module is causal is taken (item 9 judges the mixing), else the one nearest
    to causal (finite values; the latest first leaking position, the least leak, a mask rather
    than none), marked not causal: item 5 judges it.

    Args:
        module: a mirror built by :func:`attnlab.audit.remote.build`.
        params: its forward's parameters.
        width: the width C of its input.

    Raises:
        LearnerError: the forward needs a parameter the auditor cannot give, or it raised
            under every candidate (the first candidate's failure).
    """
    base = plan(params)
    if base.mask_name is None:
        return base
    x = torch.randn(*PROBE_BT, width, generator=torch.Generator().manual_seed(13))  # [B, T, C]
    every = candidates(base)
    seen: list[tuple[Convention, Probe]] = []
    for time_first in (False, True):
        for conv in (c for c in every if c.time_first == time_first):
            found = _probe(module, x, path, conv)
            if found is not None and found.ok:
                return conv
            if found is not None:
                seen.append((conv, found))
    apart = {c.time_first for c, found in seen if found.apart}
    layout = apart == {True}
    ran = [(c, found) for c, found in seen if c.time_first == layout]
    causal = [c for c, found in ran if found.causal and found.finite]
    if causal:
        return causal[0]
    if not ran:
        _run(module, x, path, every[0])  # raises the learner's failure, with its line
    finite = [(c, found) for c, found in ran if found.finite] or ran
    # Nearest to causal: the latest position whose change first leaks, then the least leak.
    nearest = min(finite, key=lambda cf: (-cf[1].t0, cf[1].leak, cf[0].style is None))[0]
    return replace(nearest, causal=False)
