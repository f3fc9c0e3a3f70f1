"""Properties of causal attention over random shapes (hypothesis)."""

from __future__ import annotations

import torch
from hypothesis import given
from hypothesis import strategies as st

from attnlab.core.modules import AttentionHead, CausalSelfAttention, MultiHeadAttention
from attnlab.core.pipeline import attention_stages

shapes = st.tuples(
    st.integers(1, 4),  # B
    st.integers(1, 12),  # T
    st.sampled_from([(4, 1), (4, 2), (6, 3), (8, 2), (8, 4)]),  # (C, n_head)
    st.integers(0, 2**16),  # seed
)


def _stages(B: int, T: int, C: int, seed: int):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(B, T, C, generator=g, dtype=torch.float64)
    w = [torch.randn(C, 3, generator=g, dtype=torch.float64) for _ in range(3)]
    return attention_stages(x, *w), w


@given(shapes)
def test_rows_sum_to_one_and_future_is_exactly_zero(shape) -> None:
    B, T, (C, _), seed = shape
    s, _ = _stages(B, T, C, seed)
    sums = s.weights.sum(-1)
    assert torch.allclose(sums, torch.ones_like(sums), atol=1e-12), f"row sums {sums}"
    future = ~s.causal_mask
    assert (s.weights[:, future] == 0).all(), "a future position received weight"
    assert torch.isneginf(s.masked_scores[:, future]).all()


def _modules(C: int, n_head: int, T: int) -> list[torch.nn.Module]:
    return [
        AttentionHead(C, C // n_head, T).double(),
        MultiHeadAttention(C, n_head, T).double(),
        CausalSelfAttention(C, n_head, T, backend="explicit").double(),
        CausalSelfAttention(C, n_head, T, backend="sdpa").double(),
    ]


@given(shapes, st.data())
def test_changing_later_tokens_leaves_earlier_outputs_bit_identical(shape, data) -> None:
    B, T, (C, n_head), seed = shape
    torch.manual_seed(seed)
    t = data.draw(st.integers(0, T - 1), label="t")
    x = torch.randn(B, T, C, dtype=torch.float64)
    changed = x.clone()
    changed[:, t + 1 :] = torch.randn_like(changed[:, t + 1 :]) * 5
    for module in _modules(C, n_head, T):
        with torch.no_grad():
            before, after = module(x), module(changed)
        assert torch.equal(before[:, : t + 1], after[:, : t + 1]), (
            f"{type(module).__name__}: outputs at positions <= {t} changed; max |diff| = "
            f"{(before[:, : t + 1] - after[:, : t + 1]).abs().max():.3g}"
        )


@given(shapes)
def test_batch_rows_never_mix(shape) -> None:
    B, T, (C, n_head), seed = shape
    torch.manual_seed(seed)
    x = torch.randn(B, T, C, dtype=torch.float64)
    order = torch.randperm(B)
    for module in _modules(C, n_head, T):
        with torch.no_grad():
            full = module(x)
            shuffled = module(x[order])
            alone = torch.cat([module(x[b : b + 1]) for b in range(B)])
        assert torch.allclose(full[order], shuffled, atol=1e-12, rtol=0)
        assert torch.allclose(full, alone, atol=1e-12, rtol=0), (
            f"{type(module).__name__}: max |diff| = {(full - alone).abs().max():.3g}"
        )
