"""A checklist item's verdict and the small formatters its evidence uses."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch

PASS, FAIL, NOT_CHECKED = "PASS", "FAIL", "NOT CHECKED"
SECTION = {1: 1, 2: 4, 3: 4, 4: 8, 5: 11, 6: 5, 7: 6, 8: 15, 9: 14, 10: 16}


@dataclass
class Verdict:
    """PASS / FAIL / NOT CHECKED with bilingual evidence and the mistakes that explain it."""

    status: str
    zh: str
    en: str
    mistakes: list[str] = field(default_factory=list)


def fmt(v: float) -> str:
    return "nan" if math.isnan(v) else ("-inf" if v == float("-inf") else f"{v:.3f}")


def vec(t: torch.Tensor) -> str:
    return "[" + ", ".join(fmt(float(v)) for v in t.flatten()) + "]"


def idx(i: tuple[int, ...]) -> str:
    return "[" + ",".join(str(n) for n in i) + "]"


def heads_idx(w: torch.Tensor, i: tuple[int, ...]) -> str:
    return idx(i if w.size(1) > 1 else (i[0], *i[2:]))
