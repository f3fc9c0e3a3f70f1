"""``attnlab bench``'s RSS table: each case in a fresh process, the ratios and the bars."""

from __future__ import annotations

import sys

import pytest
import torch

from attnlab.bench import FULL, TINY, BenchResult
from attnlab.bench.bars import EXPLICIT_RSS_LIMIT_MIB, MHA_RSS_LIMIT, check_bars
from attnlab.bench.results import MemoryRow
from attnlab.bench.rss import MEMORY_CASES, _forward, measure_case, ratio_to_reference
from attnlab.bench.workloads import Shape

pytestmark = pytest.mark.process

MIB = 2**20


def test_rss_growth_of_a_fresh_process_sees_the_explicit_scores() -> None:
    shape = Shape(1, 1024, 64, 4)  # one [1, 4, 1024, 1024] float32 score tensor is 16 MiB
    grown, method = measure_case("csa_explicit", shape, threads=1)
    assert grown >= 16 * MIB, f"RSS grew {grown / MIB:.1f} MiB, less than one score tensor"
    if sys.platform == "linux":
        assert method == "VmHWM reset"


@pytest.mark.skipif(sys.platform != "linux", reason="MALLOC_MMAP_THRESHOLD_ is glibc's")
def test_rss_growth_is_the_same_in_every_fresh_process() -> None:
    # 4 MiB score tensors, below glibc's default 32 MiB threshold: with that default, two
    # threads' heaps gave 12 MiB in some processes and 41 MiB in others.
    shape = Shape(1, 1024, 64, 4)
    grown = [measure_case("mha", shape, threads=2)[0] / MIB for _ in range(3)]
    assert max(grown) - min(grown) <= 1, f"MiB in three processes: {grown}"


@pytest.mark.parametrize("case", [c.key for c in MEMORY_CASES])
def test_every_case_computes_the_same_layer(case: str) -> None:
    shape = Shape(2, 9, 12, 3)
    x = torch.randn(shape.B, shape.T, shape.C)
    with torch.no_grad():
        want = _forward("csa_sdpa", shape)(x)
        got = _forward(case, shape)(x)
    diff = (got - want).abs().max().item()
    assert diff <= 1e-5, f"{case}: max |diff| = {diff:.3g}"


def _result(shape: Shape, mib: dict[str, float]) -> BenchResult:
    config = FULL if shape == FULL.standard else TINY
    memory = [
        MemoryRow(case, case, shape.B, shape.T, shape.C, shape.n_head, rss_mib=value, repeats=1)
        for case, value in mib.items()
    ]
    return BenchResult(config, [], [], (1.0, 1.0), 1, 0.0, "", (0.0, 0.0), memory=memory)


def _rss_bars(result: BenchResult) -> list[tuple[str, float | None, str, bool | None]]:
    return [
        (b.what["en"], b.value, b.limit, b.ok) for b in check_bars(result) if "RSS" in b.what["en"]
    ]


def test_rss_bars_divide_by_the_heads_one_at_a_time_and_judge_explicit_at_full_shape() -> None:
    full = _result(FULL.standard, {"mha": 300.0, "mha_heads": 200.0, "csa_explicit": 1200.0})
    (mha, explicit) = _rss_bars(full)
    assert mha[1] == pytest.approx(1.5) and mha[2] == f"≤ {MHA_RSS_LIMIT:g}" and mha[3] is True
    assert explicit[1] == 1200.0 and explicit[2] == f"≤ {EXPLICIT_RSS_LIMIT_MIB:g}"
    assert explicit[3] is False
    small = _result(TINY.standard, {"mha": 5.0, "mha_heads": 2.0, "csa_explicit": 3.0})
    (mha, explicit) = _rss_bars(small)
    assert mha[1] == pytest.approx(2.5) and mha[3] is False
    assert explicit[1] == 3.0 and explicit[2] == "—" and explicit[3] is None  # reported only


def test_ratio_to_reference_needs_both_rows() -> None:
    rows = [MemoryRow("mha", "", 1, 1, 1, 1, rss_mib=4.0)]
    assert ratio_to_reference(rows, "mha") is None
    rows.append(MemoryRow("mha_heads", "", 1, 1, 1, 1, rss_mib=0.0))
    assert ratio_to_reference(rows, "mha") is None  # nothing to divide by
    rows[1].rss_mib = 2.0
    assert ratio_to_reference(rows, "mha") == 2.0
