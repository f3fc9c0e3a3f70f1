"""Where a learner's forward first departs from the reference: its stages, compared in order.

When the output differs from the reference, the tensors the recorder saw in the learner's
forward are read as the lesson's stages (:func:`~attnlab.audit.stage_seen.seen_stages`): q, k
and v, the raw scores, the softmax's input (its kept cells: the scaled scores; its future cells:
the mask) and output (the weights), the heads' outputs, the concatenation and the output
projection.
:func:`locate` compares them with the reference's, in that order, and returns the first that
differs (:class:`Located`), with the checklist item that owns it and the line of the learner's
file where the tensor was made; or, when every stage it could see agrees, says that the
difference comes after the last of them.

A learner may group the features into heads differently from the reference's reading (heads
split from interleaved features): the per-head stages are compared with the reference for the
learner's own grouping, found by matching q's columns; the concatenation must put each feature
back in the column it came from.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import torch

from attnlab.audit.context import Audit, Side
from attnlab.audit.observe import close, first_diff
from attnlab.audit.stage_seen import seen_stages
from attnlab.mistakes import diagnosis

#: Stage name → checklist item that owns it, in forward order.
OWNER: dict[str, int] = {
    "q": 2, "k": 2, "v": 2, "raw_scores": 3, "scaled_scores": 4, "masked_scores": 5,
    "weights": 6, "head_outputs": 7, "concat": 8, "projection": 8, "output": 8,
}  # fmt: skip
#: The stages in the order data flows through them.
#: v comes just before the heads' outputs, the one stage that reads it: a difference in v
#: cannot explain one in the scores.
ORDER = ("q", "k", "raw_scores", "scaled_scores", "masked_scores", "weights", "v", "head_outputs",
         "concat", "projection")  # fmt: skip
#: A masked score at or below this counts as blocked (−∞, −1e9, ``finfo.min``).
BLOCKED = -1e4


@dataclass
class Located:
    """The first stage that differs from the reference.

    Attributes:
        stage: a key of :data:`OWNER`, or ``"after"``: every stage seen agrees and the output
            differs after the last of them (``compared``).
        item: the checklist item that owns the stage (for ``"after"``: 8 when the output layer
            is applied again, else 0: no item owns what follows W_O).
        got, want: the learner's tensor and the reference's (same shape unless ``shape``).
        index: where they differ most, in ``got``.
        line: the learner's line that made ``got`` (for ``"after"``: the last stage's line).
        lesson: True when found on the lesson example, False on the random probe input.
        compared: the stages seen before it, all equal to the reference.
        what: ``{"zh", "en"}``: what the code does there, when it can be named.
        seen: every stage the forward showed; shape: the input's ``[B, T, C]``.
    """

    stage: str
    item: int
    got: torch.Tensor
    want: torch.Tensor
    index: tuple[int, ...]
    line: int | None
    lesson: bool
    compared: list[str] = field(default_factory=list)
    what: dict[str, str] | None = None
    #: The stages the recorded calls showed at all, and the shape of the input they came from.
    seen: list[str] = field(default_factory=list)
    shape: tuple[int, ...] = ()
    #: Stages between the last one that agrees and this one that the forward did not show
    #: (inside SDPA, say): the difference may start there, so no item is named.
    hidden: list[str] = field(default_factory=list)


def columns(t: torch.Tensor) -> torch.Tensor:
    """``[B, n_head, T, d]`` → ``[B*T, n_head*d]``: one column per feature, heads side by side."""
    B, H, T, d = t.shape
    return t.permute(0, 2, 1, 3).reshape(B * T, H * d)


def match_columns(small: torch.Tensor, big: torch.Tensor) -> list[int] | None:
    """For each column of ``small`` ``[N, m]`` a distinct equal column of ``big`` ``[N, n]``
    (the same index when it fits), or None when one has no equal."""
    if small.dim() != 2 or big.dim() != 2 or small.size(0) != big.size(0):
        return None
    tol = 2e-4 + 2e-4 * big.abs()  # [N, n]
    ok = ((small.T[:, None, :] - big.T[None, :, :]).abs() <= tol.T[None]).all(-1)  # [m, n]
    used: set[int] = set()
    picked = []
    for i in range(small.size(1)):
        free = [j for j in ok[i].nonzero().flatten().tolist() if j not in used]
        if not free:
            return None
        j = i if i in free else free[0]
        used.add(j)
        picked.append(j)
    return picked


def _four(t: torch.Tensor) -> torch.Tensor:
    return (t.unsqueeze(1) if t.dim() == 3 else t).double()


def _regrouped(side: Side, perm: list[int]) -> dict[str, torch.Tensor]:
    """The reference stages with the learner's grouping of features into heads."""
    assert side.inp is not None and side.ref is not None
    if perm == list(range(len(perm))):
        return side.ref
    inp = side.inp
    w_o = inp.w_o[perm, :] if inp.w_o is not None else None
    return diagnosis.correct_stages(
        replace(inp, w_q=inp.w_q[:, perm], w_k=inp.w_k[:, perm], w_v=inp.w_v[:, perm], w_o=w_o)
    )


