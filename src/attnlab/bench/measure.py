"""How ``attnlab bench`` measures: wall-clock medians, peak allocated memory, FLOP counts.

Time: ``time.perf_counter`` around one call, repeated; the median after warm-up is reported.
Memory: ``torch.profiler`` with ``profile_memory=True`` records every allocation and free made
through PyTorch's CPU allocator, in order; the running sum of those sizes, at its highest, is
the peak memory *that call* allocated on top of what already existed (inputs and weights are
excluded, outputs, saved activations, gradients and scratch buffers included). It sees what
``psutil``'s RSS would miss or blur (memory freed and reused inside one call) and ignores what
RSS would add (the Python interpreter, libraries).
"""

from __future__ import annotations

import contextlib
import os
import platform
import statistics
import time
from collections.abc import Callable, Iterator

import torch


def time_call(fn: Callable[[], object]) -> float:
    """Seconds one call of ``fn`` takes (wall clock)."""
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def median_seconds(fn: Callable[[], object], repeats: int, warmup: int = 1) -> float:
    """Median wall-clock seconds of ``repeats`` calls after ``warmup`` untimed calls."""
    for _ in range(warmup):
        fn()
    return statistics.median(time_call(fn) for _ in range(repeats))


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[None]:
    """Silence file descriptor 2: the profiler's C++ side logs two lines per run there."""
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def peak_allocated_bytes(fn: Callable[[], object]) -> tuple[int, float]:
    """Run ``fn`` once under ``torch.profiler``; return (peak bytes allocated, seconds taken).

    The peak is the highest running sum of the allocator's ``[memory]`` events (allocations
    positive, frees negative) in time order, so memory freed inside the call is not counted twice.
    """
    from torch.profiler import ProfilerActivity, profile

    with _quiet_stderr(), profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        seconds = time_call(fn)
    events = [e for e in prof.profiler.kineto_results.events() if e.name() == "[memory]"]
    events.sort(key=lambda e: e.start_ns())
    current = peak = 0
    for event in events:
        current += event.nbytes()
        peak = max(peak, current)
    return peak, seconds


def matmul_gflops(n: int = 2048, repeats: int = 5) -> float:
    """This machine's float32 matrix-multiply rate: GFLOP/s of ``[n, n] @ [n, n]`` (median)."""
    gen = torch.Generator().manual_seed(0)
    a, b = torch.randn(2, n, n, generator=gen).unbind(0)
    seconds = median_seconds(lambda: a @ b, repeats=repeats, warmup=2)
    return 2 * n**3 / seconds / 1e9


def attention_flops(B: int, T: int, n_head: int, d_head: int) -> int:
    """FLOPs causal attention needs: QKᵀ and PV over the T(T+1)/2 visible (query, key) pairs.

    Each pair costs d_head multiply-adds (2 FLOPs) in each of the two products, so
    ``2 · 2 · d_head · T(T+1)/2`` per head. The same count is used for every implementation, so
    a dense one that also multiplies the masked half is charged nothing extra for it.
    """
    return 2 * B * n_head * T * (T + 1) * d_head


def projection_flops(B: int, T: int, C: int) -> int:
    """FLOPs of the QKV (``C → 3C``) and output (``C → C``) projections: ``2·B·T·C·4C``."""
    return 8 * B * T * C * C


def machine_line() -> str:
    """This machine in one line: processor, cores, torch and Python versions."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return (
        f"{cpu}, {os.cpu_count()} logical cores, torch {torch.__version__}, "
        f"Python {platform.python_version()}"
    )
