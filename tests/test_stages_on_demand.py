"""Score stages are kept only when asked for: the explicit backend's stages.

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
from attnlab.pipeline import SCORE_STAGES, attend, attention_output

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
