"""Plan and run a benchmark: which implementation at which shape, what to skip and why.

Within one shape and mode every implementation is first run once under the memory profiler (its
warm-up), then the timed calls go round-robin over the implementations, so a burst of load from
another process on this shared machine slows all of them alike rather than one of them. With
``busy=True`` the whole run happens next to one competing busy process (:mod:`.busy`). The RSS
table (:mod:`.rss`) comes last, at the standard shape, one fresh process per measurement.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import torch

from attnlab.bench.busy import Competitor, competing_process, limit_for, wait_until_spinning
from attnlab.bench.measure import (
    attention_flops,
    machine_line,
    matmul_gflops,
    peak_allocated_bytes,
    projection_flops,
    time_call,
)
from attnlab.bench.results import BenchRow, FitRow, MemoryRow, fit_exponents
from attnlab.bench.rss import MEMORY_CASES, memory_rows
from attnlab.bench.workloads import (
    FORWARD,
    FORWARD_BACKWARD,
    IMPLS,
    KERNEL,
    LAYER,
    Impl,
    Shape,
    build,
)
from attnlab.core.memory_guard import ScoresTooLargeError, available_bytes

MIB, GIB = 2**20, 2**30

MEMORY_METHOD = (
    "torch.profiler(profile_memory=True): highest running sum of PyTorch CPU allocations "
    "minus frees during one call (inputs and weights excluded)"
)


@dataclass(frozen=True)
class BenchConfig:
    """What to measure and the limits that keep a run short. See :data:`FULL`, :data:`QUICK`."""

    name: str
    standard: Shape
    bar: Shape  # CausalSelfAttention(C, n_head, T) of the tiled-versus-SDPA bars, measured first
    sweep_Ts: tuple[int, ...]
    sweep_B: int = 1
    sweep_heads: int = 8
    sweep_d_head: int = 64
    layer_max_T: int = 4096  # sweep layer rows stop here; kernel rows go on
    max_run_seconds: float = 15.0  # skip a call predicted to take longer
    repeat_seconds: float = 3.0  # time spent on the timed calls of one measurement
    min_repeats: int = 5  # a median of 5 survives two calls stalled by other processes
    max_repeats: int = 15  # cheap calls get many timed runs: the median then shrugs off bursts
    memory_fraction: float = 0.4  # skip a call predicted to need more of the available memory
    standard_seconds: float = 180.0  # start no standard-shape measurement after this long
    sweep_seconds: float = 480.0  # the same for the sweep (clock restarts with the sweep)
    fit_range: tuple[int, int] = (1024, 16384)
    matmul_size: int = 2048  # n of the [n, n] @ [n, n] multiply that measures the machine
    threads: int | None = None  # torch threads for the run; None keeps the current setting
    memory_repeats: int = 3  # fresh processes per case of the RSS table (median reported)


FULL = BenchConfig(
    "full",
    Shape(8, 1024, 768, 12),
    Shape(1, 4096, 512, 8),
    (256, 512, 1024, 2048, 4096, 8192, 16384),
)
QUICK = replace(
    FULL, name="quick", standard=Shape(1, 1024, 768, 12), sweep_Ts=(256, 512, 1024, 2048, 4096),
    layer_max_T=1024, max_run_seconds=1.5, repeat_seconds=0.6, min_repeats=3, max_repeats=9,
    standard_seconds=20.0, sweep_seconds=40.0, fit_range=(256, 4096), memory_repeats=1,
)  # fmt: skip
TINY = replace(
    QUICK, name="tiny", standard=Shape(1, 16, 16, 2), bar=Shape(1, 24, 8, 2), sweep_Ts=(8, 16),
    sweep_heads=2, sweep_d_head=4, layer_max_T=8, repeat_seconds=0.01, max_repeats=3,
    fit_range=(8, 16), standard_seconds=60.0, sweep_seconds=60.0, matmul_size=128, threads=1,
)  # fmt: skip
CONFIGS = {c.name: c for c in (FULL, QUICK, TINY)}


@dataclass
class BenchResult:
    """Everything one run produced: rows for the CSV, fits, and the machine's context."""

    config: BenchConfig
    rows: list[BenchRow]
    fits: list[FitRow]
    matmul_gflops: tuple[float, float]  # measured before and after the run
    threads: int
    seconds: float
    machine: str  # processor, cores, torch and Python versions
    load: tuple[float, float]  # 1-minute load average at the start and the end
    competitor: Competitor | None = None  # the competing process of a --busy run
    memory_method: str = MEMORY_METHOD
    memory: list[MemoryRow] = field(default_factory=list)  # RSS growth at the standard shape


