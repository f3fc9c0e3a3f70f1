"""The three modules against references attnlab did not write: SDPA and nn.MultiheadAttention."""

from __future__ import annotations

import itertools

import pytest
import torch
import torch.nn.functional as F

from attnlab.core import example
from attnlab.core.convert import (
    fused_from_mha,
    head_from_formula,
    mha_from_formula,
    mha_from_fused,
    to_torch_mha,
    torch_mha_forward,
)
from attnlab.core.modules import AttentionHead, CausalSelfAttention, MultiHeadAttention
from attnlab.core.pipeline import attention_stages, lesson_stages, multi_head_stages

TOL = {torch.float32: 1e-5, torch.float64: 1e-12}
# (B, T, C, n_head, seed)
GRID = [
    (b, t, c, h, seed)
    for (b, t), (c, h), seed in itertools.product(
        [(1, 1), (2, 5), (3, 16)], [(4, 1), (4, 2), (12, 3), (16, 4)], [0, 1]
    )
]


def _sdpa_multi_head(x: torch.Tensor, mha: MultiHeadAttention) -> torch.Tensor:
    """Reference: per-head projections, then PyTorch's own fused attention."""
    outs = []
    for head in mha.heads:
        q, k, v = head.query(x), head.key(x), head.value(x)
        outs.append(F.scaled_dot_product_attention(q, k, v, is_causal=True))
    return mha.output_projection(torch.cat(outs, dim=-1))


def _check(got: torch.Tensor, want: torch.Tensor, dtype: torch.dtype) -> None:
    diff = (got - want).abs().max().item()
    assert diff <= TOL[dtype], f"max |diff| = {diff:.3g} > {TOL[dtype]:g}"


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["f32", "f64"])
@pytest.mark.parametrize(("B", "T", "C", "n_head", "seed"), GRID)
def test_modules_match_sdpa_and_torch_mha(B, T, C, n_head, seed, dtype) -> None:
    torch.manual_seed(seed)
    mha = MultiHeadAttention(C, n_head, context_length=16).to(dtype)
    x = torch.randn(B, T, C, dtype=dtype)
    with torch.no_grad():
        reference = _sdpa_multi_head(x, mha)
        _check(mha(x), reference, dtype)
        fused = fused_from_mha(mha)
        _check(fused(x), reference, dtype)
        fused.backend = "explicit"
        _check(fused(x), reference, dtype)
        _check(mha_from_fused(fused)(x), reference, dtype)
        torch_out, _ = torch_mha_forward(to_torch_mha(mha), x)
        _check(torch_out, reference, dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["f32", "f64"])
@pytest.mark.parametrize(("B", "T", "C", "seed"), [(1, 1, 4, 0), (2, 7, 6, 1), (3, 12, 8, 2)])
def test_head_matches_sdpa(B, T, C, seed, dtype) -> None:
    torch.manual_seed(seed)
    head = AttentionHead(C, 3, context_length=12).to(dtype)
    x = torch.randn(B, T, C, dtype=dtype)
    with torch.no_grad():
        want = F.scaled_dot_product_attention(
            head.query(x), head.key(x), head.value(x), is_causal=True
        )
        out, weights = head(x, return_weights=True)
        _check(out, want, dtype)
        sdpa_weights = torch.softmax(
            (head.query(x) @ head.key(x).mT / 3**0.5).masked_fill(
                torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf")
            ),
            -1,
        )
        _check(weights, sdpa_weights, dtype)


def test_weights_match_torch_mha_weights() -> None:
    torch.manual_seed(3)
    fused = CausalSelfAttention(8, 2, 10).double()
    x = torch.randn(2, 6, 8, dtype=torch.float64)
    with torch.no_grad():
        _, ours = fused(x, return_weights=True)
        _, theirs = torch_mha_forward(to_torch_mha(fused), x, need_weights=True)
    assert theirs is not None
    _check(ours, theirs, torch.float64)


