"""The explicit (dense) path refuses inputs whose score tensors cannot fit, naming the GiB."""

from __future__ import annotations

import re

import pytest
import torch

from attnlab.core import memory_guard
from attnlab.core.memory_guard import GIB, ScoresTooLargeError, check_scores_fit, score_bytes
from attnlab.core.modules import CausalSelfAttention
from attnlab.core.pipeline import attend
from attnlab.text.errors import InputError

T_HUGE = 200_000  # 4·2·T² float32 scores ≈ 1.2 TB: more than any machine running these tests


def _huge_message(n_head: int) -> str:
    need = 4 * n_head * T_HUGE * T_HUGE * 4 / GIB  # 4 tensors of B·n_head·T² float32 elements
    return (
        rf"the explicit attention path needs about {need:.2f} GiB for its 4 score tensors "
        rf"\[1, {n_head}, {T_HUGE}, {T_HUGE}\] \(torch\.float32\) but only \d+\.\d\d GiB of "
        rf"memory is available; use the 'tiled' or 'sdpa' backend, or a shorter sequence"
    )


def test_explicit_backend_refuses_scores_that_cannot_fit() -> None:
    attn = CausalSelfAttention(embed_dim=8, num_heads=2, context_length=T_HUGE, backend="explicit")
    x = torch.zeros(1, T_HUGE, 8)  # 6 MB of input, 1.2 TB of scores
    with pytest.raises(ScoresTooLargeError, match=_huge_message(2)) as info:
        attn(x)
    assert isinstance(info.value, InputError) and isinstance(info.value, MemoryError)


def test_return_weights_takes_the_dense_path_and_refuses_too() -> None:
    attn = CausalSelfAttention(embed_dim=4, num_heads=1, context_length=T_HUGE)  # sdpa backend
    with pytest.raises(ScoresTooLargeError, match=_huge_message(1)):
        attn(torch.zeros(1, T_HUGE, 4), return_weights=True)


def test_refusal_threshold_is_the_available_memory(monkeypatch) -> None:
    monkeypatch.setattr(memory_guard, "available_bytes", lambda: GIB)
    fits = torch.empty(1, 8192, 1)  # 4 · 8192² · 4 bytes = exactly 1 GiB
    assert score_bytes(fits) == GIB
    check_scores_fit(fits)
    expected = re.escape("needs about 1.00 GiB for its 4 score tensors [1, 8193, 8193]")
    with pytest.raises(ScoresTooLargeError, match=expected + r".* only 1\.00 GiB"):
        attend(*torch.empty(3, 1, 8193, 1).unbind(0))


def test_small_inputs_never_ask_the_operating_system(monkeypatch) -> None:
    def refuse() -> int:
        raise AssertionError("available_bytes() called for a small input")

    monkeypatch.setattr(memory_guard, "available_bytes", refuse)
    q = torch.randn(2, 4, 64, 8)
    assert attend(q, q, q).weights.shape == (2, 4, 64, 64)


def test_score_bytes_counts_four_tensors_of_b_heads_t_squared() -> None:
    q = torch.empty(2, 3, 10, 4, dtype=torch.float64)
    assert score_bytes(q) == 4 * 2 * 3 * 10 * 10 * 8
    assert score_bytes(q, torch.empty(2, 3, 7, 4)) == 4 * 2 * 3 * 10 * 7 * 8
