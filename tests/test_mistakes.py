"""The mistakes catalogue: faithful default steps, distinct bugs, and diagnosis from numbers."""

from __future__ import annotations

from dataclasses import replace

import published
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from attnlab.core import example
from attnlab.core.pipeline import attention_stages, multi_head_stages
from attnlab.core.steps import MistakeInput, Recipe, lesson_input, run
from attnlab.lesson import numbers
from attnlab.mistakes import catalogue, diagnosis
from attnlab.text.errors import InputError

ISSUE_MISTAKES = {
    "token_ids_as_x", "swapped_qk", "scores_not_transposed", "scores_transposed", "no_scale",
    "scale_by_d_k", "scale_by_sqrt_c", "no_mask", "mask_zero_fill", "mask_inverted",
    "mask_off_by_one", "mask_after_softmax", "softmax_query_axis", "weights_times_keys",
    "concat_time_axis", "split_without_transpose", "no_output_projection", "batch_mixed",
    "lm_head_on_weights",
}  # fmt: skip


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _input_for(m: catalogue.Mistake) -> MistakeInput:
    return diagnosis.multihead_example() if m.multihead_only else lesson_input()


def test_catalogue_covers_the_issue_and_every_checklist_item() -> None:
    names = {m.name for m in catalogue.CATALOGUE}
    assert ISSUE_MISTAKES <= names, ISSUE_MISTAKES - names
    assert {m.item for m in catalogue.CATALOGUE} == set(range(1, 11))
    assert len(names) == len(catalogue.CATALOGUE)
    for m in catalogue.CATALOGUE:
        assert 1 <= m.section <= 19 and m.redo in (*catalogue.CHECK_STAGES, "concat"), m.name
        assert all(m.title) and all(m.explain) and m.code != m.fix, m.name


@given(
    B=st.integers(1, 3), T=st.integers(1, 6), heads=st.integers(1, 3), d=st.integers(1, 3),
    seed=st.integers(0, 2**16), with_wo=st.booleans(),
)  # fmt: skip
def test_default_recipe_is_the_pipeline(
    B: int, T: int, heads: int, d: int, seed: int, with_wo: bool
) -> None:
    g = torch.Generator().manual_seed(seed)
    C = heads * d
    x, w_q, w_k, w_v, w_o = (torch.randn(*s, generator=g, dtype=torch.float64)
                             for s in ((B, T, C), (C, C), (C, C), (C, C), (C, C)))  # fmt: skip
    w_o = w_o if with_wo or heads > 1 else None
    got = run(Recipe(), MistakeInput(x, w_q, w_k, w_v, heads, w_o))
    if heads == 1 and w_o is None:
        want = attention_stages(x, w_q, w_k, w_v)
    else:
        want = multi_head_stages(x, w_q, w_k, w_v, heads, w_o)  # type: ignore[assignment]
    for name in ("q", "raw_scores", "scaled_scores", "weights", "output"):
        diff = (got[name] - getattr(want, name)).abs().max().item()
        assert diff < 1e-12, f"{name}: max |diff| = {diff}"


def test_correct_stages_give_the_published_numbers() -> None:
    lesson = diagnosis.correct_stages(lesson_input())  # read from lesson/numbers
    assert lesson["weights"] is numbers.tensor("weights")
    again = diagnosis.correct_stages(replace(lesson_input()))  # through the pipeline
    assert list(lesson) == list(again) == list(catalogue.CHECK_STAGES)
    for name in lesson:
        assert torch.equal(lesson[name], again[name]), name
    for key, got in (
        ("weights.A.final", lesson["weights"][0, 1]),
        ("weights.B.final", lesson["weights"][1, 1]),
        ("experiment.logits.A", lesson["logits"][0, 1]),
    ):
        want = torch.tensor(published.row(key).value, dtype=torch.float64)
        diff = (got - want).abs().max().item()
        assert diff <= published.row(key).tolerance, f"{key}: max |diff| = {diff}"


@pytest.mark.parametrize("m", catalogue.CATALOGUE, ids=lambda m: m.name)
def test_every_mistake_changes_the_numbers_and_is_recognised(m: catalogue.Mistake) -> None:
    inp = _input_for(m)
    right, wrong = diagnosis.correct_stages(inp), diagnosis.mistake_stages(m, inp)
    recognised = []
    for stage in ("weights", "output", "logits", "masked_scores", "raw_scores", "q", "k", "x"):
        if stage not in wrong or wrong[stage].shape != right[stage].shape:
            continue
        for b in range(inp.x.size(0)):
            for row in range(inp.x.size(1)):
                got = wrong[stage][b, 0, row] if wrong[stage].dim() == 4 else wrong[stage][b, row]
                want = right[stage][b, 0, row] if right[stage].dim() == 4 else right[stage][b, row]
                if diagnosis.values_match(got, want, 1e-3):
                    continue
                found = diagnosis.diagnose(stage, got.tolist(), prompt=b, row=row, inp=inp)
                if m in found:
                    return
                recognised.append((stage, b, row, [f.name for f in found]))
    pytest.fail(f"{m.name} never recognised from its own numbers: {recognised[:4]}")


