"""Find how to call a learner's forward by trying it: the causal mask's convention, and
whether the module takes its input time first (see :mod:`~attnlab.audit.calling` for the
candidates). The judge runs the candidates in the learner's process and reads their outputs,
and, for a softmax over another axis than the keys, the softmax inputs.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import torch
from torch import nn

from attnlab.audit import observe
from attnlab.audit.calling import PROBE_BT, Convention, candidates, plan
from attnlab.audit.loader import LearnerError
from attnlab.audit.observe import Run, blocks_the_future, close, off_the_keys


def _run(module: nn.Module, x: torch.Tensor, path: Path, conv: Convention) -> torch.Tensor:
    return _full(module, x, path, conv).out


def _full(module: nn.Module, x: torch.Tensor, path: Path, conv: Convention) -> Run:
    from attnlab.audit.remote import forward

    return forward(module, x, path, conv)


@dataclass(frozen=True)
class Probe:
    """What one candidate call showed: ``causal`` (no later position changes an earlier
    output), ``apart`` (changing batch rows ≥ 1 leaves row 0 alone, and changing row 0 leaves
    the others alone: fed in the other layout, a causal module's prompt 1 reads prompt 0),
    ``finite``, and for a
    module that is not causal, how far from it: the first position ``t0`` whose change moved
    an earlier output, and by how much (``leak``). ``tail``: the output is non-finite at every
    position but the last, in every batch row, and finite at the last; ``aside``: the softmax
    inputs block exactly the future, and a softmax ran over another axis than the keys
    (:func:`~attnlab.audit.observe.aside`)."""

    causal: bool
    apart: bool
    finite: bool
    t0: int = 0
    leak: float = 0.0
    tail: bool = False
    aside: bool = False

    @property
    def ok(self) -> bool:
        return self.causal and self.apart and self.finite


def _probe(module: nn.Module, x: torch.Tensor, path: Path, conv: Convention) -> Probe | None:
    """How the module behaves under ``conv`` on ``x`` ``[B, T, C]``; None when it raised or
    gave an output that is not ``[B, T, ·]``."""
    B, T = x.shape[:2]
    gen = torch.Generator().manual_seed(17)
    try:
        run = _full(module, x, path, conv)
        out = run.out
        if out.dim() != 3 or tuple(out.shape[:2]) != (B, T):
            return None
        x3 = x.clone()
        x3[1:] = torch.randn(x3[1:].shape, generator=gen)  # only rows ≥ 1 change
        out3 = _run(module, x3, path, conv)
        x4 = x.clone()
        x4[0] = torch.randn(x4[0].shape, generator=gen)  # only row 0 changes
        out4 = _run(module, x4, path, conv)
        apart = (
            out3.shape == out.shape == out4.shape
            and close(out[0], out3[0], 1e-5)
            and close(out[1:], out4[1:], 1e-5)
        )
        finite = bool(out.isfinite().all())
        bad = ~out.isfinite().flatten(2).all(-1)  # [B, T]: a non-finite value at (b, t)
        tail = T > 1 and bool(bad[:, :-1].all()) and not bool(bad[:, -1].any())
        aside = (off_the_keys(run) and blocks_the_future(run)) or observe.aside(run)
        for t0 in range(1, T):
            x2 = x.clone()
            x2[:, t0:] = torch.randn(x2[:, t0:].shape, generator=gen)
            out2 = _run(module, x2, path, conv)
            if out2.shape != out.shape:
                return Probe(False, apart, finite, t0, float("inf"), tail, aside)
            if not close(out[:, :t0], out2[:, :t0], 1e-5):
                leak = (out[:, :t0] - out2[:, :t0]).abs().nan_to_num(float("inf")).max()
                return Probe(False, apart, finite, t0, float(leak), tail, aside)
    except LearnerError:
        return None
    return Probe(True, apart, finite, tail=tail, aside=aside)


def _off_keys(seen: list[tuple[Convention, Probe]]) -> Convention | None:
    """The first mask convention that shows weights normalised over another axis than the
    keys, marked ``off_keys``: ``"nan"`` when under it the output is NaN/Inf at every query
    that has a masked key and finite at the last query, which has none (and no call without a
    mask gives NaN/Inf in that layout); ``"axis"`` when the softmax inputs it gives block
    exactly the future and a softmax ran over another axis.

    A softmax over the keys cannot give the first under any convention: a row is NaN only when
    all its keys are blocked (an inverted mask empties only the last row, one that also blocks
    the diagonal only row 0). Normalised over another axis (heads, batch), a masked score is
    normalised with the other −∞ of the same (query, key) pair: 0/0 wherever a key is masked.
    """
    clean = {c.time_first for c, found in seen if c.style is None and found.finite}
    plain = {c.time_first for c, _ in seen if c.style is None}
    for conv, found in seen:
        alone = conv.time_first in clean or conv.time_first not in plain
        if conv.style is not None and found.tail and found.causal and alone:
            return replace(conv, off_keys="nan")
    for conv, found in seen:
        if conv.style is not None and found.aside:
            return replace(conv, off_keys="axis")
    return None


def _layout(module: nn.Module, x: torch.Tensor, path: Path, base: Convention) -> Convention:
    """A forward with no mask parameter: batch first unless only time first makes the module
    causal, finite and keeps batch rows apart. A batch-first module fed ``[T, B, C]`` takes
    the prompts for positions: if it masks the future it reads no other prompt, but it is
    causal fed batch first, which is tried first; if it does not, it reads the other prompts."""
    found = _probe(module, x, path, base)
    if found is None or found.ok:
        return base
    flipped = replace(base, time_first=True)
    turned = _probe(module, x, path, flipped)
    return flipped if turned is not None and turned.ok else base


def settle(module: nn.Module, params: list[list[Any]] | None, path: Path, width: int) -> Convention:
    """The convention to call ``module`` with: :func:`plan`, then, for a mask parameter, the
    candidate under which it is causal, found by probing; with none, the layout
    (:func:`_layout`).

    The first batch-first candidate under which the module is causal, finite and keeps batch
    rows apart is taken, else the first such time-first one. Failing both, a mask convention
    that shows weights normalised over another axis than the keys (:func:`_off_keys`) is
    taken, marked ``off_keys``: item 6 judges it. Failing that, the layout is the
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
    if base.left_out == base.mask_name and getattr(module, "_attnlab_own_mask", False):
        # An optional attention_mask beside a causal mask of the module's own (GPT-2's bias
        # buffer) is the padding mask: not passed, the module must mask the future itself.
        base = replace(base, mask_name=None, mask_at=None)
    x = torch.randn(*PROBE_BT, width, generator=torch.Generator().manual_seed(13))  # [B, T, C]
    if base.mask_name is None:
        return _layout(module, x, path, base)
    every = candidates(base)
    seen: list[tuple[Convention, Probe]] = []
    for time_first in (False, True):
        for conv in (c for c in every if c.time_first == time_first):
            found = _probe(module, x, path, conv)
            if found is not None and found.ok:
                return conv
            if found is not None:
                seen.append((conv, found))
    marked = _off_keys(seen)
    if marked is not None:
        return marked
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