def _differs(got: torch.Tensor, want: torch.Tensor, scaled: bool = False) -> bool:
    """Not equal; with ``scaled``, not equal up to one positive factor (q, k or the raw scores
    may carry the scale early: ``q * d**-0.5``; the softmax input decides item 4)."""
    if got.shape != want.shape:
        return True
    if scaled and float((want * want).sum()) > 0:
        c = float((got * want).sum() / (want * want).sum())
        return not (c > 0 and close(got / c, want))
    return not close(got, want)


def _factor(got: torch.Tensor, want: torch.Tensor) -> float:
    """The positive factor between two tensors of the same values up to scale and column order
    (their norms' ratio), 1 when there is none."""
    n = float(want.norm())
    c = float(got.norm()) / n if n > 0 else 1.0
    return c if c > 0 else 1.0


def _locate_side(a: Audit, side: Side, lesson: bool) -> Located | None:
    from attnlab.audit.stage_text import describe, split_without_transpose

    assert side.inp is not None and side.ref is not None
    ref, run = side.ref, side.run
    H = side.inp.num_heads
    d = side.inp.w_q.size(1) // H
    seen = seen_stages(run, d)
    names = [n for n in OWNER if n in seen]
    if "softmax_input" in seen:
        names += ["scaled_scores", "masked_scores"]
    compared: list[str] = []

    def found(
        stage: str,
        got: torch.Tensor,
        want: torch.Tensor,
        line: int | None,
        index: tuple[int, ...] | None = None,
    ) -> Located:
        if index is None:
            index = first_diff(got, want) if got.shape == want.shape else (0,) * got.dim()
        at = Located(stage, OWNER[stage], got, want, index, line, lesson, list(compared))
        at.seen, at.shape = names, tuple(run.x.shape)
        at.what = describe(at, seen, side, a.kind)
        if split_without_transpose(at, side):
            at.item = 8  # the heads' split, as the catalogue's split_without_transpose
        # An unseen stage is vouched for by a later one that agrees and is computed from it
        # (every later stage but v, which reads only x).
        at.hidden = [
            n for n in ORDER[: ORDER.index(stage)]
            if n not in names
            and not any(c != "v" and ORDER.index(c) > ORDER.index(n) for c in compared)
        ]  # fmt: skip
        if at.hidden:
            at.item = 0  # the difference may start in a stage the forward did not show
        return at

    perm = list(range(H * d))
    if "q" in seen:
        want_q = _four(ref["q"])
        got_q = seen["q"].t
        picked = None
        if got_q.shape == want_q.shape:
            wanted = columns(want_q)
            picked = match_columns(columns(got_q), wanted) or match_columns(
                columns(got_q) / _factor(got_q, want_q), wanted
            )
        if got_q.shape != want_q.shape or picked is None:
            return found("q", got_q, want_q, seen["q"].line)
        perm = picked
        compared.append("q")
    ref = _regrouped(side, perm)
    T = run.T
    keep = torch.tril(torch.ones(T, T, dtype=torch.bool))
    for name in ("k", "raw_scores", "softmax_input", "weights", "v", "head_outputs"):
        if name not in seen:
            continue
        got = seen[name].t
        early = name in ("k", "raw_scores")  # may carry the scale (or a part of it)
        if name == "softmax_input":
            want = _four(ref["scaled_scores"])
            if got.shape != want.shape:
                return found("scaled_scores", got, want, seen[name].line)
            masked = _four(ref["masked_scores"])
            shut = (got <= BLOCKED) & keep  # a cell the mask must leave open, blocked
            if bool(shut.any()):
                index = tuple(int(i) for i in shut.nonzero()[0])
                return found("masked_scores", got, masked, seen[name].line, index)
            # Softmax ignores a shift of a row: ``s - s.max(-1)`` is the same step.
            shifted = got - (got - want)[..., :1]  # column 0 is never masked
            kept = torch.where(keep, shifted, want)
            if _differs(kept, want):
                line = seen["scaled_line"].line if "scaled_line" in seen else seen[name].line
                index = first_diff(kept, want)
                return found("scaled_scores", got, want, line, index)
            open_future = ~(got <= BLOCKED) & ~keep  # a future cell the softmax reads (or NaN)
            if bool(open_future.any()):
                index = tuple(int(i) for i in open_future.nonzero()[0])
                return found("masked_scores", got, masked, seen[name].line, index)
            compared += ["scaled_scores", "masked_scores"]
            continue
        heads_out = _four(ref["weights"]) @ _four(ref["v"])  # [B, n_head, T, d_head]
        want = heads_out if name == "head_outputs" else _four(ref[name])
        if _differs(got, want, scaled=early):
            return found(name, got, want, seen[name].line)
        compared.append(name)
    if a.kind == "multihead":
        inverse = sorted(range(len(perm)), key=lambda i: perm[i])
        for name, want in (("concat", ref["concat"][..., inverse]), ("projection", ref["output"])):
            if name not in seen:
                continue
            got = seen[name].t
            if got.shape != want.shape or _differs(got, want):
                return found(name, got, want, seen[name].line)
            compared.append(name)
    last = next((seen[n].line for n in reversed(compared) if n in seen), None)
    out = run.out
    final = [c for c in run.rec.calls if c.line is not None and isinstance(c.out, torch.Tensor)
             and c.out.shape == out.shape and close(c.out, out)]  # fmt: skip
    last = final[-1].line if final else last
    want = ref["output"]
    at = Located("after", 0, out, want, first_diff(out, want) if out.shape == want.shape
                 else (0,) * out.dim(), last, lesson, list(compared))  # fmt: skip
    at.seen, at.shape = names, tuple(run.x.shape)
    at.what = describe(at, seen, side, a.kind)
    return at


