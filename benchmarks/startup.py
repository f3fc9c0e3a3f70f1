"""Start-up bars, measured side by side: the lesson script and ``attnlab trace`` against
``python -c "import torch"``; and a check, without timing, of what each command imports.

Timing (the default) runs the commands interleaved (so background load hits all of them alike),
repeats them, and prints the median wall time of each and its ratio to importing torch.

``--check`` runs each command once in a wrapper that reports, as JSON, its exit status, whether
it imported torch, and which of ``torch._dynamo`` and sympy it imported (about a second of
start-up that a plain walk never needs). It exits 1 if a command breaks its expectation; the
test suite (``tests/test_startup.py``) reads the same report.

    python benchmarks/startup.py [--repeat 15]
    python benchmarks/startup.py --check [NAME ...]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LESSON = str(ROOT / "week07_attention.py")
GRAD = str(ROOT / "course_examples" / "week07_attention.py")
ATTNLAB = [sys.executable, "-m", "attnlab"]
COMMANDS = {
    'python -c "import torch"': [sys.executable, "-c", "import torch"],
    "python week07_attention.py": [sys.executable, LESSON],
    "attnlab trace": [*ATTNLAB, "trace"],
}
BARS = {"python week07_attention.py": 1.1, "attnlab trace": 1.5}

#: Printed last on stderr by the wrapper, before its JSON report.
MARK = "startup-check: "
#: Packages a walk must not import; the report names each one found in ``sys.modules``.
HEAVY = ("torch._dynamo", "sympy")
#: Runs ``sys.argv[1]`` (a script path, or ``-m MODULE``) with the remaining arguments, then
#: reports what it imported.
_WRAPPER = f"""
import json, runpy, sys
target, *args = sys.argv[1:]
code = 0
try:
    if target == "-m":
        module, *args = args
        sys.argv = [module, *args]
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    else:
        sys.argv = [target, *args]
        runpy.run_path(target, run_name="__main__")
except SystemExit as exc:
    code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
sys.stdout.flush()
heavy = [h for h in {HEAVY!r} if any(m == h or m.startswith(h + ".") for m in sys.modules)]
report = {{"exit": code, "torch": "torch" in sys.modules, "heavy": heavy}}
print({MARK!r} + json.dumps(report), file=sys.stderr)
sys.exit(code)
"""


@dataclass(frozen=True)
class Check:
    """A command and what it must do: its exit status, and whether it may import torch."""

    argv: tuple[str, ...]  # after ``python``: a script path or ``-m attnlab``, then options
    exit: int
    torch: bool


CHECKS = {
    "walk": Check((LESSON,), 0, torch=True),
    "walk-json": Check((LESSON, "--json"), 0, torch=True),
    "grad": Check((GRAD,), 0, torch=True),
    "trace": Check(("-m", "attnlab", "trace"), 0, torch=True),
    "walk-bad-lang": Check((LESSON, "--lang", "fr"), 2, torch=False),
    "grad-bad-lang": Check((GRAD, "--lang", "fr"), 2, torch=False),
    "walk-help": Check((LESSON, "--help"), 0, torch=False),
    "version": Check(("-m", "attnlab", "--version"), 0, torch=False),
}


def probe(name: str) -> dict[str, object]:
    """Run check ``name`` once: its exit status, ``torch`` (imported?) and ``heavy`` modules."""
    check = CHECKS[name]
    done = subprocess.run(
        [sys.executable, "-c", _WRAPPER, *check.argv],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    last = done.stderr.rstrip().rpartition("\n")[2]
    if not last.startswith(MARK):
        raise RuntimeError(f"{name}: no report from the wrapper; stderr: {done.stderr[-500:]}")
    return json.loads(last.removeprefix(MARK))


def passes(name: str, report: dict[str, object]) -> bool:
    """Whether ``report`` meets check ``name``'s expectation and imports nothing heavy."""
    check = CHECKS[name]
    torch_ok = check.torch or not report["torch"]
    return report["exit"] == check.exit and torch_ok and not report["heavy"]


def _check(names: list[str]) -> int:
    unknown = sorted(set(names) - set(CHECKS))
    if unknown:
        print(f"unknown check {unknown[0]!r}; known: {', '.join(CHECKS)}", file=sys.stderr)
        return 2
    failed = 0
    for name in names or list(CHECKS):
        report = probe(name)
        ok = passes(name, report)
        failed += not ok
        print(json.dumps({"check": name, "ok": ok, **report}))
    return 1 if failed else 0


def _wall(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
    return time.perf_counter() - start


def _time(repeat: int) -> int:
    for cmd in COMMANDS.values():  # warm the file cache
        _wall(cmd)
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for _ in range(repeat):
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument(
        "--check",
        nargs="*",
        metavar="NAME",
        help=f"report imports instead of timing (all, or some of: {', '.join(CHECKS)})",
    )
    args = parser.parse_args()
    if args.check is not None:
        return _check(args.check)
    return _time(args.repeat)


if __name__ == "__main__":
    sys.exit(main())
