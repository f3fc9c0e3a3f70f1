"""The lesson's numbers for the web page, computed once through the pipeline.

Nothing here computes attention: :func:`lesson_numbers` gathers what :mod:`attnlab.pipeline`,
:mod:`attnlab.lesson.experiment`, :mod:`attnlab.lesson.cost`, :mod:`attnlab.lesson.shapes` and
:mod:`attnlab.show.walk` return, so the page shows exactly the values the tests check.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import torch

from attnlab import example
from attnlab.lesson.cost import CostRow, cost_table
from attnlab.lesson.experiment import ExperimentResult, run_experiment
from attnlab.lesson.shapes import ShapeRow, measure_shapes
from attnlab.pipeline import AttentionStages, causal_mask, lesson_stages
from attnlab.show.walk import final_row_softmax, mask_fill_demo, uniform_mean, uniform_mean_stages


@dataclass(frozen=True)
class LessonNumbers:
    """Every computed quantity the 20 sections show."""

    stages: AttentionStages  # the lesson's head on prompts A and B
    experiment: ExperimentResult  # section 16
    cost: list[CostRow]  # section 17
    shapes: list[ShapeRow]  # section 9's extra check
    mask_demo: dict[str, list[float]]  # section 11
    uniform: torch.Tensor  # [B, T, C] section 1's causal mean
    uniform_weights: torch.Tensor  # [B, T, T] the mean's fixed reading ratios
    final: dict[str, torch.Tensor]  # section 5's final rows
    mask_t4: torch.Tensor  # [4, 4] section 10's larger mask

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
    """The numbers of the whole lesson (computed on first use, then shared)."""
    stages = lesson_stages()
    cfg = example.COST_CHECK
    return LessonNumbers(
        stages=stages,
        experiment=run_experiment(),
        cost=cost_table(cfg.tokens, cfg.batch, cfg.heads),
        shapes=measure_shapes(**example.SHAPE_CHECK),
        mask_demo=mask_fill_demo(),
        uniform=uniform_mean(stages.x),
        uniform_weights=uniform_mean_stages(stages.x).weights,
        final=final_row_softmax(stages),
        mask_t4=causal_mask(4).to(torch.int64),
    )
