"""``attnlab bench --busy``: one competing process that keeps a core busy during the run.

A learner's machine is rarely quiet: a browser or an editor takes CPU time while attention runs.
The competitor reproduces that with the simplest load there is, a Python loop that never sleeps
(``python -c "while True: pass"``), and it cannot outlive the benchmark:

- the benchmark kills it on the way out, whether the run ends, fails or is interrupted
  (SIGINT, and SIGTERM, which is turned into an exit so the same ``finally`` runs);
- it stops by itself after ``limit_seconds``, and as soon as its parent is gone (a
  ``SIGKILL`` of the benchmark leaves nothing to clean up).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from types import FrameType

#: The competitor: spin until the deadline or until the parent process is gone. The checks run
#: every million iterations (a few milliseconds), so the loop is almost all spinning.
_SPIN = """
import os, sys, time
parent, deadline = int(sys.argv[1]), time.monotonic() + float(sys.argv[2])
try:
    while time.monotonic() < deadline and os.getppid() == parent:
        for _ in range(1_000_000):
            pass
except KeyboardInterrupt:
    pass
"""


@dataclass
class Competitor:
    """The running competitor: its process id, its time limit, and whether it lasted."""

    pid: int
    limit_seconds: float
    stopped_early: bool = False  # it ended (limit reached) before the benchmark did


def _exit_on_sigterm(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)  # the shell's exit status for "killed by this signal"


@contextlib.contextmanager
def competing_process(limit_seconds: float) -> Iterator[Competitor]:
    """Run a busy-looping child process for the duration of the ``with`` block.

    Args:
        limit_seconds: the child stops by itself after this long, whatever happens.

    Yields:
        a :class:`Competitor`; ``stopped_early`` is set on exit if the child had already ended.
    """
    if limit_seconds <= 0:
        raise ValueError(f"limit_seconds must be positive, got {limit_seconds}")
    command = [sys.executable, "-c", _SPIN, str(os.getpid()), str(limit_seconds)]
    in_main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _exit_on_sigterm) if in_main else None
    child = subprocess.Popen(
        command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    competitor = Competitor(child.pid, limit_seconds)
    try:
        yield competitor
    finally:
        competitor.stopped_early = child.poll() is not None
        child.kill()
        child.wait()
        if in_main:
            signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)


def limit_for(*budgets_seconds: float) -> float:
    """A time limit for the competitor: four times the benchmark's section budgets plus 10 min.

    The budgets bound when measurements start, not when the last one ends, and the bar section
    has none; on a loaded machine a run can take several times its budgets, hence the margin.
    The limit is the backstop: the benchmark kills the competitor when it ends, and the
    competitor stops when the benchmark's process is gone.
    """
    return 4 * sum(budgets_seconds) + 600.0


def wait_until_spinning(competitor: Competitor, timeout: float = 5.0) -> bool:
    """True once the competitor has used CPU time (it is running, not still starting)."""
    import psutil

    deadline = time.monotonic() + timeout
    with contextlib.suppress(psutil.Error):
        process = psutil.Process(competitor.pid)
        while time.monotonic() < deadline:
            if process.cpu_times().user > 0.05:
                return True
            time.sleep(0.01)
    return False
