"""The process between :func:`~attnlab.debug.audit.run_audit` and the learner's code.

It leaves nothing behind.

``python -P keeper.py REQUEST_JSON`` is run as a script, so it starts in milliseconds: it imports
neither torch nor attnlab, only the standard library and psutil. It

* makes itself a *child subreaper* (``prctl(PR_SET_CHILD_SUBREAPER)``, Linux): a process the
  learner's code starts stays its descendant even after ``setsid`` or a double fork, so when
  the audit ends (a result, a crash, a timeout, a stop) all of them are found and killed. The
  flag belongs to this short-lived process only, never to the caller of ``run_audit``;
* starts the runner (``python -m attnlab.debug.audit.runner``) in its own session and times it: the
  start-up (importing torch) may take :data:`STARTUP_LIMIT` s, the learner's code its timeout;
* reads the runner's stdout and stderr as they come and keeps at most :data:`CAPTURE_BYTES` of
  each (the start and the end), counting the rest: what the learner prints never reaches a
  disk, never fills memory and never blocks the runner on a full pipe;
* owns the temp folder (request and result files) and removes it however the audit ends;
* stops at once, killing everything and removing the folder, on SIGTERM, SIGINT or SIGHUP,
  or when its stdin reaches end-of-file: the process that started it has exited or died.

Its output is one JSON object: what :func:`supervise` returns, ``{"stopped": reason}`` or
``{"error": message}``; a caller that stopped it has stopped reading by then.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

#: Bytes kept of each of the learner's output streams; the rest is counted and dropped.
CAPTURE_BYTES = 2**20
#: Of those, the bytes kept from the end of the stream (where a crash's last words are).
TAIL_BYTES = 64 * 1024
#: What the runner writes to its ready pipe once its imports are done.
READY = b"attnlab-audit-ready"
#: Seconds the runner may take to import torch before the learner's timeout starts.
STARTUP_LIMIT = 60.0
#: Seconds to kill every leftover process and read what is left in the pipes.
CLEANUP_LIMIT = 5.0
PR_SET_CHILD_SUBREAPER = 36
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
_CHUNK = 1 << 20


class Stop(Exception):
    """Asked to stop: a signal, or the end of stdin (the caller is gone)."""


class Capture:
    """The first ``limit - tail`` and the last ``tail`` bytes of a stream, and its length."""

    def __init__(self, limit: int = CAPTURE_BYTES, tail: int = TAIL_BYTES) -> None:
        self.head_room, self.tail_room = limit - tail, tail
        self.head, self.tail, self.total = bytearray(), bytearray(), 0

    def add(self, data: bytes) -> None:
        self.total += len(data)
        room = self.head_room - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data[-self.tail_room :]
            del self.tail[: -self.tail_room]

    def summary(self) -> dict[str, Any]:
        """``{"text", "bytes", "dropped"}``: the kept text (a marker where bytes were dropped)."""
        dropped = self.total - len(self.head) - len(self.tail)
        gap = f"\n[... {dropped} bytes dropped ...]\n".encode() if dropped else b""
        text = (bytes(self.head) + gap + bytes(self.tail)).decode("utf-8", "replace")
        return {"text": text, "bytes": self.total, "dropped": dropped}


def become_subreaper() -> bool:
    """Orphaned descendants re-parent to this process instead of init (Linux only)."""
    try:
        return ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):  # not Linux: new-session children cannot be found
        return False


def _reap() -> None:
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass


def kill_tree() -> int:
    """SIGKILL every descendant, round after round, until none is left; how many there were."""
    import psutil  # here, not at the top: ``run_audit`` imports this module for its constants

    me, killed = psutil.Process(), set()
    deadline = time.monotonic() + CLEANUP_LIMIT
    while time.monotonic() < deadline:
        _reap()  # a killed child is a zombie until reaped; its children then re-parent to us
        alive = []
        for proc in me.children(recursive=True):
            with contextlib.suppress(psutil.Error):
                if proc.status() != psutil.STATUS_ZOMBIE:
                    alive.append(proc)
        if not alive:
            break
        for proc in alive:
            with contextlib.suppress(psutil.Error):
                proc.kill()
                killed.add(proc.pid)
        time.sleep(0.005)
    _reap()
    return len(killed)


def _pump(fd: int, captures: dict[int, Capture], poller: select.poll) -> None:
    data = os.read(fd, _CHUNK)
    if data:
        captures[fd].add(data)
    else:
        poller.unregister(fd)
        del captures[fd]


def watch(
    proc: subprocess.Popen[bytes], ready_fd: int, captures: dict[int, Capture], timeout: float
) -> tuple[bool, bool]:
    """Read the runner's output until it exits: (it got ready, it ran out of time).

    Raises:
        Stop: a stop signal arrived, or our stdin ended (the caller is gone).
    """
    poller = select.poll()
    pidfd = os.pidfd_open(proc.pid) if hasattr(os, "pidfd_open") else -1  # readable at exit
    for fd in (0, _wake_r, ready_fd, pidfd, *captures):
        if fd >= 0:
            poller.register(fd, select.POLLIN)
    ready, deadline = False, time.monotonic() + STARTUP_LIMIT
    captures = dict(captures)
    while proc.poll() is None:
        if _stops:
            raise Stop(_stops[0])
        left = deadline - time.monotonic()
        if left <= 0:
            return ready, True
        for fd, _ in poller.poll(1000 * (left if pidfd >= 0 else min(left, 0.05))):
            if fd == 0 and not os.read(0, 1):
                raise Stop("the caller closed our stdin")
            if fd == _wake_r:
                os.read(_wake_r, 64)  # the loop's next turn raises Stop
            elif fd == ready_fd:
                if os.read(ready_fd, 64).strip() == READY and not ready:
                    ready, deadline = True, time.monotonic() + timeout
                poller.unregister(ready_fd)
            elif fd in captures:
                _pump(fd, captures, poller)
    return ready, False


def drain(captures: dict[int, Capture]) -> None:
    """Read what is left in the pipes (every writer is dead, so each ends soon)."""
    poller = select.poll()
    captures = dict(captures)
    for fd in captures:
        poller.register(fd, select.POLLIN)
    deadline = time.monotonic() + CLEANUP_LIMIT
    while captures and (left := deadline - time.monotonic()) > 0:
        for fd, _ in poller.poll(1000 * left):
            _pump(fd, captures, poller)


def supervise(request: dict[str, Any], tmp: Path) -> dict[str, Any]:
    """Run the runner on ``request``; ``{"ready", "timed_out", "returncode", "result", "stdout",
    "stderr", "strays"}`` where ``result`` is the runner's JSON or ``None``."""
    request_file, result_file = tmp / "request.json", tmp / "result.json"
    request_file.write_text(json.dumps(request), encoding="utf-8")
    ready_r, ready_w = os.pipe()
    runner = ["-m", "attnlab.debug.audit.runner", str(request_file), str(result_file), str(ready_w)]
    proc = subprocess.Popen(
        [sys.executable, *runner],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        pass_fds=(ready_w,),
        start_new_session=True,
    )
    os.close(ready_w)
    assert proc.stdout is not None and proc.stderr is not None  # both are pipes
    out, err = Capture(), Capture()
    captures = {proc.stdout.fileno(): out, proc.stderr.fileno(): err}
    ready, timed_out = watch(proc, ready_r, captures, float(request["timeout"]))
    if timed_out:
        proc.kill()
    returncode = proc.wait()
    strays = kill_tree()
    drain(captures)
    done = result_file.is_file() and not timed_out
    return {
        "ready": ready,
        "timed_out": timed_out,
        "returncode": returncode,
        "result": json.loads(result_file.read_text(encoding="utf-8")) if done else None,
        "stdout": out.summary(),
        "stderr": err.summary(),
        "strays": strays,
    }


_stops: list[str] = []
_wake_r = -1


def _on_stop(signum: int, _frame: object) -> None:
    # Only noted here: :func:`watch` raises Stop at a point of its choosing (the wake-up pipe
    # ends its wait), so no exception can land in the middle of the clean-up.
    _stops.append(signal.Signals(signum).name)


def main(argv: list[str]) -> int:
    global _wake_r
    _wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    for sig in STOP_SIGNALS:
        signal.signal(sig, _on_stop)
    become_subreaper()
    tmp = Path(tempfile.mkdtemp(prefix="attnlab-audit-"))
    outcome: dict[str, Any]
    try:
        outcome = supervise(json.loads(argv[1]), tmp)
    except Stop as stop:  # if the caller stopped us it is no longer reading: the write fails
        outcome = {"stopped": str(stop)}
    except Exception as exc:  # the keeper's own failure still gives the caller one line
        outcome = {"error": f"{type(exc).__name__}: {exc}"}
    finally:
        kill_tree()  # after a stop or a failure this is what ends the learner's processes
        shutil.rmtree(tmp, ignore_errors=True)
    with contextlib.suppress(OSError):  # the caller may be gone
        sys.stdout.buffer.write(json.dumps(outcome).encode())
        sys.stdout.buffer.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
