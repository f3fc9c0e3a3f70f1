"""What a learner's forward showed of each stage, read from its recorded calls.

:func:`seen_stages` reads q, k and v as the score and value matmuls' inputs, the raw scores as
the score matmul's output, the softmax's input and output, the value matmul's output (the
heads' outputs), and the output layer's input (the concatenation), weight and output; per-head
tensors are stacked as ``[B, n_head, T, X]`` whatever the style (one call per head in a loop,
or one batched call, or SDPA). Each comes with the line of the learner's file that made it
(:func:`made_line`): the recorded call whose result it is.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from attnlab.audit.observe import Run, close
from attnlab.audit.record import Call


@dataclass
class Seen:
    """One stage as the learner's forward made it: the tensor and the line of the learner's file
    (None when no recorded call of that file made it)."""

    t: torch.Tensor
    line: int | None


def _tensors(args: tuple[object, ...]) -> list[torch.Tensor]:
    """The tensors among a call's arguments (also inside one list, as ``torch.einsum`` takes)."""
    found: list[torch.Tensor] = []
    for a in args:
        if isinstance(a, torch.Tensor):
            found.append(a)
        elif isinstance(a, list | tuple):
            found += [t for t in a if isinstance(t, torch.Tensor)]
    return found


def _heads(ts: list[torch.Tensor], B: int) -> torch.Tensor | None:
    """Per-head tensors as ``[B, n_head, T, X]``: one ``[B, T, X]`` per head (a loop), or one
    batched ``[B, n_head, T, X]`` / ``[B, T, X]`` call."""
    if not ts or any(t.dim() not in (3, 4) or t.size(0) != B for t in ts):
        return None
    if len(ts) > 1:
        same = all(t.dim() == 3 and t.shape == ts[0].shape for t in ts)
        return torch.stack(ts, dim=1).double() if same else None
    return (ts[0].unsqueeze(1) if ts[0].dim() == 3 else ts[0]).double()


def made_line(calls: list[Call], user: Call, t: torch.Tensor) -> int | None:
    """The line of the last call before ``user`` whose result equals ``t``: where the learner's
    file made the tensor ``user`` took (a split, a merge, a scale); None when none did."""
    end = next((i for i, c in enumerate(calls) if c is user), len(calls))
    for c in reversed(calls[:end]):
        o = c.out
        if (
            c.line is not None
            and isinstance(o, torch.Tensor)
            and o.shape == t.shape
            and close(o, t)
        ):
            return c.line
    return None


def _scaled_line(calls: list[Call], score: Call, soft: Call) -> int | None:
    """The first line after the score matmul that made a tensor equal to the softmax input on
    its kept cells (the scaling, before the mask), else the softmax's own line."""
    inp = soft.args[0] if soft.args and isinstance(soft.args[0], torch.Tensor) else None
    start = next((i for i, c in enumerate(calls) if c is score), None)
    if inp is None or start is None or inp.dim() < 2:
        return soft.line
    T = inp.size(-1)
    keep = torch.tril(torch.ones(T, T, dtype=torch.bool))
    for c in calls[start + 1 :]:
        if c is soft:
            break
        o = c.out
        same = isinstance(o, torch.Tensor) and o.shape == inp.shape and c.line is not None
        if same and close(torch.where(keep, o, inp), inp) and not close(o, score.out):
            return c.line
    return soft.line


def _line(calls: list[Call]) -> int | None:
    return next((c.line for c in calls if c.line is not None), None)


def _is_table(c: Call, T: int) -> bool:
    return isinstance(c.out, torch.Tensor) and c.out.dim() >= 3 and c.out.shape[-2:] == (T, T)


