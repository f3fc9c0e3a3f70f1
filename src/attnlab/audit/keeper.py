"""The process between :func:`~attnlab.audit.run_audit` and the two audit processes.

It leaves nothing behind.

``python -P keeper.py REQUEST_JSON`` is run as a script, so it starts in milliseconds: it imports
neither torch nor the auditor, only the standard library, psutil and
:mod:`~attnlab.audit.sandbox`. It

* makes itself a *child subreaper* (``prctl(PR_SET_CHILD_SUBREAPER)``, Linux): a process the
  learner's code starts stays its descendant even after ``setsid`` or a double fork. The flag
  belongs to this short-lived process only, never to the caller of ``run_audit``;
* starts two processes joined by two pipes: the *learner's process*
  (:mod:`~attnlab.audit.learner`, inside bubblewrap where it can run), the only one that
  imports the learner's file, and the *judge* (:mod:`~attnlab.audit.runner`), which
  computes every reference and verdict and writes the result to its stdout;
* times them: start-up (importing torch) may take :data:`STARTUP_LIMIT` s, the audit proper the
  learner's timeout, counted once both are ready;
* caps the memory of the learner's whole process tree (the sum of its processes' resident
  memory, polled every :data:`MEMORY_POLL` s), not of one process;
* reads the learner's stdout and stderr as they come and keeps at most :data:`CAPTURE_BYTES` of
  each (the start and the end), counting the rest;
* when the judge is done (or the time or memory runs out), counts the processes the learner's
  code left running, then freezes (SIGSTOP) every descendant round after round until no new one
  appears, and kills them all: a fork loop cannot outrun the clean-up;
* stops at once, killing everything, on SIGTERM, SIGINT or SIGHUP, or when its stdin reaches
  end-of-file: the process that started it has exited or died.

Its output is one JSON object: what :func:`supervise` returns, ``{"stopped": reason}`` or
``{"error": message}``; a caller that stopped it has stopped reading by then.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from attnlab.audit.processes import (
    CLEANUP_LIMIT,
    Capture,
    become_subreaper,
    bwraps,
    kill_group,
    kill_tree,
    learner_main,
    tree_usage,
)
from attnlab.audit.sandbox import TASKS

#: Bytes of the judge's result read at most (a report is a few KiB).
RESULT_BYTES = 16 * 2**20
#: What the learner's process and the judge write to their ready pipes once their imports are done.
READY = b"attnlab-audit-ready"
#: Seconds the two processes may take to import torch before the learner's timeout starts.
STARTUP_LIMIT = 60.0
#: The judge times the learner's code itself (only its waits for replies count); the keeper
#: stops both after this many times the timeout, should the judge not.
JUDGE_SLACK = 3
#: Seconds between two looks at the learner's process tree's memory.
MEMORY_POLL = 0.05
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
_CHUNK = 1 << 20


class Stop(Exception):
    """Asked to stop: a signal, or the end of stdin (the caller is gone)."""


def _pump(fd: int, captures: dict[int, Capture], poller: select.poll) -> None:
    data = os.read(fd, _CHUNK)
    if data:
        captures[fd].add(data)
    else:
        poller.unregister(fd)
        del captures[fd]


class Watch:
    """The state :func:`watch` leaves: who got ready, whether time or memory ran out."""

    def __init__(self) -> None:
        self.ready: set[str] = set()
        self.timed_out = False
        self.memory: dict[str, int] | None = None
        #: The learner's tree had as many tasks (processes and threads) as it may.
        self.tasks: dict[str, int] | None = None
        self.learner_pid: int | None = None
        #: The learner's process ended before the judge was done: a crash, os._exit, a kill.
        self.learner_died = False


def watch(
    judge: subprocess.Popen[bytes],
    learner: subprocess.Popen[bytes],
    ready: dict[int, str],
    captures: dict[int, Capture],
    timeout: float,
    memory_cap: int,
) -> Watch:
    """Read both processes' output until the judge exits, the time runs out or the learner's
    tree uses more than ``memory_cap`` bytes.

    Raises:
        Stop: a stop signal arrived, or our stdin ended (the caller is gone).
    """
    poller = select.poll()
    for fd in (0, _wake_r, *ready, *captures):
        poller.register(fd, select.POLLIN)
    state, deadline = Watch(), time.monotonic() + STARTUP_LIMIT
    captures, spare = dict(captures), frozenset({judge.pid})
    while judge.poll() is None:
        if learner.poll() is not None:  # it exits on its own only by dying. The judge then
            try:  # reads the end of its pipe and says "gone" at once, unless it had already
                judge.wait(CLEANUP_LIMIT)  # refused the learner's last reply (too big...):
            except subprocess.TimeoutExpired:  # its verdict stands then
                state.learner_died = True
            return state
        if _stops:
            raise Stop(_stops[0])
        left = deadline - time.monotonic()
        if left <= 0:
            state.timed_out = True
            return state
        for fd, _ in poller.poll(1000 * min(left, MEMORY_POLL)):
            if fd == 0 and not os.read(0, 1):
                raise Stop("the caller closed our stdin")
            if fd == _wake_r:
                os.read(_wake_r, 64)  # the loop's next turn raises Stop
            elif fd in ready:
                if os.read(fd, 64).strip() == READY:
                    state.ready.add(ready[fd])
                    if ready[fd] == "learner":
                        state.learner_pid = learner_main(learner.pid)
                    if state.ready == {"learner", "judge"}:  # the judge times the learner's
                        deadline = time.monotonic() + JUDGE_SLACK * timeout + CLEANUP_LIMIT  # code
                poller.unregister(fd)
            elif fd in captures:
                _pump(fd, captures, poller)
        used, tasks = tree_usage(spare)
        if used > memory_cap:
            state.memory = {"used": used, "cap": memory_cap}
            return state
        if tasks >= TASKS:  # the limit it cannot pass (RLIMIT_NPROC), or past it in a plain process
            state.tasks = {"used": tasks, "cap": TASKS}
            return state
    return state


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


def judge_result(captures: dict[int, Capture], stdout: int, stderr: int) -> Any:
    """The JSON the judge wrote, read once it has exited: its pipes are read to their end
    first, since the judge can write its result and exit between two looks of :func:`watch`
    (then nothing of it has been read yet). ``None`` when it wrote no JSON."""
    drain({fd: captures[fd] for fd in (stdout, stderr)})
    try:
        return json.loads(bytes(captures[stdout].head).decode("utf-8"))
    except ValueError:
        return None


def _start(
    request: dict[str, Any], tmp: Path, judge_dir: Path
) -> tuple[Any, Any, dict[int, str], bool, int]:
    """Start the learner's process and the judge, joined by two pipes; their ready pipes by
    fd, and the fd of the request pipe this process keeps open (the learner must not see its
    end before its leftover processes are counted). The judge works in ``judge_dir``, an
    empty folder of its own, and imports nothing from the caller's or the learner's folder
    (:func:`~attnlab.audit.sandbox.judge_command`)."""
    from attnlab.audit import sandbox

    ask_r, ask_w = os.pipe()  # judge -> learner
    answer_r, answer_w = os.pipe()  # learner -> judge
    learner_ready_r, learner_ready_w = os.pipe()
    judge_ready_r, judge_ready_w = os.pipe()
    python = [sys.executable, "-m", "attnlab.audit.learner"]
    limits = [str(request["memory_mb"]), str(request["cpu_seconds"])]
    argv = [*python, str(ask_r), str(answer_w), str(learner_ready_w), *limits]
    cmd, env = sandbox.learner_command(argv, Path(request["path"]), request["mark"], tmp)
    learner = subprocess.Popen(
        cmd,
        env=env,
        cwd=tmp,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        pass_fds=(ask_r, answer_w, learner_ready_w),
        start_new_session=True,
    )
    global _group
    _group = learner.pid  # its own session and group: every process it forks stays in it
    with contextlib.suppress(OSError, KeyError):  # the caller kills the group if we die
        os.write(int(request["group_fd"]), f"{learner.pid}\n".encode())
        os.close(int(request["group_fd"]))
    judge_argv = [json.dumps(request), str(ask_w), str(answer_r), str(judge_ready_w)]
    judge_cmd, judge_env = sandbox.judge_command(["-m", "attnlab.audit.runner", *judge_argv])
    judge = subprocess.Popen(
        judge_cmd,
        env=judge_env,
        cwd=judge_dir,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        pass_fds=(ask_w, answer_r, judge_ready_w),
        start_new_session=True,
    )
    for fd in (ask_r, answer_w, answer_r, learner_ready_w, judge_ready_w):
        os.close(fd)
    ready = {learner_ready_r: "learner", judge_ready_r: "judge"}
    return learner, judge, ready, cmd[0] != sys.executable, ask_w


def supervise(request: dict[str, Any], tmp: Path) -> dict[str, Any]:
    """Run the audit of ``request``: ``{"ready", "timed_out", "memory", "returncode", "result",
    "stdout", "stderr", "judge_stderr", "strays"}``; ``result`` is the judge's JSON or ``None``,
    ``returncode`` the learner's process's (negative: killed by that signal)."""
    from attnlab.audit import sandbox

    learner, judge, ready, in_bwrap, keep = _start(request, tmp, sandbox.judge_tmp(request["mark"]))
    assert learner.stdout and learner.stderr and judge.stdout and judge.stderr  # all pipes
    out, err, said, judge_err = Capture(), Capture(), Capture(RESULT_BYTES, 0), Capture()
    captures = {
        learner.stdout.fileno(): out,
        learner.stderr.fileno(): err,
        judge.stdout.fileno(): said,
        judge.stderr.fileno(): judge_err,
    }
    memory_cap = int(request["memory_mb"]) * 2**20
    state = watch(judge, learner, ready, captures, float(request["timeout"]), memory_cap)
    result = None
    stopped = state.timed_out or state.memory or state.tasks or state.learner_died
    if not stopped and judge.poll() == 0:
        result = judge_result(captures, judge.stdout.fileno(), judge.stderr.fileno())
    if isinstance(result, dict) and result.get("status") == "gone":
        state.learner_died = True
        with contextlib.suppress(subprocess.TimeoutExpired):  # it died on its own: its code
            learner.wait(CLEANUP_LIMIT)
    returncode = learner.poll()
    known = {judge.pid, learner.pid, state.learner_pid or learner.pid, *bwraps(learner.pid)}
    with contextlib.suppress(OSError):  # the learner's process group at once: a fork loop
        os.killpg(learner.pid, signal.SIGSTOP)  # in it stops where it is
    # In bubblewrap every process is a descendant (orphans re-parent to its PID 1); outside,
    # the mark also finds one whose parent died between two looks.
    strays = kill_tree(frozenset(known), None if in_bwrap else request["mark"])
    kill_group(learner.pid)
    os.close(keep)
    judge.wait()
    learner.wait()
    drain(captures)
    if returncode is None:
        returncode = learner.returncode
    if in_bwrap and returncode is not None and returncode > 128:
        returncode = -(returncode - 128)  # bubblewrap passes on a signal death as 128 + signal
    return {
        "ready": sorted(state.ready),
        "timed_out": state.timed_out,
        "memory": state.memory,
        "tasks": state.tasks,
        "learner_died": state.learner_died,
        "returncode": returncode,
        "result": result,
        "stdout": out.summary(),
        "stderr": err.summary(),
        "judge_stderr": judge_err.summary()["text"][-2000:],
        "strays": strays,
        "isolation": sandbox.isolation(),
    }


_group = 0  # the learner's process group, once started
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
    from attnlab.audit.sandbox import judge_tmp, learner_tmp

    request = json.loads(argv[1])
    tmp, judge_dir = learner_tmp(request["mark"]), judge_tmp(request["mark"])
    outcome: dict[str, Any]
    try:
        tmp.mkdir(mode=0o700)
        judge_dir.mkdir(mode=0o700)
        outcome = supervise(request, tmp)
    except Stop as stop:  # if the caller stopped us it is no longer reading: the write fails
        outcome = {"stopped": str(stop)}
    except Exception as exc:  # the keeper's own failure still gives the caller one line
        outcome = {"error": f"{type(exc).__name__}: {exc}"}
    finally:
        kill_group(_group)  # after a stop or a failure: the learner's processes
        kill_tree(mark=request["mark"])
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(judge_dir, ignore_errors=True)
    with contextlib.suppress(OSError):  # the caller may be gone
        sys.stdout.buffer.write(json.dumps(outcome).encode())
        sys.stdout.buffer.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
