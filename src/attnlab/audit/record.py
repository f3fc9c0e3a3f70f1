"""Watch a learner's forward pass: every softmax (also one made by hand, ``exp`` divided by a
sum), matmul, masked_fill, cat and SDPA call.

A :class:`torch.overrides.TorchFunctionMode` sees each overridable torch call with its
arguments and result, whatever style the code is written in (``@``, ``torch.matmul``,
``einsum``, ``F.softmax`` or ``Tensor.softmax``). Calls made *inside* a recorded call (the body
of ``nn.MultiheadAttention``) are not seen: the mode is paused while a call runs.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode

_KINDS: dict[Any, str] = {
    torch.softmax: "softmax",
    F.softmax: "softmax",
    torch.Tensor.softmax: "softmax",
    torch.matmul: "matmul",
    torch.Tensor.matmul: "matmul",
    torch.Tensor.__matmul__: "matmul",
    torch.bmm: "matmul",
    torch.Tensor.bmm: "matmul",
    torch.einsum: "matmul",
    torch.Tensor.masked_fill: "masked_fill",
    torch.Tensor.masked_fill_: "masked_fill",
    torch.masked_fill: "masked_fill",
    torch.cat: "cat",
    torch.concat: "cat",
    F.scaled_dot_product_attention: "sdpa",
    F.linear: "linear",
    torch.exp: "exp",
    torch.Tensor.exp: "exp",
    torch.div: "div",
    torch.Tensor.div: "div",
    torch.Tensor.__truediv__: "div",
}


#: Calls that make a stage's tensor without being a stage's operation (a split, a merge, a
#: scale, a residual): recorded as kind ``"made"``, with their result and line only, so that a
#: stage's tensor can be traced to the line that made it.
_MADE = {
    torch.Tensor.view, torch.Tensor.reshape, torch.reshape, torch.Tensor.transpose,
    torch.transpose, torch.Tensor.permute, torch.permute, torch.Tensor.contiguous,
    torch.Tensor.sum, torch.sum, torch.Tensor.mean, torch.mean, torch.stack,
    torch.Tensor.flatten, torch.flatten, torch.Tensor.__mul__, torch.Tensor.__rmul__,
    torch.Tensor.mul, torch.mul, torch.Tensor.__add__, torch.Tensor.__radd__, torch.Tensor.add,
    torch.add, torch.where,
}  # fmt: skip
#: Recorded calls stop at this many; ``"made"`` ones at half of it, leaving room for the rest.
LIMIT = 10_000


@dataclass
class Call:
    """One recorded call: its kind, positional and keyword arguments, result, and the line of
    the learner's file that made it (None when the call came from elsewhere)."""

    kind: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    out: Any
    line: int | None = None


@dataclass
class Recorder(TorchFunctionMode):
    """Record the calls listed in ``_KINDS`` while active (``with Recorder() as rec:``)."""

    calls: list[Call] = field(default_factory=list)
    #: The learner's file: each call records the line of it that is on the stack.
    path: str | None = None
    #: The last few ``exp`` calls as (result, input): a division of one is a hand-made softmax.
    exps: list[tuple[Any, Any]] = field(default_factory=list)
    #: The calls of a time-first forward, laid out ``[T, T, B, H]``...: kept apart from
    #: ``calls``, which are read as ``[B, H, T, T]``.
    time_first: list[Call] = field(default_factory=list)

    def __post_init__(self) -> None:
        super().__init__()

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        kind = _KINDS.get(func)
        if kind == "exp":
            self.exps = [*self.exps[-3:], (out, args[0] if args else None)]
            return out
        if kind == "div":
            found = [inp for e, inp in self.exps if args and args[0] is e]
            if not found or len(args) < 2 or not isinstance(out, torch.Tensor):
                self._made(out)
                return out
            kind, args, kwargs = "softmax", (found[0],), {"dim": _hand_dim(args[1], out)}
        if kind is None and func in _MADE:
            self._made(out)
        elif kind is not None and len(self.calls) < LIMIT:
            line = _learner_line(self.path)
            self.calls.append(Call(kind, tuple(args), dict(kwargs), _detach(out), line))
        return out

    def _made(self, out: Any) -> None:
        """Record a tensor the learner's own line made (not scalars: a loop makes thousands)."""
        if not isinstance(out, torch.Tensor) or out.dim() < 2 or len(self.calls) >= LIMIT // 2:
            return
        line = _learner_line(self.path)
        if line is not None:
            self.calls.append(Call("made", (), {}, _detach(out), line))

    def of(self, kind: str) -> list[Call]:
        """The recorded calls of one kind, in call order."""
        return [c for c in self.calls if c.kind == kind]


def _learner_line(path: str | None) -> int | None:
    """The line of the innermost frame on the stack that runs the learner's file ``path``."""
    if path is None:
        return None
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_code.co_filename == path:
            return frame.f_lineno
        frame = frame.f_back  # type: ignore[assignment]
    return None


def _detach(out: Any) -> Any:
    if isinstance(out, torch.Tensor):
        return out.detach().clone()
    return out


def _hand_dim(den: Any, out: torch.Tensor) -> int | str:
    """The axis a hand-made softmax ``exp(s) / exp(s).sum(dim, keepdim=True)`` normalised:
    the one axis the divisor kept at size 1; ``"all"`` when it divided by one number."""
    if not isinstance(den, torch.Tensor) or den.numel() == 1:
        return "all"
    den = den.reshape((1,) * (out.dim() - den.dim()) + tuple(den.shape))
    kept = [d - out.dim() for d in range(out.dim()) if den.size(d) == 1 < out.size(d)]
    return kept[0] if len(kept) == 1 else "all"


def softmax_dim(call: Call) -> int | None:
    """The ``dim`` a recorded softmax used, as a negative index (PyTorch's implicit choice
    when none was given)."""
    dim = call.kwargs.get("dim", call.args[1] if len(call.args) > 1 else None)
    ndim = call.out.dim()
    if dim is None:  # F.softmax(x) without dim picks 0 for 0-, 1- and 3-D input, else 1
        dim = 0 if ndim in (0, 1, 3) else 1
    if not isinstance(dim, int):
        return None
    return dim - ndim if dim >= 0 else dim
