"""RSS growth of one inference forward, each case in a fresh Python process.

The profiler figures of :mod:`.measure` count what PyTorch's allocator hands out. This table
counts what the operating system sees: the process's resident memory (RSS) at its highest
during one ``torch.no_grad()`` forward, minus its RSS just before. Every case runs in its own
``python`` process (:func:`child_main`), so no case inherits pages another one left behind.

In the child, after the module and ``x`` exist and one forward on the first 8 tokens has loaded
the kernels: the peak is reset (Linux: writing ``5`` to ``/proc/self/clear_refs`` resets
``VmHWM``), RSS is read, the forward runs (its output kept), and the new peak is read. Without
``/proc`` the peak is ``getrusage(RUSAGE_SELF).ru_maxrss``, which cannot be reset: a higher peak
reached before the call would be counted as growth.

The child runs with ``MALLOC_MMAP_THRESHOLD_=131072``: glibc then gives every block of 128 KiB
or more its own mapping and returns it to the system when freed. With glibc's default (a
threshold that grows up to 32 MiB as blocks are freed) blocks below 32 MiB are served from
heaps that keep freed pages, and one forward of the lesson's MultiHeadAttention at B=1, T=1024
measured 18 MiB in some processes and 83 MiB in others; with the fixed threshold, 14 MiB in
every one. Blocks of 32 MiB or more (the score tensors at B=8, T=1024) are mapped either way.
"""

from __future__ import annotations

import gc
import json
import os
import resource
import statistics
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch

from attnlab.bench.results import MemoryRow
from attnlab.bench.workloads import Shape
from attnlab.core.convert import mha_from_fused
from attnlab.core.modules import CausalSelfAttention

MIB = 2**20

#: How the table's figures are measured, in one line (printed above the tables).
RSS_METHOD = (
    "RSS growth: peak resident memory during one no_grad forward minus RSS just before it, "
    "each case in a fresh process (MALLOC_MMAP_THRESHOLD_=131072) after a warm-up forward on "
    "8 tokens"
)

#: Tokens of the untimed warm-up forward that loads the kernels before the measured one.
WARMUP_T = 8


@dataclass(frozen=True)
class MemoryCase:
    """One forward whose RSS growth is measured: CSV ``key`` and table ``label``."""

    key: str
    label: str


MEMORY_CASES: tuple[MemoryCase, ...] = (
    MemoryCase("mha", "MultiHeadAttention"),
    MemoryCase("mha_heads", "MultiHeadAttention heads one at a time"),
    MemoryCase("csa_explicit", "CausalSelfAttention(explicit)"),
    MemoryCase("csa_sdpa", "CausalSelfAttention(sdpa)"),
    MemoryCase("csa_tiled", "CausalSelfAttention(tiled)"),
)

#: The case every other one is divided by in the table's ratio column.
REFERENCE_CASE = "mha_heads"


def ratio_to_reference(rows: list[MemoryRow], case: str) -> float | None:
    """RSS growth of ``case`` ÷ that of :data:`REFERENCE_CASE` (None if either is missing)."""
    by_case = {r.case: r.rss_mib for r in rows if r.status == "ok"}
    mib, reference = by_case.get(case), by_case.get(REFERENCE_CASE)
    return mib / reference if mib is not None and reference else None


def _forward(key: str, shape: Shape) -> Callable[[torch.Tensor], torch.Tensor]:
    """The forward of case ``key`` (seeded weights, the same for every case)."""
    torch.manual_seed(0)
    fused = CausalSelfAttention(shape.C, shape.n_head, shape.T)
    if key.startswith("csa_"):
        fused.backend = key.removeprefix("csa_")
        return fused
    mha = mha_from_fused(fused)
    if key == "mha":
        return mha

    def heads_one_at_a_time(x: torch.Tensor) -> torch.Tensor:
        outs = [head(x) for head in mha.heads]  # n_head × [B, T, d_head], one head at a time
        return mha.output_projection(torch.cat(outs, dim=-1))  # [B, T, C]

    return heads_one_at_a_time


