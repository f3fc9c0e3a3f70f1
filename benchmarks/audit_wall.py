"""The audit bar: ``attnlab audit FILE.py:NAME`` must take at most 5 s wall, start-up included.

Runs ``python -c "import torch"`` and ``attnlab audit`` on a few zoo files of different styles,
interleaved (background load hits all alike), and prints each median and maximum wall time.

    python benchmarks/audit_wall.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ZOO = ROOT / "tests" / "zoo"
TARGETS = {
    "lesson head (good)": "good/lesson_head.py:AttentionHead",
    "nanoGPT fused (good)": "good/nanogpt_fused.py:CausalSelfAttention",
    "nn.MultiheadAttention wrapper (good)": "good/torch_mha_wrapper.py:Wrapped",
    "per-head loop, no scale (bad)": "bad/no_scale_loop.py:LoopMHA",
}
BAR_SECONDS = 5.0


def _wall(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    commands = {'python -c "import torch"': [sys.executable, "-c", "import torch"]}
    for name, spec in TARGETS.items():
        commands[f"audit {name}"] = [sys.executable, "-m", "attnlab", "audit", str(ZOO / spec)]
    _wall(commands['python -c "import torch"'])  # warm the file cache
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(args.repeat):
        for name, cmd in commands.items():
            times[name].append(_wall(cmd))
    print(f"{'command':48} {'median s':>9} {'max s':>7}")
    over = False
    for name, samples in times.items():
        worst = max(samples)
        flag = " OVER" if name.startswith("audit") and worst > BAR_SECONDS else ""
        over = over or bool(flag)
        print(f"{name:48} {statistics.median(samples):9.2f} {worst:7.2f}{flag}")
    print(f"bar: every audit <= {BAR_SECONDS:g} s wall")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
