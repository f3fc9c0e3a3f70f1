"""``attnlab bench`` on tiny shapes: the CSV's columns, the ratios, the fits, the measurements."""

from __future__ import annotations

import csv

import pytest
import torch
from typer.testing import CliRunner

from attnlab.bench import CSV_COLUMNS, FIT_COLUMNS, TINY, count_steps, read_rows
from attnlab.bench.measure import attention_flops, peak_allocated_bytes
from attnlab.bench.results import MemoryRow, loglog_slope
from attnlab.bench.rss import MEMORY_CASES
from attnlab.bench.workloads import IMPLS
from attnlab.cli.main import app

pytestmark = pytest.mark.process

MIB = 2**20


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench") / "bench.csv"
    result = CliRunner().invoke(app, ["--lang", "en", "bench", "--tiny", "--csv", str(out)])
    return result, out


def test_bench_writes_every_documented_column_and_row(tiny_run) -> None:
    result, out = tiny_run
    assert result.exit_code == 0, result.output
    with open(out, newline="") as f:
        header = next(csv.reader(f))
    assert tuple(header) == CSV_COLUMNS
    rows = read_rows(out)
    assert len(rows) + len(MEMORY_CASES) * TINY.memory_repeats == count_steps(TINY)
    assert {r.impl for r in rows} == {impl.key for impl in IMPLS}
    assert {r.section for r in rows} == {"bar", "standard", "sweep"}
    ok = [r for r in rows if r.status == "ok"]
    assert ok and all(r.median_ms and r.peak_mib is not None and r.repeats >= 3 for r in ok)
    skipped = [r for r in rows if r.status == "skipped"]
    assert skipped and all("layer rows stop at T=8" in r.note for r in skipped)


def test_bench_ratios_are_times_over_the_sdpa_row_of_the_same_level(tiny_run) -> None:
    _, out = tiny_run
    rows = read_rows(out)
    references = {impl.level: impl.key for impl in IMPLS if impl.reference}
    checked = 0
    for row in rows:
        if row.status != "ok":
            continue
        ref = next(
            r
            for r in rows
            if (r.section, r.T, r.mode, r.impl)
            == (row.section, row.T, row.mode, references[row.level])
        )
        assert row.ratio_to_sdpa == pytest.approx(row.median_ms / ref.median_ms, rel=1e-4)
        checked += 1
    assert checked >= 20


def test_bench_fits_and_tables(tiny_run) -> None:
    result, out = tiny_run
    with open(out.with_name("bench-fits.csv"), newline="") as f:
        fits = list(csv.DictReader(f))
    assert tuple(fits[0]) == FIT_COLUMNS
    kernel = {(r["impl"], r["mode"]): r for r in fits if r["level"] == "kernel"}
    assert len(kernel) == 6 and all(float(r["memory_exponent"]) > 0 for r in kernel.values())
    for title in ("standard shape B=1, T=16, C=16, n_head=2", "growth exponents in T", "bars"):
        assert title in result.output
    assert "torch.profiler(profile_memory=True)" in result.output


def test_bench_writes_the_rss_table_and_its_csv(tiny_run) -> None:
    result, out = tiny_run
    with open(out.with_name("bench-memory.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    assert tuple(rows[0]) == tuple(MemoryRow.__dataclass_fields__)
    assert [r["case"] for r in rows] == [c.key for c in MEMORY_CASES]
    assert all(r["status"] == "ok" and float(r["rss_mib"]) >= 0 for r in rows), rows
    assert all(r["repeats"] == str(TINY.memory_repeats) for r in rows)
    assert "RSS growth, no_grad forward, B=1, T=16, C=16, n_head=2" in result.output
    assert "bench-memory.csv" in result.output


def test_bench_refuses_a_csv_path_in_a_missing_directory(tmp_path) -> None:
    target = tmp_path / "nowhere" / "b.csv"
    result = CliRunner().invoke(app, ["bench", "--tiny", "--csv", str(target)])
    assert result.exit_code == 2
    assert f"directory {target.parent} does not exist" in result.output
    assert "Traceback" not in result.output and not target.parent.exists()


def test_peak_memory_sees_allocations_and_frees() -> None:
    def two_in_turn() -> None:
        a = torch.ones(MIB)  # 4 MiB
        del a
        b = torch.ones(MIB)  # reuses the budget: the peak stays near 4 MiB, not 8
        del b

    def two_at_once() -> torch.Tensor:
        a, b = torch.ones(MIB), torch.ones(MIB)
        return a + b  # three 4 MiB tensors alive at once

    one, _ = peak_allocated_bytes(two_in_turn)
    three, _ = peak_allocated_bytes(two_at_once)
    assert 4 * MIB <= one < 5 * MIB, one
    assert 12 * MIB <= three < 13 * MIB, three


def test_loglog_slope_and_flop_count() -> None:
    xs = [256.0, 512.0, 1024.0, 4096.0]
    assert loglog_slope(xs, [3 * x**2 for x in xs]) == pytest.approx(2.0)
    assert loglog_slope(xs, [5 * x for x in xs]) == pytest.approx(1.0)
    assert loglog_slope([1.0], [1.0]) is None
    # T=2, one head, d_head=1: visible pairs (0,0), (1,0), (1,1); 2 products × 2 FLOPs each.
    assert attention_flops(B=1, T=2, n_head=1, d_head=1) == 3 * 2 * 2
