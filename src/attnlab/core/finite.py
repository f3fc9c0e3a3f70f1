"""Refuse stages that overflowed: finite numbers in, ±∞ or NaN out.

float64 holds magnitudes up to about 1.8e308. :mod:`attnlab.inputs.model` accepts only finite
numbers,
yet ``x`` entries of 1e154 make ``q·k`` about 1e308·d and the scores overflow; the softmax of
±∞ is NaN and every later stage is NaN. :func:`check_finite_stages` runs after the pipeline (the
one attention code path stays as the lesson writes it), finds the first stage that is not finite
and names it with the product that overflowed, in one line.
"""

from __future__ import annotations

import torch

from attnlab.core.pipeline import AttentionStages, MultiHeadStages
from attnlab.text.errors import InputError
from attnlab.text.i18n import pick

FLOAT64_MAX = torch.finfo(torch.float64).max

#: (stage, the product that makes it), in the order the data flows.
_SHARED: tuple[tuple[str, str], ...] = (
    ("q", "x·W_Q"),
    ("k", "x·W_K"),
    ("v", "x·W_V"),
    ("raw_scores", "q·k"),
    ("scaled_scores", "q·k/√d_k"),
    ("masked_scores", "q·k/√d_k"),
    ("weights", "softmax(masked_scores)"),
)
SINGLE_HEAD_ORDER = (*_SHARED, ("output", "weights·v"))
MULTI_HEAD_ORDER = (
    *_SHARED,
    ("head_outputs", "weights·v"),
    ("concat", "weights·v"),
    ("output", "concat·W_O"),
)


class NonFiniteStageError(InputError):
    """A stage overflowed float64 although every input number was finite.

    Attributes:
        stage: the first stage that is not finite (``"raw_scores"``).
        cause: the product that overflowed (``"q·k"``).
        index: where, as indices into the stage (``[0, 1, 0]``).
    """

    def __init__(self, stage: str, cause: str, index: list[int]) -> None:
        self.stage, self.cause, self.index = stage, cause, index
        super().__init__(self.localized("en"))

    def localized(self, lang: str) -> str:
        """The one-line message in ``lang`` (``str(error)`` is the English one)."""
        limit = f"{FLOAT64_MAX:.1e}".replace("e+", "e")
        return pick(
            lang,
            f"{self.stage} 超出 float64 范围：|{self.cause}| > {limit}（位置 {self.index}）；"
            "请换用更小的数",
            f"{self.stage} overflow float64: |{self.cause}| > {limit} (at {self.index}); "
            "use smaller numbers",
        )


def _finite(stage: str, t: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    finite = torch.isfinite(t)
    if stage == "masked_scores":  # −∞ above the diagonal is the mask's doing, not an overflow
        finite |= ~mask
    return finite


def check_finite_stages(stages: AttentionStages | MultiHeadStages) -> None:
    """Raise :class:`NonFiniteStageError` naming the first stage with ±∞ or NaN.

    Args:
        stages: the pipeline's result on finite input.

    Example::

        >>> from attnlab.core.pipeline import attention_stages
        >>> x = torch.full((1, 2, 2), 1e154, dtype=torch.float64)
        >>> eye = torch.eye(2, dtype=torch.float64)
        >>> check_finite_stages(attention_stages(x, eye, eye, eye))
        Traceback (most recent call last):
        ...
        attnlab.core.finite.NonFiniteStageError: raw_scores overflow float64: |q·k| > 1.8e308 (at [0, 0, 0]); use smaller numbers
    """  # noqa: E501
    order = MULTI_HEAD_ORDER if isinstance(stages, MultiHeadStages) else SINGLE_HEAD_ORDER
    for stage, cause in order:
        finite = _finite(stage, getattr(stages, stage), stages.causal_mask)
        if not bool(finite.all()):
            index = [int(i) for i in torch.nonzero(~finite)[0]]
            raise NonFiniteStageError(stage, cause, index)
