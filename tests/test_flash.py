"""The tiled (FlashAttention-style) kernel against the explicit pipeline and PyTorch's SDPA."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st

from attnlab.core.flash import BLOCK_SIZE, tiled_attention
from attnlab.core.modules import BACKENDS, CausalSelfAttention
from attnlab.core.pipeline import attend

OUT_TOL, GRAD_TOL = 1e-5, 1e-4


def _max_diff(a: torch.Tensor, b: torch.Tensor) -> float:
    return (a - b).abs().max().item()


def _outputs_and_grads(fn, q, k, v, grad_out):
    q, k, v = (t.detach().clone().requires_grad_() for t in (q, k, v))
    out = fn(q, k, v)
    return (out, *torch.autograd.grad(out, (q, k, v), grad_out))


def _sdpa(q, k, v):
    return F.scaled_dot_product_attention(q, k, v, is_causal=True)


@given(
    B=st.integers(1, 3),
    n_head=st.integers(1, 3),
    T=st.one_of(st.just(1), st.integers(2, 40)),
    d_head=st.sampled_from([1, 2, 5, 8, 16]),
    block_size=st.sampled_from([1, 3, 4, 8, 16, BLOCK_SIZE]),
    seed=st.integers(0, 2**16),
)
def test_tiled_matches_explicit_and_sdpa(B, n_head, T, d_head, block_size, seed) -> None:
    gen = torch.Generator().manual_seed(seed)
    q, k, v, grad_out = torch.randn(4, B, n_head, T, d_head, generator=gen).unbind(0)
    tiled = _outputs_and_grads(
        lambda q, k, v: tiled_attention(q, k, v, block_size), q, k, v, grad_out
    )
    explicit = _outputs_and_grads(lambda q, k, v: attend(q, k, v).output, q, k, v, grad_out)
    sdpa = _outputs_and_grads(_sdpa, q, k, v, grad_out)
    for name, reference in (("explicit", explicit), ("sdpa", sdpa)):
        for what, got, want in zip(("out", "dq", "dk", "dv"), tiled, reference, strict=True):
            tol = OUT_TOL if what == "out" else GRAD_TOL
            diff = _max_diff(got, want)
            assert diff <= tol, f"{what} vs {name}: max |diff| = {diff:.3g} > {tol:g}"


@pytest.mark.parametrize("T", [1, 5, 17, 300])
def test_tiled_keeps_leading_axes_and_one_head_shapes(T) -> None:
    q, k, v = torch.randn(3, 2, T, 4, dtype=torch.float64).unbind(0)  # [B, T, d_head]
    got = tiled_attention(q, k, v, block_size=8)
    diff = _max_diff(got, attend(q, k, v).output)
    assert got.shape == q.shape
    assert diff <= 1e-12, f"max |diff| = {diff:.3g}"


@pytest.mark.parametrize(("shape", "block_size"), [((1, 1, 1, 2), 4), ((2, 2, 7, 3), 3)])
def test_tiled_gradcheck_float64(shape, block_size) -> None:
    torch.manual_seed(0)
    q, k, v = (torch.randn(*shape, dtype=torch.float64, requires_grad=True) for _ in range(3))
    assert torch.autograd.gradcheck(lambda q, k, v: tiled_attention(q, k, v, block_size), (q, k, v))


def test_tiled_backend_of_causal_self_attention_matches_sdpa_backend() -> None:
    torch.manual_seed(1)
    attn = CausalSelfAttention(embed_dim=24, num_heads=3, context_length=64)
    x = torch.randn(2, 37, 24)
    grads = {}
    for backend in ("sdpa", "explicit", "tiled"):
        attn.backend = backend
        attn.zero_grad()
        out = attn(x)
        out.square().sum().backward()
        grads[backend] = (out.detach(), attn.qkv.weight.grad.clone())
    assert "tiled" in BACKENDS
    for backend in ("explicit", "tiled"):
        out_diff = _max_diff(grads[backend][0], grads["sdpa"][0])
        grad_diff = _max_diff(grads[backend][1], grads["sdpa"][1])
        assert out_diff <= OUT_TOL, f"{backend} output: max |diff| = {out_diff:.3g}"
        assert grad_diff <= GRAD_TOL, f"{backend} qkv grad: max |diff| = {grad_diff:.3g}"


def test_tiled_log_sum_exp_is_the_softmax_normaliser() -> None:
    from attnlab.core.flash import _forward

    q, k, v = torch.randn(3, 2, 21, 4, dtype=torch.float64).unbind(0)  # [N, T, d_head]
    _, lse = _forward(q, k, v, block=8)
    want = torch.logsumexp(attend(q, k, v).masked_scores, dim=-1, keepdim=True)
    diff = _max_diff(lse, want)
    assert diff <= 1e-12, f"max |diff| = {diff:.3g}"


def test_tiled_is_causal_a_later_token_never_changes_an_earlier_output() -> None:
    q, k, v = torch.randn(3, 1, 2, 20, 4).unbind(0)
    before = tiled_attention(q, k, v, block_size=8)
    k2, v2 = k.clone(), v.clone()
    k2[..., 12:, :] += 5.0
    v2[..., 12:, :] -= 3.0
    after = tiled_attention(q, k2, v2, block_size=8)
    assert torch.equal(before[..., :12, :], after[..., :12, :])
    assert not torch.allclose(before[..., 12:, :], after[..., 12:, :])


@pytest.mark.parametrize(
    ("args", "error", "match"),
    [
        (
            (torch.zeros(1, 3, 4), torch.zeros(1, 4, 4), torch.zeros(1, 3, 4)),
            ValueError,
            r"q, k and v must have the same shape \[\.\.\., T, d_head\], got q \[1, 3, 4\], "
            r"k \[1, 4, 4\], v \[1, 3, 4\]",
        ),
        (
            (torch.zeros(2, 3, dtype=torch.long),) * 3,
            ValueError,
            r"q must be a float tensor \[\.\.\., T, d_head\] with T >= 1, got torch.int64 "
            r"of shape \[2, 3\]",
        ),
        (
            (torch.zeros(2, 0, 3),) * 3,
            ValueError,
            r"q must be a float tensor .* got torch.float32 of shape \[2, 0, 3\]",
        ),
        (
            ([[1.0]], torch.zeros(1, 1), torch.zeros(1, 1)),
            TypeError,
            r"q must be a torch.Tensor \[\.\.\., T, d_head\], got list",
        ),
        (
            (torch.zeros(1, 2), torch.zeros(1, 2, dtype=torch.float64), torch.zeros(1, 2)),
            TypeError,
            r"q, k and v must share a dtype, got torch.float32, torch.float64, torch.float32",
        ),
    ],
)
def test_tiled_rejects_bad_inputs(args, error, match) -> None:
    with pytest.raises(error, match=match):
        tiled_attention(*args)


def test_tiled_rejects_bad_block_size() -> None:
    q = torch.zeros(1, 2, 2)
    with pytest.raises(ValueError, match="block_size must be a positive int, got 0"):
        tiled_attention(q, q, q, block_size=0)
