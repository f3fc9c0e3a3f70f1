"""What a learner's rounding allows: work carried from rounded intermediates.

By hand a learner writes every intermediate to :data:`CARRIED` decimals (the lesson prints
``exp values = [1.105, 1.492]``, ``sum = 2.597``) and goes on from there, so B's weight
``1.105 / 2.597 = 0.4255`` is right work although the exact value is 0.42556. :func:`carried`
recomputes a stage of the lesson's single head from the right previous stage rounded that way;
the grader accepts the hull of the exact and the carried value.

(How few decimals are too coarse to tell right from a catalogued mistake is the grader's
question: :func:`attnlab.grading.grade.needed_decimals`.)

Example::

    >>> [round(w, 4) for w in carried("weights", prompt=1, row=1)]
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


_SEEN: list[tuple[MistakeInput, dict[str, torch.Tensor]]] = []


def carried_stages(inp: MistakeInput) -> dict[str, torch.Tensor]:
    """Each stage of a single head computed from the right previous stage rounded to
    :data:`CARRIED` decimals (the softmax's exps and their sum rounded too), as a learner does
    by hand from the lesson's printed numbers."""
    for seen, stages in _SEEN:
        if seen is inp:
            return stages
    right = diagnosis.correct_stages(inp)
    q, k, v = right["q"], right["k"], right["v"]  # [B, T, d_head]: X·W, nothing to round before
    raw = _r(q) @ _r(k).transpose(-2, -1)  # [B, T, T]
    scaled = _r(right["raw_scores"]) / math.sqrt(q.size(-1))  # [B, T, T]
    future = right["masked_scores"].isinf()
    masked = _r(right["scaled_scores"]).masked_fill(future, -math.inf)  # [B, T, T]
    exps = _r(torch.exp(_r(right["masked_scores"])))  # [B, T, T]
    weights = exps / _r(exps.sum(-1, keepdim=True))  # [B, T, T]
    output = _r(right["weights"]) @ _r(v)  # [B, T, d_head]
    stages = {"raw_scores": raw, "scaled_scores": scaled, "masked_scores": masked,
              "weights": weights, "output": output}  # fmt: skip
    logits = steps.lm_head(_r(right["output"]), inp.w_vocab)
    if logits is not None:
        stages["logits"] = logits  # [B, T, V_vocab]
    _SEEN[:] = [*_SEEN[-7:], (inp, stages)]
    return stages


def carried(
    stage: str,
    prompt: int,
    head: int = 1,
    row: int | None = None,
    column: int | None = None,
    inp: MistakeInput | None = None,
) -> list[float] | None:
    """The right numbers of ``stage`` at one place (as :func:`attnlab.mistakes.diagnosis.value_at`
    addresses it) computed from intermediates rounded to :data:`CARRIED`
    decimals, or None where rounding changes nothing to carry (``x``, ``q``, a multi-head
    input)."""
    inp = steps.lesson_input() if inp is None else inp
    if not inp.is_single_head:
        return None
    table = carried_stages(inp).get(stage)
    if table is None:
        return None
    part = diagnosis.value_at(table, prompt, head, row, column)
    return None if part is None else part.flatten().tolist()