_MODES = (FORWARD, FORWARD_BACKWARD)
#: What the bar section compares: the tiled and SDPA backends of CausalSelfAttention, and the
#: kernels alone, each level with its SDPA reference row.
BAR_IMPLS = ("layer_sdpa", "csa_sdpa", "csa_tiled", "sdpa", "tiled")


@dataclass(frozen=True)
class _Group:
    section: str
    shape: Shape
    mode: str
    impls: tuple[Impl, ...]


def plan(config: BenchConfig) -> list[_Group]:
    """The measurements in running order: the tiled-versus-SDPA bar shape, the standard shape,
    then the sweep's kernel rows by growing T (the exponents rest on them), then its layer rows."""
    levels = [tuple(i for i in IMPLS if i.level == level) for level in (LAYER, KERNEL)]
    groups = [
        _Group("bar", config.bar, m, tuple(i for i in impls if i.key in BAR_IMPLS))
        for impls in levels
        for m in _MODES
    ]
    groups += [_Group("standard", config.standard, m, impls) for impls in levels for m in _MODES]
    width = config.sweep_heads * config.sweep_d_head
    for impls in reversed(levels):
        for T in config.sweep_Ts:
            shape = Shape(config.sweep_B, T, width, config.sweep_heads)
            groups += [_Group("sweep", shape, mode, impls) for mode in _MODES]
    return groups


def count_steps(config: BenchConfig) -> int:
    """Number of (implementation, shape, mode) measurements and RSS processes, for a progress
    bar."""
    return sum(len(g.impls) for g in plan(config)) + len(MEMORY_CASES) * config.memory_repeats


@dataclass
class _Run:
    config: BenchConfig
    matmul: float
    start: float = field(default_factory=time.perf_counter)
    section_start: dict[str, float] = field(default_factory=dict)
    # (impl, mode) → (T, seconds of one call, peak bytes) of its last sweep measurement
    history: dict[tuple[str, str], tuple[int, float, int]] = field(default_factory=dict)


def run_bench(
    config: BenchConfig = FULL, on_step: Callable[[str], None] | None = None, busy: bool = False
) -> BenchResult:
    """Run every planned measurement; ``on_step(description)`` is called before each one.

    With ``busy``, one competing busy-looping process runs from the first measurement to the
    last and is always stopped on the way out (:func:`attnlab.bench.busy.competing_process`).
    """
    threads = torch.get_num_threads()
    if config.threads is not None:
        torch.set_num_threads(config.threads)
    try:
        if not busy:
            return _run_all(config, on_step or (lambda _: None))
        limit = limit_for(2 * config.standard_seconds, config.sweep_seconds)
        with competing_process(limit) as competitor:
            wait_until_spinning(competitor)
            result = _run_all(config, on_step or (lambda _: None))
        result.competitor = competitor  # stopped_early is known only once it is stopped
        return result
    finally:
        torch.set_num_threads(threads)


def _run_all(config: BenchConfig, on_step: Callable[[str], None]) -> BenchResult:
    load_before = os.getloadavg()[0]
    matmul_before = matmul_gflops(config.matmul_size)
    run = _Run(config, matmul_before)
    rows: list[BenchRow] = []
    for group in plan(config):
        rows += _run_group(run, group, on_step)
    matmul_after = matmul_gflops(config.matmul_size)
    memory = memory_rows(config.standard, config.memory_repeats, on_step)
    fits = fit_exponents(rows, *config.fit_range)
    seconds = time.perf_counter() - run.start
    matmul = (matmul_before, matmul_after)
    load = (load_before, os.getloadavg()[0])
    return BenchResult(
        config, rows, fits, matmul, torch.get_num_threads(), seconds, machine_line(), load,
        memory=memory,
    )  # fmt: skip


def _row(group: _Group, impl: Impl, **values: object) -> BenchRow:
    s = group.shape
    return BenchRow(
        group.section, impl.key, impl.label, impl.level, group.mode,
        s.B, s.T, s.C, s.n_head, s.d_head, **values,  # type: ignore[arg-type]
    )  # fmt: skip


