"""The lesson's numbers for the web page, read from :mod:`attnlab.lesson.numbers`, and their format.

Nothing here computes a number: :func:`lesson_numbers` gathers what the one keyed source serves,
so the page shows exactly the values the scripts print and the tests check.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

import torch

from attnlab.lesson import numbers
from attnlab.lesson.cost import CostRow
from attnlab.lesson.experiment import ExperimentResult
from attnlab.lesson.shapes import ShapeRow
from attnlab.pipeline import AttentionStages
from attnlab.show.fmt import fmt_num


@dataclass(frozen=True)
class LessonNumbers:
    """Every computed quantity the 20 sections show."""

    stages: AttentionStages  # the lesson's head on prompts A and B
    experiment: ExperimentResult  # section 16
    cost: tuple[CostRow, ...]  # section 17
    shapes: tuple[ShapeRow, ...]  # section 9's extra check
    mask_demo: dict[str, torch.Tensor]  # section 11: "fill_zero", "fill_neg_inf", [T_key] each
    uniform: torch.Tensor  # [B, T, C] section 1's causal mean
    uniform_weights: torch.Tensor  # [B, T, T] the mean's fixed reading ratios
    final: dict[str, torch.Tensor]  # section 5's final rows
    mask_t4: torch.Tensor  # [4, 4] section 10's larger mask, as 0/1

    @property
    def sizes(self) -> dict[str, int]:
        """B, T, C, d_head and V_vocab as measured on the tensors."""
        B, T, C = self.stages.x.shape
        return {
            "B": B,
            "T": T,
            "C": C,
            "d": self.stages.q.size(-1),
            "V": self.experiment.before.logits.size(-1),
        }


@cache
def lesson_numbers() -> LessonNumbers:
    """The numbers of the whole lesson, from :mod:`attnlab.lesson.numbers`."""
    return LessonNumbers(
        stages=numbers.stages(),
        experiment=numbers.experiment(),
        cost=numbers.cost_rows(),
        shapes=numbers.shape_rows(),
        mask_demo={
            "fill_zero": numbers.tensor("mask_demo.zero_fill"),
            "fill_neg_inf": numbers.tensor("mask_demo.neg_inf"),
        },
        uniform=numbers.tensor("uniform.mean"),
        uniform_weights=numbers.tensor("uniform.weights"),
        final=numbers.final_rows(),
        mask_t4=numbers.tensor("causal_mask_t4").to(torch.int64),
    )


def num(value: float | torch.Tensor, p: int = 3) -> str:
    """One number with ``p`` decimals (−∞ as ``-∞``, never ``-0.000``)."""
    return fmt_num(float(value), p)


def vec(values: Sequence[float] | torch.Tensor, p: int = 3) -> str:
    """``[0.599, 0.401]``."""
    items = values.tolist() if isinstance(values, torch.Tensor) else list(values)
    return "[" + ", ".join(num(v, p) for v in items) + "]"


def short_vec(values: Sequence[float] | torch.Tensor, p: int = 3) -> str:
    """``[1, 0.283]``: like :func:`vec` with trailing zeros dropped."""
    items = values.tolist() if isinstance(values, torch.Tensor) else list(values)
    return "[" + ", ".join(tex_num(v, p) for v in items) + "]"


def shape(values: Sequence[int]) -> str:
    """``[2,2,4]`` (the lesson's compact form)."""
    return "[" + ",".join(str(int(v)) for v in values) + "]"


def tex_num(value: float, p: int = 3) -> str:
    """A number for LaTeX: ``-\\infty`` for −∞, trailing zeros dropped (``0.8``, ``1``)."""
    v = float(value)
    if v == float("-inf"):
        return r"-\infty"
    text = fmt_num(v, p)
    return text.rstrip("0").rstrip(".") if "." in text else text


def tex_matrix(t: torch.Tensor, p: int = 3) -> str:
    """A 2-D tensor (or a 1-D row) as a LaTeX ``bmatrix``."""
    rows = t.tolist() if t.dim() == 2 else [t.tolist()]
    body = r"\\".join("&".join(tex_num(v, p) for v in row) for row in rows)
    return r"\begin{bmatrix}" + body + r"\end{bmatrix}"
