"""The lesson's numbers for the web page, read from :mod:`attnlab.lesson.numbers`.

Nothing here computes a number: :func:`lesson_numbers` gathers what the one keyed source serves,
so the page shows exactly the values the scripts print and the tests check.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import torch

from attnlab.core.pipeline import AttentionStages
from attnlab.lesson import numbers
from attnlab.lesson.cost import CostRow
from attnlab.lesson.experiment import ExperimentResult
from attnlab.lesson.shapes import ShapeRow


@dataclass(frozen=True)
class LessonNumbers:
    """Every computed quantity the 20 sections show."""

    stages: AttentionStages  # the lesson's head on prompts A and B
    experiment: ExperimentResult  # section 16
    cost: tuple[CostRow, ...]  # section 17
    shapes: tuple[ShapeRow, ...]  # section 9's extra check
    mask_demo: dict[str, torch.Tensor]  # section 11: "zero_fill", "neg_inf_fill", [T_key] each
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
            "zero_fill": numbers.tensor("mask_demo.zero_fill"),
            "neg_inf_fill": numbers.tensor("mask_demo.neg_inf_fill"),
        },
        uniform=numbers.tensor("uniform.mean"),
        uniform_weights=numbers.tensor("uniform.weights"),
        final=numbers.final_rows(),
        mask_t4=numbers.tensor("causal_mask_t4").to(torch.int64),
    )