def test_lesson_formula_weights_in_modules_reproduce_pipeline() -> None:
    st = lesson_stages()
    head = head_from_formula(example.lesson_w_q(), example.lesson_w_k(), example.lesson_w_v(), 2)
    with torch.no_grad():
        out, w = head(st.x, return_weights=True)
    assert torch.equal(w, st.weights) and torch.equal(out, st.output)


def test_multi_head_formula_matches_modules() -> None:
    torch.manual_seed(5)
    C, n = 8, 2
    w_q, w_k, w_v, w_o = (torch.randn(C, C, dtype=torch.float64) for _ in range(4))
    x = torch.randn(2, 5, C, dtype=torch.float64)
    stages = multi_head_stages(x, w_q, w_k, w_v, n, w_o)
    with torch.no_grad():
        mha = mha_from_formula(w_q, w_k, w_v, w_o, n, context_length=5)
        out, weights = mha(x, return_weights=True)
    _check(out, stages.output, torch.float64)
    _check(weights, stages.weights, torch.float64)
    single = attention_stages(x, w_q[:, :4], w_k[:, :4], w_v[:, :4])
    _check(single.output, stages.head_outputs[:, 0], torch.float64)


@pytest.mark.parametrize("kind", ["head", "mha", "fused-explicit", "fused-sdpa"])
def test_gradcheck_float64(kind: str) -> None:
    torch.manual_seed(0)
    module: torch.nn.Module
    if kind == "head":
        module = AttentionHead(4, 2, 4)
    elif kind == "mha":
        module = MultiHeadAttention(4, 2, 4)
    else:
        module = CausalSelfAttention(4, 2, 4, backend=kind.split("-")[1])
    module = module.double()
    x = torch.randn(2, 3, 4, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda inp: module(inp), (x,))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["f32", "f64"])
@pytest.mark.parametrize(("B", "T", "C", "n_head"), [(1, 1, 4, 1), (2, 7, 8, 2), (2, 130, 48, 4)])
def test_torch_mha_forward_with_the_causal_hint_equals_the_mask_alone(B, T, C, n_head, dtype):
    torch.manual_seed(7)
    torch_mha = to_torch_mha(CausalSelfAttention(C, n_head, T)).to(dtype)
    x = torch.randn(B, T, C, dtype=dtype)
    mask = torch.ones(T, T, dtype=torch.bool).triu(1)  # nn.MultiheadAttention's True = blocked
    for need_weights in (False, True):
        xs = [x.clone().requires_grad_(), x.clone().requires_grad_()]
        ours, our_w = torch_mha_forward(torch_mha, xs[0], need_weights)
        theirs, their_w = torch_mha(
            xs[1], xs[1], xs[1], attn_mask=mask, need_weights=need_weights,
            average_attn_weights=False,
        )  # fmt: skip
        pairs = zip((ours, theirs), xs, strict=True)
        grads = [torch.autograd.grad(out.square().sum(), xi)[0] for out, xi in pairs]
        assert torch.equal(ours, theirs), f"max |diff| = {(ours - theirs).abs().max():.3g}"
        assert torch.equal(*grads), f"max |diff| = {(grads[0] - grads[1]).abs().max():.3g}"
        assert (our_w is None) == (their_w is None) == (not need_weights)
        if our_w is not None and their_w is not None:
            assert torch.equal(our_w, their_w)


def test_torch_mha_forward_hands_sdpa_the_causal_hint_not_the_mask(monkeypatch) -> None:
    calls = []
    sdpa = F.scaled_dot_product_attention

    def spy(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, **kwargs):
        calls.append((attn_mask, is_causal))
        return sdpa(q, k, v, attn_mask, dropout_p, is_causal, **kwargs)

    monkeypatch.setattr(F, "scaled_dot_product_attention", spy)
    torch_mha = to_torch_mha(CausalSelfAttention(8, 2, 6))
    torch_mha_forward(torch_mha, torch.randn(2, 6, 8))
    assert calls == [(None, True)]
