"""Run a learner module on chosen inputs and collect what the auditor can see of it.

A :class:`Run` holds the output (the first tensor returned) and the recorded calls; helpers
pull out the score tables, the softmax inputs/outputs and the SDPA calls, with per-head
tensors stacked to ``[B, n_head, T, T]`` whatever the style (one call per head in a loop, or
one batched call).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn

from attnlab.audit.loader import guarded
from attnlab.audit.record import Call, Recorder, softmax_dim


@dataclass
class Run:
    """One forward pass: input ``x`` ``[B, T, C]``, first output tensor, recorded calls."""

    x: torch.Tensor
    out: torch.Tensor
    rec: Recorder
    #: How the rotary tables the forward takes were made (angle 0), and the line reading them.
    positions: dict[str, object] | None = None

    @property
    def T(self) -> int:
        return self.x.size(1)

    def _tables(self, tensors: list[torch.Tensor]) -> torch.Tensor | None:
        B, T = self.x.size(0), self.T
        found = [t for t in tensors if t.dim() >= 3 and t.shape[-2:] == (T, T) and t.size(0) == B]
        if not found:
            return None
        if len(found) > 1 and all(t.shape == found[0].shape and t.dim() == 3 for t in found):
            return torch.stack(found, dim=1)  # one call per head: [B, n_head, T, T]
        last = found[-1]
        return last.unsqueeze(1) if last.dim() == 3 else last.reshape(B, -1, T, T)

    def softmaxes(self) -> list[Call]:
        return [
            c
            for c in self.rec.of("softmax")
            if c.out.dim() >= 3 and c.out.shape[-2:] == (self.T, self.T)
        ]

    def weights(self) -> torch.Tensor | None:
        """The softmax outputs of shape ``[.., T, T]``, as ``[B, n_head, T, T]``."""
        return self._tables([c.out for c in self.softmaxes()])

    def softmax_inputs(self) -> torch.Tensor | None:
        return self._tables(
            [c.args[0] for c in self.softmaxes() if isinstance(c.args[0], torch.Tensor)]
        )

    def softmax_dims(self) -> set[int | None]:
        return {softmax_dim(c) for c in self.softmaxes()}

    def raw_scores(self) -> torch.Tensor | None:
        """For each softmax over a ``[.., T, T]`` table, the last ``[.., T, T]`` matmul/einsum
        result before it: the score table it normalised (one per head in a per-head loop)."""
        T, found, last = self.T, [], None
        for c in self.rec.calls:
            if c.kind == "matmul" and isinstance(c.out, torch.Tensor) and c.out.dim() >= 3:
                last = c.out if c.out.shape[-2:] == (T, T) else last
            elif c.kind == "softmax" and c.out.dim() >= 3 and c.out.shape[-2:] == (T, T):
                if last is not None:
                    found.append(last)
                last = None
        return self._tables(found)

    def sdpa(self) -> list[Call]:
        return self.rec.of("sdpa")


def forward(module: nn.Module, x: torch.Tensor, path: Path, call: dict | None = None) -> Run:
    """Call ``module(x)`` under the recorder; the first tensor it returns is the output.

    Args:
        call: how the judge asks for the call (:mod:`~attnlab.audit.calling`): ``"qkv"``
            passes ``x`` as query, key and value (``module(x, x, x)``), ``"inputs"`` names
            keyword-only inputs to pass ``x`` to, ``"time_first"`` feeds ``[T, B, C]`` and
            turns the output back to ``[B, T, ·]``; ``"mask"``, when not
            None, is passed as the keyword ``"mask_name"`` (or positionally after the inputs
            when ``"mask_at"`` is its position).
    """
    call = call or {}
    fed = x.transpose(0, 1).contiguous() if call.get("time_first") else x  # [T, B, C]
    args: list[object] = [fed, fed, fed] if call.get("qkv") else [fed]
    kwargs: dict[str, object] = {}
    if call.get("inputs"):  # keyword-only inputs: forward(*, query, key, value)
        args, kwargs = [], {str(name): fed for name in call["inputs"]}
    for flag in call.get("flags") or ():  # is_causal=False by default: a GPT passes True
        kwargs[str(flag)] = True
    mask = call.get("mask")
    if mask is not None:
        if call.get("mask_at") is not None:
            args += [None] * (int(call["mask_at"]) - len(args)) + [mask]
        else:
            kwargs[str(call["mask_name"])] = mask
    positions: dict[str, object] | None = None
    if call.get("positions"):
        kwargs, positions = _with_positions(module, args, kwargs, x, path, call)
    with guarded("call", path), torch.no_grad(), Recorder(path=str(path.resolve())) as rec:
        result = module(*args, **kwargs)
    out = result
    while isinstance(out, tuple | list) and out:
        out = out[0]
    if not isinstance(out, torch.Tensor):
        from attnlab.audit.loader import LearnerError

        raise LearnerError(
            f"forward 应返回张量，实际返回 {type(result).__name__}",
            f"forward must return a tensor, got {type(result).__name__}",
            "call",
        )
    unusable(out, x)
    if call.get("time_first") and out.dim() >= 2:
        out = out.transpose(0, 1)  # [T, B, ·] → [B, T, ·]
    return Run(x, out.detach().double(), rec, positions)


def _with_positions(
    module: nn.Module,
    args: list[object],
    kwargs: dict[str, object],
    x: torch.Tensor,
    path: Path,
    call: dict,
) -> tuple[dict[str, object], dict[str, object]]:
    """``kwargs`` with the rotary tables (or position indices) the forward takes, at angle 0
    (:mod:`~attnlab.audit.positions`): the first layout under which the forward runs and
    returns ``[B, T, ·]``; and how they were made, with the line that reads them.

    Raises:
        LearnerError: no layout tried runs, naming the parameters, what was tried and the
            first error.
    """
    from attnlab.audit.loader import LearnerError
    from attnlab.audit.positions import choices, used_at

    names = [str(n) for n in call["positions"]]
    B, T = x.size(0), x.size(1)
    D = int(call.get("head_dim") or 0) or _head_dim(module, x.size(-1))
    tried: list[str] = []
    first: LearnerError | None = None
    for made, text, own in choices(module, names, B, T, D, path):
        tried.append(text)
        try:
            with guarded("call", path), torch.no_grad():
                got = module(*args, **{**kwargs, **made})
        except LearnerError as err:
            if own:  # the file's own tables: the failure is the forward's, not the tables'
                raise
            first = first or err
            continue
        while isinstance(got, tuple | list) and got:
            got = got[0]
        lead = (T, B) if call.get("time_first") else (B, T)
        if isinstance(got, torch.Tensor) and tuple(got.shape[:2]) == lead:
            return {**kwargs, **made}, {"how": text, "line": used_at(module, names), "names": names}
    listed = ", ".join(names)
    why = first.en if first is not None else "no layout gave an output [B, T, ·]"
    why_zh = first.zh if first is not None else "没有一种布局给出 [B, T, ·] 的输出"
    ways = "; ".join(tried[:4])
    raise LearnerError(
        f"forward 需要旋转位置编码表（{listed}），审计器没能做出可用的表：试过 {ways}；"
        f"{why_zh}。请在文件里写一个 precompute_freqs_cis(dim, end) 之类的函数，或审计一个"
        f"自己生成这些表的包装模块",
        f"forward takes rotary position tables ({listed}), which the auditor could not make in "
        f"a layout your code accepts: it tried {ways}; {why}. Define a precompute function "
        f"such as precompute_freqs_cis(dim, end) in your file, or audit a wrapper module that "
        f"makes the tables itself",
        "call",
    )


def _head_dim(module: nn.Module, C: int) -> int:
    """One head's size, read from the module's attributes (``head_dim``...) or C."""
    for name in ("head_dim", "head_size", "d_head", "d_k", "dim_head", "head_dims"):
        value = getattr(module, name, None)
        if type(value) is int and value > 0:
            return value
    heads = next(
        (v for n in ("n_heads", "n_head", "num_heads", "n_local_heads", "heads")
         if type(v := getattr(module, n, None)) is int and v > 0),
        1,
    )  # fmt: skip
    return max(C // heads, 1)


#: An output may hold at most this many times x's numbers (attention returns [B, T, width]
#: with width at most C): past it the audit does not compare, it says so.
OUTPUT_FACTOR = 16


def unusable(out: torch.Tensor, x: torch.Tensor) -> None:  # x: [B, T, C]
    """Refuse, in one line, an output the audit cannot compare with a reference: complex, not
    dense (sparse, nested), on another device (meta, a GPU), a single number or far larger
    than attention returns. Checked where the output is made and again by the judge.

    Raises:
        LearnerError: naming what the module returned (``where="call"``).
    """
    from attnlab.audit.loader import LearnerError

    if out.is_nested:
        zh, en = "嵌套张量（nested tensor）", "a nested tensor"
    elif out.layout != torch.strided:
        zh, en = f"稀疏张量（{out.layout}）", f"a sparse tensor ({out.layout})"
    elif out.is_meta or out.device.type != "cpu":
        zh, en = f"{out.device} 设备上的张量", f"a tensor on the {out.device} device"
    elif out.is_complex():
        zh, en = f"复数张量（{out.dtype}）", f"a complex tensor ({out.dtype})"
    elif out.dim() == 0:
        zh, en = "一个标量（形状 []）", "a single number (shape [])"
    elif out.numel() > OUTPUT_FACTOR * x.numel():
        zh = f"形状为 {list(out.shape)} 的张量（{out.numel():,} 个数）"
        en = f"a tensor of shape {list(out.shape)} ({out.numel():,} numbers)"
    else:
        return
    raise LearnerError(
        f"你的模块返回了{zh}：审计只比较形状为 [B, T, 宽度] 的 CPU 实数张量",
        f"your module returned {en}: the audit compares a dense real CPU tensor [B, T, width]",
        "call",
    )


#: A score this far below the largest kept score of its row gets weight 0 in float32
#: (e^-50 ≈ 2e-22): it is blocked, whether filled with −∞, −1e9 or finfo.min.
BLOCKED_BELOW = 50.0


def blocked(scores: torch.Tensor) -> torch.Tensor:
    """Which entries of softmax inputs ``[.., T, T]`` are blocked: −∞, or
    :data:`BLOCKED_BELOW` under the largest entry on or below the diagonal of their row."""
    T = scores.size(-1)
    future = ~torch.tril(torch.ones(T, T, dtype=torch.bool))  # [T, T]
    top = scores.double().masked_fill(future, float("-inf")).amax(-1, keepdim=True)  # [.., T, 1]
    return scores.double() < top - BLOCKED_BELOW


def blocks_the_future(run: Run) -> bool:
    """The softmax inputs read as ``[B, n_head, T, T]`` block exactly the future positions."""
    inp = run.softmax_inputs()
    if inp is None:
        return False
    future = ~torch.tril(torch.ones(run.T, run.T, dtype=torch.bool))  # [T, T]
    return bool((blocked(inp) == future).all())


def aside(run: Run) -> bool:
    """A softmax ran over an axis whose length is not T on an input, in any layout
    (``[B, H, T, T]``, time first ``[T, T, B, H]``), with exactly two axes of length T, the
    queries' and then the keys', that blocks exactly the future: the mask is right and the
    weights are normalised over another axis than the keys."""
    from attnlab.audit.record import softmax_dim

    T = run.T
    future = ~torch.tril(torch.ones(T, T, dtype=torch.bool))  # [T, T]
    for c in (*run.rec.calls, *run.rec.time_first):
        inp, dim = c.args[0] if c.args else None, softmax_dim(c) if c.kind == "softmax" else None
        if not isinstance(inp, torch.Tensor) or dim is None or inp.dim() < 3:
            continue
        at = [i for i, n in enumerate(inp.shape) if n == T]
        if len(at) == 2 and inp.size(dim) != T:
            scores = inp.movedim(at, (-2, -1))  # [.., T, T]: queries, keys
            if bool((blocked(scores) == future).all()):
                return True
    return False


def off_the_keys(run: Run) -> bool:
    """A softmax over a ``[.., T, T]`` table ran over another axis than the last, the keys."""
    return any(d not in (-1, None) for d in run.softmax_dims())


def as_heads(t: torch.Tensor) -> torch.Tensor:
    """``[B, T, T]`` → ``[B, 1, T, T]``; ``[B, n_head, T, T]`` unchanged."""
    return t.unsqueeze(1) if t.dim() == 3 else t


def close(a: torch.Tensor | None, b: torch.Tensor | None, tol: float = 2e-4) -> bool:
    """Same shape and equal within ``tol`` (absolute + relative; NaN equals NaN)."""
    if a is None or b is None or a.shape != b.shape:
        return False
    return bool(torch.allclose(a.double(), b.double(), rtol=tol, atol=tol, equal_nan=True))


def first_diff(got: torch.Tensor, want: torch.Tensor) -> tuple[int, ...]:
    """Index of the largest difference between two same-shaped tensors (NaN counts as large)."""
    diff = (got.double() - want.double()).abs().nan_to_num(nan=float("inf"), posinf=float("inf"))
    both_nan = got.isnan() & want.isnan()
    diff = diff.masked_fill(both_nan, 0.0)
    flat = int(diff.flatten().argmax())
    # Unravelled by hand: ``torch.unravel_index`` imports sympy on its first call (1.4 s).
    index = []
    for size in reversed(got.shape):
        flat, i = divmod(flat, size)
        index.append(i)
    return tuple(reversed(index))
