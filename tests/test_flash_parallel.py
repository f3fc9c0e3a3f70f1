"""The tiled kernel's parallel form: work items on single-threaded worker threads, still exact."""

from __future__ import annotations

import threading

import pytest
import torch
import torch.nn.functional as F

from attnlab.core import flash
from attnlab.core.flash import tiled_attention
from attnlab.core.pipeline import attend

OUT_TOL, GRAD_TOL = 1e-5, 1e-4


@pytest.fixture
def three_threads(monkeypatch):
    """Three torch threads (three workers, even on a 1-core machine). Yields one list per
    parallel call: for each work item, the thread that ran it and that thread's torch threads."""
    calls: list[list[tuple[str, int]]] = []
    original = flash._in_parallel

    def recording(work, items):
        ran: list[tuple[str, int]] = []
        calls.append(ran)

        def spy(item):
            ran.append((threading.current_thread().name, torch.get_num_threads()))
            work(item)

        return original(spy, items)

    monkeypatch.setattr(flash, "_in_parallel", recording)
    before = torch.get_num_threads()
    torch.set_num_threads(3)
    yield calls
    torch.set_num_threads(before)


def _on_workers(ran: list[tuple[str, int]]) -> bool:
    """Every item ran on a worker thread with one torch thread (which worker took which item
    depends on scheduling: on a loaded machine one may take them all)."""
    return bool(ran) and all(n.startswith("attnlab-tiles") and t == 1 for n, t in ran)


def _run(fn, q, k, v, grad_out):
    q, k, v = (t.detach().clone().requires_grad_() for t in (q, k, v))
    out = fn(q, k, v)
    return (out, *torch.autograd.grad(out, (q, k, v), grad_out))


def _max_diff(a: torch.Tensor, b: torch.Tensor) -> float:
    return (a - b).abs().max().item()


@pytest.mark.parametrize(
    ("B", "n_head", "T", "d_head", "block_size"),
    [
        (1, 1, 37, 8, 8),  # one head, T not a multiple of the tile
        (2, 5, 29, 4, 8),  # batch > 1, odd head count
        (1, 16, 20, 3, 4),  # many heads
        (3, 2, 9, 2, 16),  # one query tile: head groups are the only work items
        (2, 3, 1, 5, 4),  # a single token
    ],
)
def test_parallel_tiled_equals_sdpa_and_explicit(three_threads, B, n_head, T, d_head, block_size):
    gen = torch.Generator().manual_seed(B * 1000 + n_head * 100 + T)
    q, k, v, grad_out = torch.randn(4, B, n_head, T, d_head, generator=gen).unbind(0)
    tiled = _run(lambda q, k, v: tiled_attention(q, k, v, block_size), q, k, v, grad_out)
    sdpa = _run(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True), q, k, v,
                grad_out)  # fmt: skip
    explicit = _run(lambda q, k, v: attend(q, k, v).output, q, k, v, grad_out)
    for name, reference in (("sdpa", sdpa), ("explicit", explicit)):
        for what, got, want in zip(("out", "dq", "dk", "dv"), tiled, reference, strict=True):
            tol = OUT_TOL if what == "out" else GRAD_TOL
            diff = _max_diff(got, want)
            assert diff <= tol, f"{what} vs {name}: max |diff| = {diff:.3g} > {tol:g}"
    forward, backward = three_threads
    if B * n_head > 1 or T > block_size:
        assert _on_workers(forward), f"forward items ran on {forward}"
    if B * n_head > 1:
        assert _on_workers(backward), f"backward items ran on {backward}"


def test_parallel_backward_is_deterministic(three_threads) -> None:
    gen = torch.Generator().manual_seed(3)
    q, k, v, grad_out = torch.randn(4, 2, 4, 50, 8, generator=gen).unbind(0)
    first = _run(lambda q, k, v: tiled_attention(q, k, v, 8), q, k, v, grad_out)
    again = _run(lambda q, k, v: tiled_attention(q, k, v, 8), q, k, v, grad_out)
    for what, a, b in zip(("out", "dq", "dk", "dv"), first, again, strict=True):
        assert torch.equal(a, b), f"{what} differs between runs: max |diff| = {_max_diff(a, b)}"
    assert all(_on_workers(ran) for ran in three_threads), three_threads


def test_thread_settings_are_restored_for_the_caller_and_new_threads(three_threads) -> None:
    q = torch.randn(1, 4, 40, 8)
    tiled_attention(q, q, q, block_size=8)
    seen: list[int] = []
    fresh = threading.Thread(target=lambda: seen.append(torch.get_num_threads()))
    fresh.start()
    fresh.join()
    # Workers call set_num_threads(1), which also sets the default a new thread starts from.
    assert torch.get_num_threads() == 3 and seen == [3]
    assert _on_workers(three_threads[0]), three_threads


def test_parallel_forward_runs_under_inference_mode(three_threads) -> None:
    q, k, v = torch.randn(3, 2, 3, 30, 4).unbind(0)
    with torch.inference_mode():
        out = tiled_attention(q, k, v, block_size=8)
    diff = _max_diff(out, attend(q, k, v).output)
    assert diff <= OUT_TOL, f"max |diff| = {diff:.3g}"
    assert _on_workers(three_threads[0]), three_threads


def test_an_error_in_one_work_item_reaches_the_caller(three_threads, monkeypatch) -> None:
    original = flash._forward_row_tile

    def fail_on_row_8(q_tile, k, v, row0, bias):
        if row0 == 8:
            raise RuntimeError("tile at row 8 failed")
        return original(q_tile, k, v, row0, bias)

    monkeypatch.setattr(flash, "_forward_row_tile", fail_on_row_8)
    q = torch.randn(1, 2, 40, 4)
    with pytest.raises(RuntimeError, match="tile at row 8 failed"):
        tiled_attention(q, q, q, block_size=8)
    assert torch.get_num_threads() == 3
    assert not [t for t in threading.enumerate() if t.name.startswith("attnlab-tiles")]
