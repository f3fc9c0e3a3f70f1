"""Every number the lesson publishes (tests/published.py), computed by the code, and the keys.

Each published row carries its section number in its id; the tolerance follows the published
precision (a value printed with n decimals must be within half a unit of its last place).
"""

from __future__ import annotations

import math

import pytest
import torch
from published import PUBLISHED, Published, flat, row

from attnlab.core import example, steps
from attnlab.lesson import numbers
from attnlab.lesson.cost import cost_table
from attnlab.lesson.shapes import measure_shapes

ST = numbers.stages()
EXP = numbers.experiment()


@pytest.mark.parametrize("published", PUBLISHED, ids=lambda r: f"sec{r.section}-{r.key}")
def test_published_number(published: Published) -> None:
    got, want = flat(numbers.get(published.key)), flat(published.value)
    assert len(got) == len(want), f"expected {len(want)} numbers, got {len(got)}"
    if published.terms is not None:
        # The page adds terms it already rounded: compare that sum, and the exact one loosely.
        d = published.decimals
        rounded = round(sum(round(v, d) for v in flat(numbers.get(published.terms))), d)
        assert rounded == published.value, f"{published.terms} rounded and added: {rounded}"
        assert abs(got[0] - published.value) < 10.0**-d, f"exact sum {got[0]}"
        return
    tol = published.tolerance
    for g, w in zip(got, want, strict=True):
        if math.isinf(w):
            assert g == w, f"expected {w}, got {g}"
            continue
        assert abs(g - w) <= tol, f"expected {w} (±{tol:g}), got {g:.8f}; |diff| = {abs(g - w):g}"


@pytest.mark.parametrize(
    ("named", "indexed"),
    [
        ("weights.A.final", "weights[0,-1]"),
        ("weights.B.final[0]", "weights[1,1,0]"),
        ("uniform.mean.B.final", "uniform.mean[1,1,:]"),
        ("experiment.p_target.B", "experiment.p_target[1]"),
        ("lesson.weights.A", "weights[0]"),
    ],
)
def test_named_parts_are_indices(named: str, indexed: str) -> None:
    assert numbers.parse_key(named)[:2] == numbers.parse_key(indexed)[:2]
    assert torch.equal(numbers.tensor(named), numbers.tensor(indexed))


@pytest.mark.parametrize(
    ("key", "message"),
    [
        ("nope.weights[0]", r"lesson has no 'nope' \(sources: lesson, uniform"),
        ("weightz[0]", r"lesson has no 'weightz'"),
        ("weights[9,0,0]", r"index out of range for shape \[2, 2, 2\]"),
        ("weights[a]", r"index must be integers or ':', got 'a'"),
        ("weights.C", r"a part must be a prompt \(A, B\) or 'final', got 'C'"),
        ("weights.A.last", r"a part must be a prompt \(A, B\) or 'final', got 'last'"),
        ("1.5[", r"key must look like 'source.name.A.final\[i,j\]'"),
    ],
)
def test_bad_keys_are_named(key: str, message: str) -> None:
    with pytest.raises(numbers.UnknownNumberKey, match=message):
        numbers.get(key)


def test_each_source_is_computed_once() -> None:
    assert numbers.stages() is numbers.stages() and numbers.experiment() is numbers.experiment()
    assert numbers.tensor("weights") is ST.weights  # the stage itself, not a recomputation


def test_section_11_demo_is_the_pipeline_and_the_catalogue_zero_fill() -> None:
    from attnlab.mistakes import catalogue

    assert catalogue.get("mask_zero_fill").recipe is steps.ZERO_FILL
    first = numbers.tensor("mask_demo.row")
    scores = torch.stack([first, torch.zeros_like(first)])  # [T, T]: query t=0, then t=1
    zero = catalogue.get("mask_zero_fill").recipe
    assert torch.equal(numbers.tensor("mask_demo.zero_fill"), zero.softmax(zero.mask(scores))[0])
    assert numbers.tensor("mask_demo.neg_inf_fill").tolist() == [1.0, 0.0]  # exp(−∞) = 0 exactly


def test_sec9_extra_shape_check() -> None:
    # The table the scripts print, measured again here, and the keyed shapes agree.
    shapes = {r.stage: list(r.shape) for r in measure_shapes(**example.SHAPE_CHECK)}
    assert shapes == {r.stage: list(r.shape) for r in numbers.shape_rows()}
    for stage, key in (
        ("input", "x"),
        ("qkv", "q"),
        ("scores", "raw_scores"),
        ("merged", "concat"),
    ):
        assert shapes[stage] == row(f"shapes.{key}").value, stage


def test_sec9_lesson_shapes() -> None:
    assert list(ST.x.shape) == [2, 2, 4]
    assert list(ST.q.shape) == list(ST.k.shape) == list(ST.v.shape) == [2, 2, 2]
    assert list(ST.weights.shape) == list(ST.output.shape) == [2, 2, 2]


def test_sec17_score_elements() -> None:
    rows = cost_table(example.COST_CHECK.tokens, example.COST_CHECK.batch, example.COST_CHECK.heads)
    assert rows == list(numbers.cost_rows())
    assert [r.elements for r in rows] == [
        row("cost.elements_short").value,
        row("cost.elements_long").value,
    ]
    assert rows[1].ratio == row("cost.growth_short_to_long").value


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
    from attnlab.core.pipeline import attend
    from attnlab.lesson.cost import score_elements

    q = torch.zeros(B, H, T, 1)
    assert score_elements(B, H, T) == attend(q, q, q).raw_scores.numel()
