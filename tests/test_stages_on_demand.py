"""Score stages are kept only when asked for: the heads' weights, the explicit backend's stages.

Values are checked bit for bit against :func:`attend`, which keeps every stage (the path all
of them took before), and against SDPA; memory is checked through the allocator's own events
(``torch.profiler``), which do not depend on the machine's load.
"""

from __future__ import annotations

import itertools

import pytest
import torch
import torch.nn.functional as F

from attnlab.bench.measure import peak_allocated_bytes
from attnlab.core import modules
from attnlab.core.convert import fused_from_mha
from attnlab.core.modules import AttentionHead, CausalSelfAttention, MultiHeadAttention
from attnlab.core.pipeline import SCORE_STAGES, attend, attention_output, causal_mask

SUBSETS = [s for n in range(len(SCORE_STAGES) + 1) for s in itertools.combinations(SCORE_STAGES, n)]


def _max_diff(a: torch.Tensor, b: torch.Tensor) -> float:
    return (a - b).abs().max().item()


@pytest.mark.parametrize("asked", SUBSETS, ids=lambda s: "+".join(s) or "none")
def test_attention_output_returns_exactly_the_stages_asked_for(asked) -> None:
    q, k, v = torch.randn(3, 2, 3, 7, 4, generator=torch.Generator().manual_seed(0)).unbind(0)
    every = attend(q, k, v)
    out, kept = attention_output(q, k, v, return_stages=asked)
    assert set(kept) == set(asked)
    assert torch.equal(out, every.output), f"max |diff| = {_max_diff(out, every.output):.3g}"
    for name in asked:
        assert torch.equal(kept[name], getattr(every, name)), name


def test_attention_output_refuses_an_unknown_stage() -> None:
    q = torch.zeros(1, 2, 3)
    with pytest.raises(
        ValueError,
        match=r"return_stages must name stages from raw_scores, scaled_scores, causal_mask, "
        r"masked_scores, weights, got \['scores', 'output'\]",
    ):
        attention_output(q, q, q, return_stages=("weights", "scores", "output"))


def test_attention_output_matches_sdpa() -> None:
    q, k, v = torch.randn(3, 2, 3, 9, 5, dtype=torch.float64).unbind(0)
    out, _ = attention_output(q, k, v)
    want = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    assert _max_diff(out, want) <= 1e-12, f"max |diff| = {_max_diff(out, want):.3g}"


def _peak(fn) -> int:
    with torch.no_grad():
        return peak_allocated_bytes(fn)[0]


def test_unkept_score_stages_are_freed_as_soon_as_the_next_exists() -> None:
    q = torch.randn(1, 4, 256, 8)
    score = 4 * 256 * 256 * 4  # one [1, 4, 256, 256] float32 stage: 1 MiB
    small = 256 * 1024  # the [T, T] mask, its inverse, the output
    assert _peak(lambda: attend(q, q, q)) >= 4 * score  # every stage kept: the test can fail
    assert _peak(lambda: attention_output(q, q, q)) <= 2 * score + small
    for asked in (("weights",), ("raw_scores",), ("raw_scores", "weights")):
        peak = _peak(lambda asked=asked: attention_output(q, q, q, return_stages=asked))
        assert peak <= (len(asked) + 2) * score + small, (asked, peak / score)


def _mha(C: int = 16, n_head: int = 4, T: int = 256) -> MultiHeadAttention:
    torch.manual_seed(0)
    return MultiHeadAttention(C, n_head, T)


def _spy(monkeypatch) -> list[tuple[str, ...]]:
    """The ``return_stages`` of every call the modules make to ``attention_output``."""
    calls: list[tuple[str, ...]] = []

    def spy(*args, return_stages=(), **kwargs):
        calls.append(tuple(return_stages))
        return attention_output(*args, return_stages=return_stages, **kwargs)

    monkeypatch.setattr(modules, "attention_output", spy)
    return calls


def test_heads_are_asked_for_weights_only_when_the_caller_asks(monkeypatch) -> None:
    mha, x = _mha(), torch.randn(2, 5, 16)
    calls = _spy(monkeypatch)
    out = mha(x)
    assert isinstance(out, torch.Tensor) and out.shape == (2, 5, 16)
    assert calls == [()] * 4
    calls.clear()
    out, weights = mha(x, return_weights=True)
    assert calls == [("weights",)] * 4 and weights.shape == (2, 4, 5, 5)
    calls.clear()
    fused = CausalSelfAttention(16, 4, 8, backend="explicit")
    fused(x)
    fused(x, return_weights=True)
    assert calls == [(), ("weights",)]


def test_weights_when_asked_equal_every_stage_path_bit_for_bit() -> None:
    mha, x = _mha(), torch.randn(2, 6, 16)
    with torch.no_grad():
        out, weights = mha(x, return_weights=True)
        alone = mha(x)
        mask = causal_mask(6)
        stages = [attend(h.query(x), h.key(x), h.value(x), mask) for h in mha.heads]
        want_out = mha.output_projection(torch.cat([s.output for s in stages], dim=-1))
        want_weights = torch.stack([s.weights for s in stages], dim=1)  # [B, n_head, T, T]
        assert torch.equal(out, want_out) and torch.equal(alone, want_out)
        assert torch.equal(weights, want_weights)
        head = mha.heads[0]
        assert isinstance(head, AttentionHead)
        head_out, head_weights = head(x, return_weights=True)
        assert torch.equal(head(x), head_out) and torch.equal(head_weights, stages[0].weights)
        fused = fused_from_mha(mha)
        fused_out, fused_weights = fused(x, return_weights=True)
        every = fused.stages(x)
        assert torch.equal(fused_out, every.output) and torch.equal(fused_weights, every.weights)
        fused.backend = "explicit"
        assert torch.equal(fused(x), every.output)


def test_multi_head_inference_keeps_no_heads_weights() -> None:
    mha, x = _mha(), torch.randn(1, 256, 16)
    score = 256 * 256 * 4  # one head's [1, 256, 256] float32 stage: 256 KiB
    heads = _peak(lambda: torch.cat([h(x) for h in mha.heads], dim=-1))
    with_weights = _peak(lambda: mha(x, return_weights=True))
    assert with_weights >= 4 * score  # the n_head weights kept: the test can fail
    assert _peak(lambda: mha(x)) <= max(heads, 2 * score) + 64 * 1024
