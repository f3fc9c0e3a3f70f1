"""How the tiled kernel sizes its head groups from the L2 cache, and that any grouping gives the
same attention as the explicit pipeline."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from attnlab.core import flash
from attnlab.core.flash import DEFAULT_L2_BYTES, _head_groups, _parse_size, l2_cache_bytes
from attnlab.core.pipeline import attend

KIB, MIB = 2**10, 2**20


@pytest.mark.parametrize(
    ("text", "size"), [("1024K", MIB), ("48K\n", 48 * KIB), ("2M", 2 * MIB), ("512", 512)]
)
def test_cache_sizes_are_read_as_sysfs_writes_them(text: str, size: int) -> None:
    assert _parse_size(text) == size


def test_l2_size_is_the_one_linux_reports() -> None:
    caches = sorted(Path("/sys/devices/system/cpu/cpu0/cache").glob("index*"))
    level2 = [c for c in caches if (c / "level").read_text().strip() == "2"]
    if not level2:
        pytest.skip("no L2 cache listed in sysfs on this machine")
    assert l2_cache_bytes() == _parse_size((level2[0] / "size").read_text())


def test_l2_size_falls_back_to_sysconf_then_the_default(monkeypatch) -> None:
    monkeypatch.setattr(flash, "Path", lambda _: Path("/nonexistent"))
    for sysconf, want in ((3 * MIB, 3 * MIB), (0, DEFAULT_L2_BYTES)):
        monkeypatch.setattr(flash.os, "sysconf", lambda name, v=sysconf: v)
        flash.l2_cache_bytes.cache_clear()
        try:
            assert flash.l2_cache_bytes() == want
        finally:
            flash.l2_cache_bytes.cache_clear()


@pytest.mark.parametrize(
    ("l2", "N", "parts", "sizes"),
    [
        (MIB, 8, 1, [2, 2, 2, 2]),  # one head: (256² + 4·256·64)·4 B = 512 KiB, two fit
        (4 * MIB, 8, 1, [8]),
        (4 * MIB, 8, 2, [4, 4]),  # at least one group per thread
        (256 * KIB, 3, 1, [1, 1, 1]),  # not even one head fits: one head per group
    ],
)
def test_head_groups_fill_the_l2_cache(monkeypatch, l2, N, parts, sizes) -> None:
    monkeypatch.setattr(flash, "l2_cache_bytes", lambda: l2)
    groups = _head_groups(N, block=256, d_head=64, itemsize=4, parts=parts)
    assert [g.stop - g.start for g in groups] == sizes
    assert groups[0].start == 0 and groups[-1].stop == N


@pytest.mark.parametrize("l2", [1, 64 * KIB, 64 * MIB], ids=["1-head", "some", "all"])
def test_every_grouping_gives_the_same_attention(monkeypatch, l2) -> None:
    monkeypatch.setattr(flash, "l2_cache_bytes", lambda: l2)
    gen = torch.Generator().manual_seed(3)
    q, k, v, grad_out = torch.randn(4, 2, 5, 70, 16, generator=gen).unbind(0)
    leaves = [t.clone().requires_grad_() for t in (q, k, v)]
    out = flash.tiled_attention(*leaves, block_size=32)
    grads = torch.autograd.grad(out, leaves, grad_out)
    ref_leaves = [t.clone().requires_grad_() for t in (q, k, v)]
    ref = attend(*ref_leaves).output
    ref_grads = torch.autograd.grad(ref, ref_leaves, grad_out)
    for what, got, want, tol in [("out", out, ref, 1e-5)] + [
        (name, g, r, 1e-4) for name, g, r in zip("qkv", grads, ref_grads, strict=True)
    ]:
        diff = (got - want).abs().max().item()
        assert diff <= tol, f"{what}: max |diff| = {diff:.3g} > {tol:g}"
