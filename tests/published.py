"""The numbers the lesson publishes (its README table and page), typed once, for every test.

Each row names the lesson section, the key that computes the number in
:mod:`attnlab.lesson.numbers`, the value as the lesson prints it and the decimals it prints.
``tests/test_lesson_numbers.py`` compares every row with the code; other tests look a row up
with :func:`row` instead of typing a published number again. A number the lesson does not
publish (what a mistake gives, a fourth decimal) comes from the code in the test, never from here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

INF = float("-inf")
#: Tolerance of a value the lesson states exactly (0.8, a shape, a count), not rounded.
EXACT = 1e-12


@dataclass(frozen=True)
class Published:
    """One published number (or row, or table) and where the code computes it.

    Attributes:
        section: the lesson section(s) that print it, e.g. ``"5-11"``.
        key: its key in :mod:`attnlab.lesson.numbers`.
        value: as printed: a number or a (nested) list; −∞ as ``INF``.
        decimals: the decimals printed; the code must agree to half a unit of the last one.
        exact: the lesson's value is exact, not rounded: agree within :data:`EXACT`.
        terms: the page adds these terms after rounding them to ``decimals`` (section 5's
            ``2.226 + 1.492 = 3.718``, while the exact sum is 3.7174).
    """

    section: str
    key: str
    value: Any
    decimals: int
    exact: bool = False
    terms: str | None = None

    @property
    def tolerance(self) -> float:
        """How far the computed value may lie from :attr:`value`."""
        return EXACT if self.exact else 0.5 * 10.0**-self.decimals + 1e-12

    @property
    def text(self) -> str:
        """The value as the lesson prints it: ``[0.550, 0.450]``, ``4,000,000``, ``-0.076159``."""
        return text(self.value, self.decimals)


def text(value: Any, decimals: int) -> str:
    """``value`` printed with ``decimals`` decimals (whole numbers with thousands commas)."""
    if isinstance(value, list | tuple):
        return "[" + ", ".join(text(v, decimals) for v in value) + "]"
    if math.isinf(value):
        return "-∞" if value < 0 else "∞"
    if decimals == 0:
        return f"{int(value):,}"
    return f"{value:.{decimals}f}"


def flat(value: Any) -> list[float]:
    """A number or a nested list (or anything with ``tolist``) as one flat list of floats."""
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, list | tuple):
        return [x for item in value for x in flat(item)]
    return [float(value)]


_ROOT_2 = math.sqrt(2)
P = Published

PUBLISHED: tuple[Published, ...] = (
    P("1", "uniform.mean.A.final", [0.5, 0.5, 0, 0], 1, exact=True),
    P("1", "uniform.mean.B.final", [0, 0.5, 0.5, 0], 1, exact=True),
    P("1", "uniform.weights.A.final", [0.5, 0.5], 1, exact=True),
    P("4", "k.A.final", [0.283, 0.283], 3),
    P("4", "k.A.final", [0.2 * _ROOT_2, 0.2 * _ROOT_2], 3, exact=True),  # 0.2·√2 each
    P("4", "raw_scores.A", [[0.566, 0.283], [1.131, 0.566]], 3),
    P("4", "raw_scores.B", [[0.071, 0], [0.141, 0.566]], 3),
    P("5-8", "scaled_scores.A.final", [0.8, 0.4], 1, exact=True),
    P("5-8", "scaled_scores.B.final", [0.1, 0.4], 1, exact=True),
    P("5", "exp.A.final", [2.226, 1.492], 3),
    P("5", "exp.B.final", [1.105, 1.492], 3),
    P("5", "exp_sum.A.final", 3.718, 3, terms="exp.A.final"),
    P("5", "exp_sum.B.final", 2.597, 3, terms="exp.B.final"),
    P("5-11", "weights.A", [[1, 0], [0.599, 0.401]], 3),
    P("5-11", "weights.B", [[1, 0], [0.426, 0.574]], 3),
    P("5-11", "weights.A[0]", [1, 0], 0, exact=True),
    P("5-11", "weights.B[0]", [1, 0], 0, exact=True),
    P("5-11", "weights.A.final", [0.5987, 0.4013], 4),
    P("5-11", "weights.B.final", [0.4256, 0.5744], 4),
    P("6", "output.A.final", [0.599, 0.401], 3),
    P("6", "output.B.final", [-0.426, 0.574], 3),
    P("9", "shapes.x", [1, 3, 4], 0, exact=True),
    P("9", "shapes.q", [1, 2, 3, 2], 0, exact=True),
    P("9", "shapes.raw_scores", [1, 2, 3, 3], 0, exact=True),
    P("9", "shapes.concat", [1, 3, 4], 0, exact=True),
    P("10", "causal_mask_t4", [[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0], [1, 1, 1, 1]], 0, True),
    P("11", "masked_scores.A", [[0.4, INF], [0.8, 0.4]], 1, exact=True),
    P("11", "masked_scores.B", [[0.05, INF], [0.1, 0.4]], 2, exact=True),
    P("11", "mask_demo.row", [0.2, 0.9], 1, exact=True),
    P("11", "mask_demo.zero_fill", [0.550, 0.450], 3),
    P("11", "mask_demo.neg_inf_fill", [1, 0], 0, exact=True),
    P("16", "experiment.h.A", [0.598688, 0.401312], 6),
    P("16", "experiment.h.B", [-0.425557, 0.574443], 6),
    P("16", "experiment.logits.A", [0, 0.598688, 1.197375, -0.197375, 0], 6),
    P("16", "experiment.logits.B", [0, -0.425557, -0.851115, 1, 0], 6),
    P("16", "experiment.p_target.A", 0.416424, 6),  # p(AI | A)
    P("16", "experiment.losses.A", 0.876051, 6),
    P("16", "experiment.p_target.B", 0.172455, 6),  # p(我 | B)
    P("16", "experiment.losses.B", 1.757621, 6),
    P("16", "experiment.mean_loss", 1.316836, 6),
    P("16", "experiment.grad", -0.076159, 6),  # d(mean loss)/d W_Q[1,0]
    P("16", "experiment.lr", 0.01, 2, exact=True),
    P("16", "experiment.param_new", 1.000762, 6),
    P("16", "experiment.mean_loss_after", 1.316778, 6),
    P("16", "experiment.p_target_after.B", 0.172453, 6),
    P("16", "experiment.score_slopes.A", [0.8, 0.2], 1, exact=True),  # [0.8q, 0.2q+0.2]
    P("16", "experiment.score_intercepts.A", [0, 0.2], 1, exact=True),
    P("16", "experiment.score_slopes.B", [0, 0.2], 1, exact=True),  # [0.1, 0.2q+0.2]
    P("16", "experiment.score_intercepts.B", [0.1, 0.2], 1, exact=True),
    P("17", "cost.elements_short", 16, 0, exact=True),
    P("17", "cost.elements_long", 4_000_000, 0, exact=True),
    P("17", "cost.growth_short_to_long", 250_000, 0, exact=True),
    P("17", "cost.growth_when_doubled", 4, 0, exact=True),
)


def row(key: str) -> Published:
    """The first published row computed by ``key``; ``KeyError`` names the known keys."""
    for r in PUBLISHED:
        if r.key == key:
            return r
    raise KeyError(f"no published number has key {key!r}; known: {[r.key for r in PUBLISHED]}")
