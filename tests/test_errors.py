"""Every error a learner can trigger names what was expected and what was found."""

from __future__ import annotations

import pytest
import torch

from attnlab.core import example
from attnlab.core.modules import AttentionHead, CausalSelfAttention, MultiHeadAttention
from attnlab.core.pipeline import attention_stages, multi_head_stages
from attnlab.text.errors import InputError


@pytest.mark.parametrize("cls", [MultiHeadAttention, CausalSelfAttention])
def test_embed_dim_not_divisible(cls) -> None:
    with pytest.raises(
        ValueError,
        match=r"embed_dim must be divisible by num_heads, got "
        r"embed_dim=6 and num_heads=4",
    ):
        cls(6, 4, 8)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((0, 2, 8), r"embed_dim must be a positive int, got 0"),
        ((4, -1, 8), r"head_size must be a positive int, got -1"),
        ((4, 2, 0), r"context_length must be a positive int, got 0"),
        ((4.0, 2, 8), r"embed_dim must be a positive int, got float"),
    ],
)
def test_non_positive_sizes(args, message) -> None:
    with pytest.raises((ValueError, TypeError), match=message):
        AttentionHead(*args)


def test_num_heads_non_positive() -> None:
    with pytest.raises(ValueError, match=r"num_heads must be a positive int, got 0"):
        MultiHeadAttention(4, 0, 8)


@pytest.mark.parametrize(
    "module",
    [AttentionHead(4, 2, 3), MultiHeadAttention(4, 2, 3), CausalSelfAttention(4, 2, 3)],
    ids=["head", "mha", "fused"],
)
def test_sequence_longer_than_context(module) -> None:
    with pytest.raises(ValueError, match=r"sequence length T=5 exceeds context_length=3"):
        module(torch.randn(1, 5, 4))


@pytest.mark.parametrize(
    "module",
    [AttentionHead(4, 2, 8), MultiHeadAttention(4, 2, 8), CausalSelfAttention(4, 2, 8)],
    ids=["head", "mha", "fused"],
)
def test_wrong_rank_and_width(module) -> None:
    with pytest.raises(ValueError, match=r"x must be \[B, T, C\] with C=4, got shape \[2, 4\]"):
        module(torch.randn(2, 4))
    with pytest.raises(ValueError, match=r"x must be \[B, T, C\] with C=4, got shape \[1, 2, 3\]"):
        module(torch.randn(1, 2, 3))


@pytest.mark.parametrize(
    "module",
    [AttentionHead(4, 2, 8), MultiHeadAttention(4, 2, 8), CausalSelfAttention(4, 2, 8)],
    ids=["head", "mha", "fused"],
)
def test_token_ids_instead_of_vectors(module) -> None:
    ids = example.lesson_token_ids()
    with pytest.raises(
        TypeError,
        match=r"must hold embedding vectors \[B, T, C\] as floats, "
        r"not token IDs: got a torch.int64 tensor of shape \[2, 2\]",
    ):
        module(ids)


def test_pipeline_checks_projections() -> None:
    x = example.lesson_x()
    with pytest.raises(ValueError, match=r"w_k: expected 4 rows \(C from x\) but found 3"):
        attention_stages(x, example.lesson_w_q(), example.lesson_w_k()[:3], example.lesson_w_v())
    with pytest.raises(TypeError, match=r"must be a torch.Tensor \[B, T, C\], got list"):
        attention_stages([[1.0]], example.lesson_w_q(), example.lesson_w_k(), example.lesson_w_v())


def test_multi_head_stages_checks_divisibility() -> None:
    x = torch.randn(1, 2, 6, dtype=torch.float64)
    w = torch.randn(6, 6, dtype=torch.float64)
    with pytest.raises(
        ValueError, match=r"embed_dim \(C=6\) must be divisible by num_heads, got 4"
    ):
        multi_head_stages(x, w, w, w, 4)


def test_unknown_backend() -> None:
    with pytest.raises(ValueError, match=r"backend must be one of .*explicit.*, got 'cuda'"):
        CausalSelfAttention(4, 2, 8, backend="cuda")


def _lesson_weights() -> list[torch.Tensor]:
    return [example.lesson_w_q(), example.lesson_w_k(), example.lesson_w_v()]


def test_pipeline_refuses_an_empty_sequence() -> None:
    x = torch.zeros(2, 0, 4, dtype=torch.float64)
    with pytest.raises(
        ValueError, match=r"x must have at least one token \(T >= 1\), got shape \[2, 0, 4\]"
    ):
        attention_stages(x, *_lesson_weights())


def test_pipeline_refuses_a_2d_input() -> None:
    with pytest.raises(ValueError, match=r"x must be \[B, T, C\], got shape \[2, 4\]"):
        attention_stages(example.lesson_x()[0], *_lesson_weights())


def test_pipeline_names_a_projection_that_is_not_a_matrix() -> None:
    w_q, w_k, w_v = _lesson_weights()
    with pytest.raises(
        ValueError, match=r"w_q must be a 2-D tensor \[C, d_head\], got \[4, 2, 1\]"
    ):
        attention_stages(example.lesson_x(), w_q.unsqueeze(-1), w_k, w_v)
    with pytest.raises(ValueError, match=r"w_v must be a 2-D tensor \[C, d_head\], got list"):
        attention_stages(example.lesson_x(), w_q, w_k, w_v.tolist())


def test_pipeline_names_the_wrong_number_of_columns() -> None:
    w_q, w_k, w_v = _lesson_weights()
    wide = torch.cat([w_k, w_k[:, :1]], dim=1)  # [4, 3]
    with pytest.raises(
        ValueError, match=r"w_k: expected 2 columns \(d_head from w_q\) but found 3"
    ):
        attention_stages(example.lesson_x(), w_q, wide, w_v)


def test_pipeline_names_a_dtype_that_differs_from_x() -> None:
    w_q, w_k, w_v = _lesson_weights()
    with pytest.raises(
        TypeError, match=r"w_k must have the dtype of x \(torch.float64\), got torch.float32"
    ):
        attention_stages(example.lesson_x(), w_q, w_k.float(), w_v)


def test_one_prompt_addressing_both_ways() -> None:
    assert example.prompt_names(2) == [p.name for p in example.PROMPTS]
    names = example.prompt_names(28)
    assert names[:3] == ["A", "B", "C"] and names[26:] == ["b26", "b27"]
    for b, name in enumerate(names):
        assert example.prompt_index(name, 28) == b
        assert example.prompt_index(name.lower(), 28) == example.prompt_index(str(b), 28) == b
    assert example.prompt_rows("all", 2) == [0, 1] and example.prompt_rows("b", 2) == [1]


def test_prompt_and_head_addressing_errors() -> None:
    with pytest.raises(InputError, match=r"^prompt: expected one of A, B, got 'C'$"):
        example.prompt_index("C", 2)
    with pytest.raises(InputError, match=r"^--prompt: expected one of A, B or all, got '2'$"):
        example.prompt_rows("2", 2)
    with pytest.raises(InputError, match=r"^head: expected 1\.\.2, got 0$"):
        example.head_index(0, 2)
    assert example.head_index(2, 2) == 1
