"""``attnlab bench``: every attention implementation on the same inputs, side by side.

Library use (the command line and ``benchmarks/attention.py`` call the same functions)::

    from attnlab.bench import QUICK, run_bench
    result = run_bench(QUICK)          # BenchResult: rows, fits, matmul GFLOP/s, ...
    rows = result.rows                 # list[BenchRow], one per implementation × shape × mode

Column meanings are documented in :mod:`attnlab.bench.results`; how time and memory are
measured in :mod:`attnlab.bench.measure`.

May import: core and text.
"""

from attnlab.bench.results import (
    CSV_COLUMNS,
    FIT_COLUMNS,
    BenchRow,
    FitRow,
    fit_exponents,
    read_rows,
    write_csv,
)
from attnlab.bench.runner import (
    CONFIGS,
    FULL,
    MEMORY_METHOD,
    QUICK,
    TINY,
    BenchConfig,
    BenchResult,
    count_steps,
    run_bench,
)

__all__ = [
    "CONFIGS",
    "CSV_COLUMNS",
    "FIT_COLUMNS",
    "FULL",
    "MEMORY_METHOD",
    "QUICK",
    "TINY",
    "BenchConfig",
    "BenchResult",
    "BenchRow",
    "FitRow",
    "count_steps",
    "fit_exponents",
    "read_rows",
    "run_bench",
    "write_csv",
]