def locate(a: Audit) -> Located | None:
    """The first stage where the learner's forward departs from the reference, on the random
    probe input (its columns are all distinct) or else the lesson example; None when both
    outputs equal the reference (the difference shows on other inputs only) or no reference
    exists."""
    for side, lesson in ((a.probe, False), (a.lesson, True)):
        if side.ref is None or side.inp is None or side.matches_ref:
            continue
        try:
            return _locate_side(a, side, lesson)
        except (RuntimeError, ValueError, IndexError):  # tensors of shapes no stage expects
            return None
    return None


#: Largest table side a figure draws (a larger stage is cut to its top-left corner).
TABLE_MAX = 16


def _table(t: torch.Tensor, index: tuple[int, ...]) -> list[list[float | None]]:
    """The 2-D slice of ``t`` that holds ``index`` (its leading axes fixed), JSON-ready: NaN
    and ±∞ as None."""
    while t.dim() > 2:
        t = t[index[0]] if index and index[0] < t.size(0) else t[0]
        index = index[1:]
    if t.dim() == 1:
        t = t.unsqueeze(0)
    t = t[:TABLE_MAX, :TABLE_MAX].double()
    return [[round(v, 6) if math.isfinite(v) else None for v in row] for row in t.tolist()]


def stage_data(a: Audit) -> dict[str, object] | None:
    """The first differing stage as plain data for the report and ``--figure``: its name,
    item, input, line, index and the two 2-D tables (learner's, reference's) that hold the
    index; None when the output equals the reference or no stage was located."""
    from attnlab.audit.stage_text import LABEL, stage_where

    if a.matches_ref or a.unsteady is not None:
        return None
    at = locate(a)
    if at is None:
        return None
    where_zh, where_en = stage_where(at)
    zh, en = LABEL.get(at.stage, ("输出", "the output"))
    return {
        "stage": at.stage,
        "item": at.item,
        "line": at.line,
        "index": list(at.index),
        "label": {"zh": zh, "en": en},
        "input": {"zh": where_zh, "en": where_en},
        "got": _table(at.got, at.index),
        "want": _table(at.want, at.index),
    }