def seen_stages(run: Run, d: int) -> dict[str, Seen]:
    """The stages the recorded calls show (see the module docstring), per-head ones as
    ``[B, n_head, T, X]``; a stage the forward did not show is missing."""
    calls, T, B = run.rec.calls, run.T, run.x.size(0)
    soft = [i for i, c in enumerate(calls) if c.kind == "softmax" and _is_table(c, T)]
    score: list[Call] = []
    value: list[Call] = []
    for n, i in enumerate(soft):
        before = [c for c in calls[:i] if c.kind == "matmul" and _is_table(c, T)]
        end = soft[n + 1] if n + 1 < len(soft) else len(calls)
        after = [
            c for c in calls[i + 1 : end]
            if c.kind == "matmul" and isinstance(c.out, torch.Tensor) and not _is_table(c, T)
            and any(t.shape[-2:] == (T, T) for t in _tensors(c.args))
        ]  # fmt: skip
        score += before[-1:]
        value += after[:1]
    found: dict[str, Seen] = {}

    def put(name: str, ts: list[torch.Tensor], users: list[Call], own: bool = False) -> None:
        """Stage ``name`` from ``ts``: the outputs of ``users`` (``own``) or inputs they took,
        then traced back to the call that made the first of them."""
        t = _heads(ts, B)
        if t is None:
            return
        line = _line(users) if own or not ts else made_line(calls, users[0], ts[0])
        found[name] = Seen(t, line if line is not None else _line(users))

    pairs = [_tensors(c.args) for c in score]
    if score and all(len(p) == 2 for p in pairs):
        put("q", [p[0] for p in pairs], score)
        ks = [p[1].transpose(-2, -1) if p[1].shape[-2:] == (d, T) else p[1] for p in pairs]
        put("k", ks, score)
    if score:
        put("raw_scores", [c.out for c in score], score, own=True)
    soft_calls = [calls[i] for i in soft]
    put("softmax_input", [c.args[0] for c in soft_calls if isinstance(c.args[0], torch.Tensor)],
        soft_calls)  # fmt: skip
    put("weights", [c.out for c in soft_calls], soft_calls, own=True)
    if score and soft_calls:
        found["scaled_line"] = Seen(torch.zeros(0), _scaled_line(calls, score[0], soft_calls[0]))
    vals = [[t for t in _tensors(c.args) if t.shape[-2:] != (T, T)] for c in value]
    if value and all(len(v) == 1 for v in vals):
        put("v", [v[0] for v in vals], value)
        put("head_outputs", [c.out for c in value], value, own=True)
    last = max([i for i, c in enumerate(calls) if any(c is v for v in value)], default=-1)
    sdpa = [c for c in calls if c.kind == "sdpa" and isinstance(c.out, torch.Tensor)]
    if not soft and sdpa:
        for n, name in enumerate(("q", "k", "v")):
            got = [c.args[n] if len(c.args) > n else c.kwargs.get(("query", "key", "value")[n])
                   for c in sdpa]  # fmt: skip
            put(name, [t for t in got if isinstance(t, torch.Tensor)], sdpa)
        put("head_outputs", [c.out for c in sdpa], sdpa, own=True)
        last = max(i for i, c in enumerate(calls) if c is sdpa[-1])
    if last >= 0:
        _output_layer(calls, last + 1, run.x.size(-1), found)
    return found


def _output_layer(every: list[Call], start: int, C: int, found: dict[str, Seen]) -> None:
    """The first linear (or matmul by a matrix) after the heads: its input is the concatenation,
    its weight (as ``[in, out]``) the output layer, its output the projection."""
    for c in every[start:]:
        ts = _tensors(c.args)
        if not isinstance(c.out, torch.Tensor) or c.out.dim() != 3 or c.out.size(-1) != C:
            continue
        if c.kind == "linear" and len(ts) >= 2 and ts[1].dim() == 2:
            inp, w = ts[0], ts[1].T
        elif c.kind == "matmul" and len(ts) == 2 and ts[1].dim() == 2:
            inp, w = ts[0], ts[1]
        else:
            continue
        found["concat"] = Seen(inp.double(), made_line(every, c, inp) or c.line)
        found["projection"] = Seen(c.out.double(), c.line)
        found["out_layer"] = Seen(w.double(), c.line)
        return
