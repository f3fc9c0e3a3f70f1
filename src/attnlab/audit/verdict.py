"""A checklist item's verdict, and how its evidence names a cell of the weights."""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from attnlab.text.fmt import compact_shape

PASS, FAIL, NOT_CHECKED = "PASS", "FAIL", "NOT CHECKED"
SECTION = {1: 1, 2: 4, 3: 4, 4: 8, 5: 11, 6: 5, 7: 6, 8: 15, 9: 14, 10: 16}


@dataclass
class Verdict:
    """PASS / FAIL / NOT CHECKED, the evidence (``{"zh": ..., "en": ...}``) and the mistakes
    that explain it."""

    status: str
    evidence: dict[str, str]
    mistakes: list[str] = field(default_factory=list)


def heads_idx(w: torch.Tensor, i: tuple[int, ...]) -> str:
    """``[b,h,t,j]`` of a weight, without ``h`` when there is one head."""
    return compact_shape(i if w.size(1) > 1 else (i[0], *i[2:]))