def _skip_reason(run: _Run, group: _Group, impl: Impl) -> str | None:
    config, T = run.config, group.shape.T
    if group.section == "bar":  # what the run is for: five implementations at one shape, always
        return None
    budget = config.sweep_seconds if group.section == "sweep" else config.standard_seconds
    started = run.section_start.setdefault(group.section, time.perf_counter())
    if time.perf_counter() - started > budget:
        return f"time budget of the {group.section} section ({budget:.0f} s) used up"
    if group.section == "sweep" and impl.level == LAYER and T > config.layer_max_T:
        return f"layer rows stop at T={config.layer_max_T} to keep the run short; see kernel rows"
    last = run.history.get((impl.key, group.mode))
    if group.section != "sweep" or last is None:
        return None
    # Assume quadratic growth from the last size measured: pessimistic for linear memory.
    growth = (T / last[0]) ** 2
    seconds, peak = last[1] * growth, last[2] * growth
    free = available_bytes()
    if peak > config.memory_fraction * free:
        return (
            f"predicted peak {peak / GIB:.1f} GiB > {config.memory_fraction:.0%} of the "
            f"{free / GIB:.1f} GiB available"
        )
    if seconds > config.max_run_seconds:
        return f"predicted {seconds:.0f} s per call > {config.max_run_seconds:g} s limit"
    return None


def _run_group(run: _Run, group: _Group, on_step: Callable[[str], None]) -> list[BenchRow]:
    rows: dict[str, BenchRow] = {}
    ready: list[tuple[Impl, Callable[[], None], int, float]] = []
    for impl in group.impls:
        on_step(f"{group.section} T={group.shape.T} {group.mode}: {impl.label}")
        reason = _skip_reason(run, group, impl)
        if reason is not None:
            rows[impl.key] = _row(group, impl, status="skipped", note=reason)
            continue
        try:
            call = build(impl, group.shape, group.mode)
            peak, warm = peak_allocated_bytes(call)  # the warm-up call, under the profiler
        except ScoresTooLargeError as exc:
            rows[impl.key] = _row(group, impl, status="refused", note=str(exc))
            continue
        except (MemoryError, RuntimeError) as exc:
            rows[impl.key] = _row(group, impl, status="failed", note=str(exc).splitlines()[0])
            continue
        rows[impl.key] = _row(group, impl, peak_mib=peak / MIB)
        ready.append((impl, call, peak, warm))
    _time_round_robin(run, group, ready, rows)
    _add_ratios(rows)
    return [rows[impl.key] for impl in group.impls]


def _time_round_robin(
    run: _Run,
    group: _Group,
    ready: list[tuple[Impl, Callable[[], None], int, float]],
    rows: dict[str, BenchRow],
) -> None:
    config = run.config
    times: dict[str, list[float]] = {impl.key: [] for impl, *_ in ready}
    repeats = {
        impl.key: min(
            config.max_repeats, max(config.min_repeats, int(config.repeat_seconds / warm))
        )
        for impl, _, _, warm in ready
    }
    for i in range(config.max_repeats):
        for impl, call, _, _ in ready:
            if i < repeats[impl.key]:
                times[impl.key].append(time_call(call))
    for impl, _, peak, _ in ready:
        seconds = statistics.median(times[impl.key])
        flops = _flops(group, impl)
        row = rows[impl.key]
        row.median_ms, row.repeats = seconds * 1e3, len(times[impl.key])
        row.gflops = flops / seconds / 1e9
        row.matmul_gflops = run.matmul
        row.pct_of_matmul = 100 * row.gflops / run.matmul
        if group.section == "sweep":
            # The fastest call predicts the next size best: load from other processes only adds.
            run.history[(impl.key, group.mode)] = (group.shape.T, min(times[impl.key]), peak)


def _flops(group: _Group, impl: Impl) -> int:
    s = group.shape
    flops = attention_flops(s.B, s.T, s.n_head, s.d_head)
    if impl.level == LAYER:
        flops += projection_flops(s.B, s.T, s.C)
    return 3 * flops if group.mode == FORWARD_BACKWARD else flops


def _add_ratios(rows: dict[str, BenchRow]) -> None:
    references = {impl.level: rows.get(impl.key) for impl in IMPLS if impl.reference}
    for row in rows.values():
        reference = references[row.level]
        if row.median_ms is not None and reference is not None and reference.median_ms:
            row.ratio_to_sdpa = row.median_ms / reference.median_ms
