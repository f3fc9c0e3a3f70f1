"""Every number the lesson publishes (../shared/lesson/README.md), computed by the code.

Each case carries its section number in its id; the tolerance follows the published precision
(a value printed with n decimals must be within half a unit of its last place).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest
import torch

from attnlab import example
from attnlab.lesson.cost import cost_table
from attnlab.lesson.experiment import run_experiment
from attnlab.lesson.shapes import measure_shapes
from attnlab.pipeline import lesson_stages
from attnlab.show.walk import final_row_softmax, mask_fill_demo, uniform_mean

ST = lesson_stages()
EXP = run_experiment()
INF = float("-inf")


def _decimals(value: float) -> int:
    text = repr(value)
    return len(text.split(".")[1]) if "." in text and "e" not in text else 0


def _flat(v: object) -> list[float]:
    if isinstance(v, torch.Tensor):
        return [float(x) for x in v.flatten().tolist()]
    if isinstance(v, (list, tuple)):
        return [x for item in v for x in _flat(item)]
    return [float(v)]  # type: ignore[arg-type]


# (section, quantity, computed, published)
CASES: list[tuple[str, str, Callable[[], object], object]] = [
    ("1", "uniform mean t=1 A", lambda: uniform_mean(ST.x)[0, 1], [0.5, 0.5, 0, 0]),
    ("1", "uniform mean t=1 B", lambda: uniform_mean(ST.x)[1, 1], [0, 0.5, 0.5, 0]),
    ("4", "K for 喜欢", lambda: ST.k[0, 1], [0.283, 0.283]),
    ("4", "K for 喜欢 is 0.2·√2", lambda: ST.k[0, 1], [0.2 * math.sqrt(2)] * 2),
    ("4", "raw scores S_A", lambda: ST.raw_scores[0], [[0.566, 0.283], [1.131, 0.566]]),
    ("4", "raw scores S_B", lambda: ST.raw_scores[1], [[0.071, 0], [0.141, 0.566]]),
    ("5-8", "scaled final row A", lambda: ST.scaled_scores[0, 1], [0.8, 0.4]),
    ("5-8", "scaled final row B", lambda: ST.scaled_scores[1, 1], [0.1, 0.4]),
    ("5", "exp values A", lambda: final_row_softmax(ST)["exps"][0], [2.226, 1.492]),
    ("5", "exp values B", lambda: final_row_softmax(ST)["exps"][1], [1.105, 1.492]),
    ("5-11", "weights P_A", lambda: ST.weights[0], [[1, 0], [0.599, 0.401]]),
    ("5-11", "weights P_B", lambda: ST.weights[1], [[1, 0], [0.426, 0.574]]),
    ("5-11", "weights A final, 4 d.p.", lambda: ST.weights[0, 1], [0.5987, 0.4013]),
    ("5-11", "weights B final, 4 d.p.", lambda: ST.weights[1, 1], [0.4256, 0.5744]),
    ("6", "head output A final", lambda: ST.output[0, 1], [0.599, 0.401]),
    ("6", "head output B final", lambda: ST.output[1, 1], [-0.426, 0.574]),
    ("11", "masked scaled A", lambda: ST.masked_scores[0], [[0.4, INF], [0.8, 0.4]]),
    ("11", "masked scaled B", lambda: ST.masked_scores[1], [[0.05, INF], [0.1, 0.4]]),
    ("11", "future filled with 0", lambda: mask_fill_demo()["fill_zero"], [0.550, 0.450]),
    ("11", "future filled with -inf", lambda: mask_fill_demo()["fill_neg_inf"], [1, 0]),
    ("16", "h_A", lambda: EXP.before.h[0], [0.598688, 0.401312]),
    ("16", "h_B", lambda: EXP.before.h[1], [-0.425557, 0.574443]),
    ("16", "logits A", lambda: EXP.before.logits[0], [0, 0.598688, 1.197375, -0.197375, 0]),
    ("16", "logits B", lambda: EXP.before.logits[1], [0, -0.425557, -0.851115, 1, 0]),
    ("16", "p(AI|A)", lambda: EXP.before.target_probs[0], 0.416424),
    ("16", "loss A", lambda: EXP.before.losses[0], 0.876051),
    ("16", "p(我|B)", lambda: EXP.before.target_probs[1], 0.172455),
    ("16", "loss B", lambda: EXP.before.losses[1], 1.757621),
    ("16", "mean loss", lambda: EXP.before.loss_mean, 1.316836),
    ("16", "d(mean loss)/dWq[1,0]", lambda: EXP.grad_autograd, -0.076159),
    ("16", "q_new", lambda: EXP.q_new, 1.000762),
    ("16", "mean loss after", lambda: EXP.after.loss_mean, 1.316778),
    ("16", "p(我|B) after", lambda: EXP.after.target_probs[1], 0.172453),
]


@pytest.mark.parametrize(
    ("computed", "published"),
    [pytest.param(c, p, id=f"sec{s}-{q}") for s, q, c, p in CASES],
)
def test_published_number(computed: Callable[[], object], published: object) -> None:
    got, want = _flat(computed()), _flat(published)
    assert len(got) == len(want), f"expected {len(want)} numbers, got {len(got)}"
    for g, w in zip(got, want, strict=True):
        if math.isinf(w):
            assert g == w, f"expected {w}, got {g}"
            continue
        tol = 0.5 * 10 ** -_decimals(w) + 1e-12
        assert abs(g - w) <= tol, f"expected {w} (±{tol:g}), got {g:.8f}; |diff| = {abs(g - w):g}"


def test_sec5_exp_sums_match_the_published_rounding() -> None:
    # The page adds the exponentials after rounding them to 3 d.p. (2.226 + 1.492 = 3.718);
    # the exact sums are 3.7173 and 2.5970.
    sums = final_row_softmax(ST)["sums"].tolist()
    exps = final_row_softmax(ST)["exps"]
    rounded = [round(sum(round(v, 3) for v in row), 3) for row in exps.tolist()]
    assert rounded == [3.718, 2.597]
    assert abs(sums[0] - 3.718) < 1e-3 and abs(sums[1] - 2.597) < 1e-3, sums


def test_sec9_extra_shape_check() -> None:
    shapes = {r.stage: list(r.shape) for r in measure_shapes(**example.SHAPE_CHECK)}
    assert shapes["input"] == [1, 3, 4]
    assert shapes["qkv"] == [1, 2, 3, 2]
    assert shapes["scores"] == [1, 2, 3, 3]
    assert shapes["merged"] == [1, 3, 4]


def test_sec9_lesson_shapes() -> None:
    assert list(ST.x.shape) == [2, 2, 4]
    assert list(ST.q.shape) == list(ST.k.shape) == list(ST.v.shape) == [2, 2, 2]
    assert list(ST.weights.shape) == list(ST.output.shape) == [2, 2, 2]


def test_sec17_score_elements() -> None:
    rows = cost_table(example.COST_CHECK.tokens, example.COST_CHECK.batch, example.COST_CHECK.heads)
    assert [r.elements for r in rows] == [16, 4_000_000]
    assert rows[1].ratio == 250_000


def test_sec16_three_gradients_agree() -> None:
    assert abs(EXP.grad_autograd - EXP.grad_finite_difference) < 1e-8
    assert abs(EXP.grad_autograd - EXP.grad_closed_form) < 1e-12


def test_sec16_honest_trade_off() -> None:
    before, after = EXP.before, EXP.after
    assert after.loss_mean < before.loss_mean
    assert after.target_probs[0] > before.target_probs[0]  # p(AI|A) rises
    assert after.target_probs[1] < before.target_probs[1]  # p(我|B) falls a little


def test_final_rows_differ_between_prompts() -> None:
    assert not torch.allclose(ST.weights[0, -1], ST.weights[1, -1])


@pytest.mark.parametrize(("B", "H", "T"), [(1, 1, 1), (2, 2, 2), (2, 3, 17), (1, 2, 64)])
def test_score_elements_equal_what_the_pipeline_builds(B: int, H: int, T: int) -> None:
    from attnlab.lesson.cost import score_elements
    from attnlab.pipeline import attend

    q = torch.zeros(B, H, T, 1)
    assert score_elements(B, H, T) == attend(q, q, q).raw_scores.numel()
