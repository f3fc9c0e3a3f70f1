"""What a learner's rounding allows: work carried from rounded intermediates.

By hand a learner writes every intermediate to :data:`CARRIED` decimals (the lesson prints
``exp values = [1.105, 1.492]``, ``sum = 2.597``) and goes on from there, so B's weight
``1.105 / 2.597 = 0.4255`` is right work although the exact value is 0.42556. :func:`carried`
recomputes a stage of the lesson's single head from rounded previous stages, on each path a
learner takes by hand (:func:`carried_paths`: the lesson's printed numbers, or their own carried
work with √2 written exactly, as 1.414 or as 1.41); the grader accepts the hull of the exact and
each carried value.

(How few decimals are too coarse to tell right from a catalogued mistake is the grader's
question: :func:`attnlab.grading.grade.needed_decimals`.)

Example::

    >>> [[round(w, 4) for w in path] for path in carried("weights", prompt=1, row=1)][0]
    [0.4255, 0.5745]
"""

from __future__ import annotations

import math

import torch

from attnlab.core import steps
from attnlab.core.steps import MistakeInput
from attnlab.mistakes import diagnosis

#: Decimals a learner carries between steps (as the lesson prints its intermediates).
CARRIED = 3


def _r(t: torch.Tensor) -> torch.Tensor:
    return torch.round(t, decimals=CARRIED)


_SEEN: list[tuple[MistakeInput, tuple[dict[str, torch.Tensor], ...]]] = []


def roots(d_k: int) -> list[float]:
    """√d_k as a learner may write it by hand: exactly (a calculator), to 3 decimals as the
    lesson prints it (``1.414``), or to 2 (``1.41``); each value once."""
    root = math.sqrt(d_k)
    found: list[float] = []
    for r in (root, round(root, CARRIED), round(root, CARRIED - 1)):
        if r not in found:
            found.append(r)
    return found


def carried_paths(inp: MistakeInput) -> tuple[dict[str, torch.Tensor], ...]:
    """The ways a learner carries rounded work by hand, each as its stages: every stage from
    the right previous stage rounded to :data:`CARRIED` decimals (the softmax's exps and their
    sum rounded too, as the lesson prints them), then each stage from the learner's own
    previous stage so rounded (what they carry on with), once for each way of writing √d_k
    (:func:`roots`)."""
    for seen, paths in _SEEN:
        if seen is inp:
            return paths
    right = diagnosis.correct_stages(inp)
    d_k = right["q"].size(-1)
    found = (_fresh(right, inp), *(_chain(right, inp, root) for root in roots(d_k)))
    _SEEN[:] = [*_SEEN[-7:], (inp, found)]
    return found


def _fresh(right: dict[str, torch.Tensor], inp: MistakeInput) -> dict[str, torch.Tensor]:
    """Each stage from the right previous stage rounded (the lesson's printed numbers)."""
    q, k, v = right["q"], right["k"], right["v"]  # [B, T, d_head]: X·W, nothing to round before
    raw = _r(q) @ _r(k).transpose(-2, -1)  # [B, T, T]
    scaled = _r(right["raw_scores"]) / math.sqrt(q.size(-1))  # [B, T, T]
    future = right["masked_scores"].isinf()
    masked = _r(right["scaled_scores"]).masked_fill(future, -math.inf)  # [B, T, T]
    exps = _r(torch.exp(_r(right["masked_scores"])))  # [B, T, T]
    weights = exps / _r(exps.sum(-1, keepdim=True))  # [B, T, T]
    output = _r(right["weights"]) @ _r(v)  # [B, T, d_head]
    return _with_logits({"raw_scores": raw, "scaled_scores": scaled, "masked_scores": masked,
                         "weights": weights, "output": output}, right["output"], inp)  # fmt: skip


def _chain(right: dict[str, torch.Tensor], inp: MistakeInput, root: float
           ) -> dict[str, torch.Tensor]:  # fmt: skip
    """Each stage from the one before it as the learner wrote it, rounded, with √d_k = root:
    the weights 0.425 (1.105 / 2.597) carried into the output as 0.425, not the exact 0.4256."""
    q, k, v = right["q"], right["k"], right["v"]  # [B, T, d_head]
    raw = _r(q) @ _r(k).transpose(-2, -1)  # [B, T, T]
    scaled = _r(raw) / root  # [B, T, T]
    future = right["masked_scores"].isinf()
    masked = _r(scaled).masked_fill(future, -math.inf)  # [B, T, T]
    exps = _r(torch.exp(masked))  # [B, T, T]; exp(−∞) = 0
    weights = exps / _r(exps.sum(-1, keepdim=True))  # [B, T, T]
    output = _r(weights) @ _r(v)  # [B, T, d_head]
    return _with_logits({"raw_scores": raw, "scaled_scores": scaled, "masked_scores": masked,
                         "weights": weights, "output": output}, output, inp)  # fmt: skip


def _with_logits(stages: dict[str, torch.Tensor], output: torch.Tensor, inp: MistakeInput
                 ) -> dict[str, torch.Tensor]:  # fmt: skip
    logits = steps.lm_head(_r(output), inp.w_vocab)
    if logits is not None:
        stages["logits"] = logits  # [B, T, V_vocab]
    return stages


def carried(
    stage: str,
    prompt: int,
    head: int = 1,
    row: int | None = None,
    column: int | None = None,
    inp: MistakeInput | None = None,
) -> list[list[float]]:
    """The right numbers of ``stage`` at one place (as :func:`attnlab.mistakes.diagnosis.value_at`
    addresses it) on each path of :func:`carried_paths`, each set once; none where rounding
    changes nothing to carry (``x``, ``q``, a multi-head input)."""
    inp = steps.lesson_input() if inp is None else inp
    if not inp.is_single_head:
        return []
    found: list[list[float]] = []
    for stages in carried_paths(inp):
        table = stages.get(stage)
        part = None if table is None else diagnosis.value_at(table, prompt, head, row, column)
        values = None if part is None else part.flatten().tolist()
        if values is not None and values not in found:
            found.append(values)
    return found
