"""The audit bar: ``attnlab audit FILE.py:NAME`` wall <= 1.3 x ``python -c "import torch"`` wall.

Runs ``python -c "import torch"`` and ``attnlab audit`` on a few zoo files of different styles,
interleaved (background load hits all alike), and prints each command's median and maximum wall
time and its median's ratio to importing torch, with the load average before and after.

    python benchmarks/audit_wall.py [--repeat 5]
    python benchmarks/audit_wall.py --src /tmp/before/src   # another checkout's code ("before")

``--src`` puts that folder first on ``PYTHONPATH``, so the same interpreter and packages run
another version of attnlab (``git archive main | tar -x -C /tmp/before``).
"""

from __future__ import annotations

import argparse
import os
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
    "nanoGPT config class (built by meaning)": "real/good/nanogpt_config.py:CausalSelfAttention",
    "annotated q, k, v, mask (mask probed)": "real/good/annotated_qkv_mask.py:MultiHeadedAttention",
}
TORCH = 'python -c "import torch"'
BAR_RATIO = 1.3


def _wall(cmd: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT, env=env)
    return time.perf_counter() - start


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs of each command")
    parser.add_argument("--src", type=Path, help="run the attnlab found in this folder")
    args = parser.parse_args()
    env = dict(os.environ)
    if args.src is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(args.src.resolve()), env.get("PYTHONPATH", "")])
    commands = {TORCH: [sys.executable, "-c", "import torch"]}
    for name, spec in TARGETS.items():
        commands[f"audit {name}"] = [sys.executable, "-m", "attnlab", "audit", str(ZOO / spec)]
    print(f"load average before: {_load()}  ({os.cpu_count()} CPUs)")
    for cmd in commands.values():  # warm the file cache
        _wall(cmd, env)
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(args.repeat):
        for name, cmd in commands.items():
            times[name].append(_wall(cmd, env))
    base = statistics.median(times[TORCH])
    print(f"{'command':48} {'median s':>9} {'max s':>7} {'ratio':>6}")
    over = False
    for name, samples in times.items():
        ratio = statistics.median(samples) / base
        flag = " OVER" if name != TORCH and ratio > BAR_RATIO else ""
        over = over or bool(flag)
        print(f"{name:48} {statistics.median(samples):9.2f} {max(samples):7.2f} {ratio:6.2f}{flag}")
    print(f"bar: every audit's median <= {BAR_RATIO:g} x the median of {TORCH}")
    print(f"load average after: {_load()}  ({args.repeat} runs each, interleaved)")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
