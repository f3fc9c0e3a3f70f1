"""Every error a learner can trigger names what was expected and what was found."""

from __future__ import annotations

import pytest
import torch

from attnlab import example
from attnlab.modules import AttentionHead, CausalSelfAttention, MultiHeadAttention
from attnlab.pipeline import attention_stages, multi_head_stages


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
