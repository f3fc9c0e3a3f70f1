"""Benchmark every attention implementation: the same code as ``attnlab bench``.

Usage::

    python benchmarks/attention.py            # full run, about 12 minutes on 2 cores
    python benchmarks/attention.py --quick    # about one minute
    python benchmarks/attention.py --csv results/bench.csv --lang en

What is measured and every CSV column: ``benchmarks/attention.md``.
"""

from __future__ import annotations

import sys

from attnlab.cli.main import app

if __name__ == "__main__":
    app(["bench", *sys.argv[1:]])
