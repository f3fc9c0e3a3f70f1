"""Rows of a bench run, the CSV they are written to, and growth exponents fitted from them.

CSV columns (one row per implementation × shape × mode; empty cells where not measured):

=================  ==========================================================================
``section``        ``bar`` (B=1, T=4096, C=512, 8 heads: the tiled-versus-SDPA bars),
                   ``standard`` (B=8, T=1024, C=768, 12 heads) or ``sweep`` (B=1, 8 heads,
                   d_head=64, T from 256 up)
``impl``           short key, e.g. ``csa_tiled``; ``label`` is what the table shows
``level``          ``layer`` (x → y, projections included) or ``kernel`` (q, k, v → out)
``mode``           ``forward`` (no_grad) or ``forward+backward`` (gradients of inputs, weights)
``B, T, C, n_head, d_head``  the shape
``status``         ``ok``, ``skipped`` (predicted too slow or too big, see ``note``),
                   ``refused`` (the dense path's memory check) or ``failed``
``median_ms``      median wall-clock milliseconds of ``repeats`` timed calls after warm-up
``ratio_to_sdpa``  ``median_ms`` / the same level's SDPA reference row in the same shape and mode
``gflops``         attention (+ projection) FLOPs / median time; backward counted as 2× forward
``matmul_gflops``  this machine's measured float32 matmul rate (the practical limit)
``pct_of_matmul``  ``gflops`` / ``matmul_gflops`` × 100
``peak_mib``       peak memory PyTorch's CPU allocator handed out during one call (MiB),
                   measured with ``torch.profiler(profile_memory=True)``; inputs excluded
``repeats``        number of timed calls behind the median
``note``           why a row was skipped, refused or failed
=================  ==========================================================================

The memory CSV (``NAME-memory.csv``, :class:`MemoryRow`) has one row per case of
:mod:`attnlab.bench.rss`: ``case``, ``label``, the shape, ``status``, ``rss_mib`` (median RSS
growth of one no_grad forward over ``repeats`` fresh processes), ``rss_mib_min``/``rss_mib_max``,
``method`` (how the peak was read) and ``note``.
"""

from __future__ import annotations

import csv
import math
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import IO

from attnlab.text import atomic


@dataclass
class BenchRow:
    """One measurement (or one skipped one); fields are the CSV columns, in order."""

    section: str
    impl: str
    label: str
    level: str
    mode: str
    B: int
    T: int
    C: int
    n_head: int
    d_head: int
    status: str = "ok"
    median_ms: float | None = None
    ratio_to_sdpa: float | None = None
    gflops: float | None = None
    matmul_gflops: float | None = None
    pct_of_matmul: float | None = None
    peak_mib: float | None = None
    repeats: int = 0
    note: str = ""


CSV_COLUMNS: tuple[str, ...] = tuple(f.name for f in fields(BenchRow))


@dataclass
class MemoryRow:
    """RSS growth of one inference forward (:mod:`attnlab.bench.rss`); fields are the CSV's."""

    case: str
    label: str
    B: int
    T: int
    C: int
    n_head: int
    status: str = "ok"
    rss_mib: float | None = None
    rss_mib_min: float | None = None
    rss_mib_max: float | None = None
    repeats: int = 0
    method: str = ""
    note: str = ""


@dataclass(frozen=True)
class FitRow:
    """Growth exponents ``p`` in ``time ∝ T^p`` and ``memory ∝ T^p`` (log-log least squares)."""

    impl: str
    label: str
    level: str
    mode: str
    time_exponent: float | None
    memory_exponent: float | None
    T_min: int
    T_max: int
    points: int


FIT_COLUMNS: tuple[str, ...] = tuple(f.name for f in fields(FitRow))


def loglog_slope(xs: list[float], ys: list[float]) -> float | None:
    """Least-squares slope of log y against log x; None with fewer than two points."""
    if len(xs) < 2:
        return None
    lx, ly = [math.log(x) for x in xs], [math.log(y) for y in ys]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    sxx = sum((x - mx) ** 2 for x in lx)
    return sum((x - mx) * (y - my) for x, y in zip(lx, ly, strict=True)) / sxx


def _points(rows: list[BenchRow], column: str) -> tuple[list[float], list[float]]:
    pairs = [(float(r.T), getattr(r, column)) for r in rows]
    kept = [(T, y) for T, y in pairs if y]  # a 0 or missing value has no logarithm
    return [T for T, _ in kept], [y for _, y in kept]


def fit_exponents(rows: list[BenchRow], T_min: int, T_max: int) -> list[FitRow]:
    """Time and memory growth exponents in T of every sweep implementation and mode."""
    fits = []
    keys = dict.fromkeys((r.impl, r.mode) for r in rows if r.section == "sweep")
    for impl, mode in keys:
        group = [r for r in rows if r.section == "sweep" and (r.impl, r.mode) == (impl, mode)]
        ok = [r for r in group if r.status == "ok" and T_min <= r.T <= T_max]
        fits.append(
            FitRow(
                impl=impl,
                label=group[0].label,
                level=group[0].level,
                mode=mode,
                time_exponent=loglog_slope(*_points(ok, "median_ms")),
                memory_exponent=loglog_slope(*_points(ok, "peak_mib")),
                T_min=min((r.T for r in ok), default=0),
                T_max=max((r.T for r in ok), default=0),
                points=len(ok),
            )
        )
    return fits


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def write_csv(path: Path, records: list[BenchRow] | list[FitRow] | list[MemoryRow]) -> None:
    """Write rows to ``path`` atomically (a temporary file renamed into place)."""
    columns = tuple(f.name for f in fields(records[0])) if records else CSV_COLUMNS

    def rows(f: IO[str]) -> None:
        writer = csv.writer(f)
        writer.writerow(columns)
        for record in records:
            writer.writerow([_cell(v) for v in asdict(record).values()])

    atomic.write_with(path, rows)


def read_rows(path: Path) -> list[BenchRow]:
    """The rows of a CSV written by ``attnlab bench`` (for plotting without re-running)."""
    types = {f.name: f.type for f in fields(BenchRow)}
    rows = []
    with open(path, newline="", encoding="utf-8") as f:
        for record in csv.DictReader(f):
            values: dict[str, object] = {}
            for name, text in record.items():
                kind = str(types[name])
                if text == "" and "None" in kind:
                    values[name] = None
                elif kind.startswith("int"):
                    values[name] = int(text)
                elif kind.startswith("float"):
                    values[name] = float(text)
                else:
                    values[name] = text
            rows.append(BenchRow(**values))  # type: ignore[arg-type]
    return rows
