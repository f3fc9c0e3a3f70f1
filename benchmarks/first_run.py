"""The first-run bar: a learner's first ``attnlab plot chain`` within 1.5 x a warm one.

A fresh install without a fresh virtualenv: attnlab's source is copied (without bytecode) to a
temporary folder put first on ``PYTHONPATH``, with an empty matplotlib config folder (its font
list) and an empty attnlab figure cache. Two such copies are timed:

* ``before``: nothing built; the first command compiles attnlab and builds the font list;
* ``after``: the steps ``make`` runs after ``pip install`` first (:data:`INSTALL_STEPS`).

For each, the first run of each command, then the median of ``--repeat`` warm runs, and their
ratio. The OS file cache is warm in both (it cannot be emptied without root and without
slowing every other process), so the figures show what attnlab's own caches cost.

    .venv/bin/python benchmarks/first_run.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: What the Makefile runs after ``pip install`` (keep the two in step).
INSTALL_STEPS = (["-m", "compileall", "-q", "{src}/attnlab"], ["-m", "attnlab.web.figures"])
COMMANDS = {
    "attnlab plot chain": ["-m", "attnlab", "plot", "chain", "--out", "{out}"],
    "attnlab trace": ["-m", "attnlab", "trace"],
}
BAR = ("attnlab plot chain", 1.5)


def _fresh_copy(folder: Path) -> dict[str, str]:
    """attnlab's source without bytecode in ``folder``, and the environment that uses it."""
    shutil.copytree(ROOT / "src" / "attnlab", folder / "src" / "attnlab",
                    ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
    for name in ("mpl", "cache", "out"):
        (folder / name).mkdir()
    return {
        **os.environ,
        "PYTHONPATH": str(folder / "src"),
        "MPLCONFIGDIR": str(folder / "mpl"),
        "ATTNLAB_CACHE_DIR": str(folder / "cache"),
    }


def _run(args: list[str], folder: Path, env: dict[str, str]) -> float:
    cmd = [sys.executable, *(a.format(src=folder / "src", out=folder / "out") for a in args)]
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, cwd=folder, env=env)
    return time.perf_counter() - start


def _scenario(name: str, build: bool, repeat: int) -> dict[str, tuple[float, float]]:
    """``{command: (first run s, warm median s)}`` for a fresh copy."""
    with tempfile.TemporaryDirectory(prefix=f"attnlab-first-{name}-") as tmp:
        folder = Path(tmp)
        env = _fresh_copy(folder)
        if build:
            spent = sum(_run(step, folder, env) for step in INSTALL_STEPS)
            print(f"  {name}: install steps took {spent:.1f} s")
        first = {cmd: _run(args, folder, env) for cmd, args in COMMANDS.items()}
        warm: dict[str, list[float]] = {cmd: [] for cmd in COMMANDS}
        for _ in range(repeat):
            for cmd, args in COMMANDS.items():
                warm[cmd].append(_run(args, folder, env))
    return {cmd: (first[cmd], statistics.median(warm[cmd])) for cmd in COMMANDS}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="warm runs of each command")
    args = parser.parse_args()
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    results = {
        "before": _scenario("before", build=False, repeat=args.repeat),
        "after": _scenario("after", build=True, repeat=args.repeat),
    }
    print(f"{'scenario':8} {'command':22} {'first s':>8} {'warm s':>7} {'ratio':>6}")
    missed = False
    for scenario, rows in results.items():
        for cmd, (first, warm) in rows.items():
            flag = ""
            if scenario == "after" and cmd == BAR[0]:
                missed = first / warm > BAR[1]
                flag = " MISSED" if missed else " ok"
            print(f"{scenario:8} {cmd:22} {first:8.2f} {warm:7.2f} {first / warm:6.2f}{flag}")
    print(f"bar: after the install steps, the first {BAR[0]} <= {BAR[1]:g} x a warm one")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
