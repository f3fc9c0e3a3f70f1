"""Start-up bars, measured side by side: the lesson script and ``attnlab trace`` against
``python -c "import torch"``.

Runs the commands interleaved (so background load hits all of them alike), repeats them, and
prints the median wall time of each and its ratio to importing torch.

    python benchmarks/startup.py [--repeat 15]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ATTNLAB = [sys.executable, "-m", "attnlab"]
COMMANDS = {
    'python -c "import torch"': [sys.executable, "-c", "import torch"],
    "python week07_attention.py": [sys.executable, str(ROOT / "week07_attention.py")],
    "attnlab trace": [*ATTNLAB, "trace"],
}
BARS = {"python week07_attention.py": 1.25, "attnlab trace": 1.5}


def _wall(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    for cmd in COMMANDS.values():  # warm the file cache
        _wall(cmd)
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for _ in range(args.repeat):
        for name, cmd in COMMANDS.items():
            times[name].append(_wall(cmd))
    base = statistics.median(times['python -c "import torch"'])
    print(f"{'command':32} {'median s':>9} {'ratio':>7} {'bar':>6}")
    for name, samples in times.items():
        median = statistics.median(samples)
        bar = BARS.get(name)
        verdict = "" if bar is None else (" ok" if median / base <= bar else " OVER")
        print(f"{name:32} {median:9.3f} {median / base:7.2f} {bar or '':>6}{verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