def _status_kib(field: str) -> int | None:
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith(f"{field}:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def _reset_peak() -> bool:
    """Reset this process's peak RSS (Linux ≥ 4.0); False where that is not possible."""
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as f:
            f.write("5")
    except OSError:
        return False
    return _status_kib("VmHWM") is not None


def _rss_bytes() -> int:
    kib = _status_kib("VmRSS")
    if kib is not None:
        return kib * 1024
    import psutil

    return int(psutil.Process().memory_info().rss)


def _peak_bytes(resettable: bool) -> int:
    hwm = _status_kib("VmHWM") if resettable else None
    if hwm is not None:
        return hwm * 1024
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024  # macOS counts bytes, Linux KiB


def measure_in_this_process(key: str, shape: Shape) -> dict[str, object]:
    """RSS growth (bytes) of one no_grad forward of case ``key``, and how it was read."""
    forward = _forward(key, shape)
    x = torch.randn(shape.B, shape.T, shape.C, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        forward(x[:, :WARMUP_T])  # loads kernels and thread pools: not part of the figure
        gc.collect()
        resettable = _reset_peak()
        before = _rss_bytes()
        out = forward(x)  # [B, T, C], kept alive until the peak is read
        peak = _peak_bytes(resettable)
    del out
    method = "VmHWM reset" if resettable else "ru_maxrss"
    return {"growth_bytes": max(0, peak - before), "method": method}


def _child_env() -> dict[str, str]:
    """The environment of a child: it imports the attnlab this process imported, and glibc
    maps every block of 128 KiB or more on its own (see the module docstring)."""
    src = str(Path(__file__).resolve().parents[2])
    path = os.environ.get("PYTHONPATH")
    return {
        **os.environ,
        "PYTHONPATH": src if not path else os.pathsep.join([src, path]),
        "MALLOC_MMAP_THRESHOLD_": "131072",
    }


#: The child's program: ``python -c`` rather than ``-m``, which would import this module twice.
_CHILD = "import sys; from attnlab.bench.rss import child_main; child_main(sys.argv[1:])"


def child_main(argv: list[str]) -> None:
    """The child's entry: ``KEY B T C n_head threads``; prints one JSON line."""
    key, B, T, C, n_head, threads = argv[0], *map(int, argv[1:6])
    torch.set_num_threads(threads)
    print(json.dumps(measure_in_this_process(key, Shape(B, T, C, n_head))))


def measure_case(key: str, shape: Shape, threads: int, timeout: float = 600.0) -> tuple[int, str]:
    """(growth bytes, method) of :func:`measure_in_this_process` run in a fresh ``python`` with
    ``threads`` torch threads."""
    args = [str(v) for v in (key, shape.B, shape.T, shape.C, shape.n_head, threads)]
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, *args],
        capture_output=True, text=True, timeout=timeout, env=_child_env(), check=False,
    )  # fmt: skip
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        raise RuntimeError(f"the {key} child process failed: {last}")
    measured = json.loads(done.stdout.strip().splitlines()[-1])
    return int(measured["growth_bytes"]), str(measured["method"])


def memory_rows(
    shape: Shape, repeats: int, on_step: Callable[[str], None] = lambda _: None
) -> list[MemoryRow]:
    """Every :data:`MEMORY_CASES` at ``shape``: the median RSS growth of ``repeats`` processes.

    The repeats go round-robin over the cases, like the timed calls of :mod:`.runner`.
    """
    threads = torch.get_num_threads()
    growth: dict[str, list[float]] = {case.key: [] for case in MEMORY_CASES}
    methods: dict[str, str] = {}
    failed: dict[str, str] = {}
    for _ in range(repeats):
        for case in MEMORY_CASES:
            on_step(f"memory B={shape.B} T={shape.T}: {case.label}")
            if case.key in failed:
                continue
            try:
                grown, methods[case.key] = measure_case(case.key, shape, threads)
            except (RuntimeError, subprocess.TimeoutExpired) as exc:
                failed[case.key] = str(exc).splitlines()[0]
                continue
            growth[case.key].append(grown / MIB)
    return [_row(case, shape, growth[case.key], methods, failed) for case in MEMORY_CASES]


def _row(
    case: MemoryCase,
    shape: Shape,
    mib: list[float],
    methods: dict[str, str],
    failed: dict[str, str],
) -> MemoryRow:
    row = MemoryRow(case.key, case.label, shape.B, shape.T, shape.C, shape.n_head)
    if case.key in failed:
        row.status, row.note = "failed", failed[case.key]
        return row
    row.rss_mib, row.rss_mib_min, row.rss_mib_max = statistics.median(mib), min(mib), max(mib)
    row.repeats, row.method = len(mib), methods[case.key]
    return row