def _rounded(mistake: str, stage: str, b: int, t: int) -> list[float]:
    """What ``mistake`` gives for one row, rounded as a learner writes it (three decimals)."""
    return [round(v, 3) for v in diagnosis.mistake_stages(mistake)[stage][b, t].tolist()]


def test_lesson_example_diagnoses() -> None:
    names = lambda *a, **k: [m.name for m in diagnosis.diagnose(*a, **k)]  # noqa: E731
    assert names("weights", published.row("weights.A.final").value, prompt="A", row=1) == []
    unscaled = _rounded("no_scale", "weights", 0, 1)
    assert names("weights", unscaled, prompt="A", row=1) == ["no_scale"]
    # At C=4, d_head=2, ÷d_k and ÷√C are the same number: both are named.
    by_d_k = _rounded("scale_by_d_k", "weights", 1, 1)
    assert by_d_k == _rounded("scale_by_sqrt_c", "weights", 1, 1)
    assert names("weights", by_d_k, prompt="B", row=1) == ["scale_by_d_k", "scale_by_sqrt_c"]
    # The weights handed on as features: B's weights row where the LM head wants its output
    # row changes the logits, and never the output itself.
    weights_b = torch.tensor(published.row("weights.B").value[1], dtype=torch.float64)
    handed_on = (weights_b @ example.lesson_w_vocab(torch.float64)).tolist()
    assert names("logits", handed_on, prompt="B", row=1, tol=0.002) == ["lm_head_on_weights"]
    assert "lm_head_on_weights" not in names("output", weights_b.tolist(), prompt="B", row=1)
    first_score = published.row("masked_scores.A").value[0][0]  # 0.4, its future then 0
    assert "mask_zero_fill" in names("masked_scores", [first_score, 0.0], prompt="A", row=0)
    assert names("weights", [0.1, 0.2], prompt="A", row=1) == []


def test_zero_fill_reproduces_section_11_demo_row() -> None:
    # Section 11: a row [0.2, future] filled with 0 gives softmax([0.2, 0]) = [0.550, 0.450].
    zero_fill, neg_inf_fill = (
        published.row("mask_demo.zero_fill"),
        published.row("mask_demo.neg_inf_fill"),
    )
    demo = torch.tensor([[published.row("mask_demo.row").value, [0.0, 0.0]]], dtype=torch.float64)
    zero = catalogue.get("mask_zero_fill").recipe
    w = zero.softmax(zero.mask(demo))[0, 0]
    diff = (w - torch.tensor(zero_fill.value, dtype=torch.float64)).abs().max().item()
    assert diff <= zero_fill.tolerance, f"{w}: max |diff| = {diff}"
    right = Recipe()
    assert right.softmax(right.mask(demo))[0, 0].tolist() == neg_inf_fill.value


def test_values_match_handles_infinities_and_nan() -> None:
    inf, nan = float("-inf"), float("nan")
    assert diagnosis.values_match(torch.tensor([0.4, inf]), torch.tensor([0.4002, inf]), 5e-4)
    assert diagnosis.values_match(torch.tensor([nan]), torch.tensor([nan]), 5e-4)
    assert not diagnosis.values_match(torch.tensor([0.4, 0.0]), torch.tensor([0.4, inf]), 5e-4)
    assert not diagnosis.values_match(torch.tensor([0.4]), torch.tensor([0.4, 0.1]), 5e-4)


def test_errors_name_what_was_expected() -> None:
    with pytest.raises(KeyError, match="no mistake called 'nope'; known: token_ids_as_x"):
        catalogue.get("nope")
    with pytest.raises(
        ValueError, match="mistake 'no_output_projection' needs num_heads >= 2, got 1"
    ):
        diagnosis.mistake_stages("no_output_projection")
    with pytest.raises(InputError, match="prompt: expected one of A, B, got 'C'"):
        diagnosis.diagnose("weights", [1.0, 0.0], prompt="C")


def test_token_ids_mistake_uses_the_ids() -> None:
    inp = replace(lesson_input(), token_ids=torch.tensor([[0, 1], [4, 1]]))
    x = diagnosis.mistake_stages("token_ids_as_x", inp)["x"]
    assert x[1, 0].tolist() == [4.0] * 4


def test_no_token_ids_no_token_id_mistake() -> None:
    """An input of vectors alone (a practice deal, an --input file) has no token IDs to misuse:
    the mistake is neither computed nor named there, and asking for it says why."""
    inp = replace(lesson_input(), token_ids=None)
    assert not catalogue.get("token_ids_as_x").applies_to(inp)
    with pytest.raises(ValueError, match="needs the input's token IDs"):
        diagnosis.mistake_stages("token_ids_as_x", inp)
    for stage in ("q", "raw_scores", "weights", "output"):
        found = diagnosis.mistake_values(stage, 0, 1, 1, None, inp)
        assert "token_ids_as_x" not in found
    assert "token_ids_as_x" in diagnosis.mistake_values("raw_scores", 0, 1, 1, None, lesson_input())
