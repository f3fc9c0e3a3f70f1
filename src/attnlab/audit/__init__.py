"""``attnlab audit``: check a learner's attention module against the lesson's 10-point list.

The learner's code never runs in this process, nor in the one that judges it. :func:`run_audit`
starts the :mod:`~attnlab.audit.keeper`, which starts two processes: the learner's
(:mod:`~attnlab.audit.learner`, inside a bubblewrap sandbox where one can start, see
:mod:`~attnlab.audit.sandbox`), the only one that imports the learner's file, and the
judge (:mod:`~attnlab.audit.runner`), which sends it inputs over a pipe, gets raw outputs
back and computes every reference and verdict itself. The keeper times both, caps the memory of
the learner's whole process tree, caps what it prints, and kills every process it started when
the audit ends. Whatever happens (a report, an exception, ``sys.exit``, a crash, a hang, a stray
process, a flood of prints, a killed keeper) becomes one JSON-ready dict.

Modules:

* :mod:`~attnlab.audit.keeper`, :mod:`~attnlab.audit.sandbox`: the processes;
  :mod:`~attnlab.audit.wire`: the pipe's messages;
* :mod:`~attnlab.audit.learner`: the learner's side: import, build and run the module
  (:mod:`~attnlab.audit.loader`, :mod:`~attnlab.audit.record`);
* :mod:`~attnlab.audit.remote`: the judge's mirror of the module;
  :mod:`~attnlab.audit.probe`: find its projections (the layers of
  :mod:`~attnlab.audit.layers`, the bare matrices of :mod:`~attnlab.audit.bare`);
  :mod:`~attnlab.audit.observe`: what a forward pass showed;
* :mod:`~attnlab.audit.context`/:mod:`~attnlab.audit.items`: judge the 10 items;
* :mod:`~attnlab.audit.overall`: the output check next to them (equal to the reference
  on the lesson example and on random inputs of several B and T, and deterministic); exit 0
  only when no item FAILs and the output check PASSes, exit 2 when it could not compare
  (:func:`~attnlab.audit.outcome.exit_code`);
* :mod:`~attnlab.audit.stages` (:mod:`~attnlab.audit.stage_seen`,
  :mod:`~attnlab.audit.stage_text`): when the output differs, the first stage of the forward
  that differs from the reference, its item and the learner's line that made it;
* :mod:`~attnlab.audit.report`: render the result.

May import: core, text, inputs, lesson and mistakes. Never imports the learner's file itself:
only :mod:`~attnlab.audit.learner`, in its own sandboxed process, does.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import secrets
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from attnlab.audit.construct import parse_init
from attnlab.audit.keeper import JUDGE_SLACK, STARTUP_LIMIT
from attnlab.audit.outcome import crash, exit_code, internal, result_of
from attnlab.audit.processes import CAPTURE_BYTES, CLEANUP_LIMIT, kill_group, kill_tree
from attnlab.audit.sandbox import judge_tmp, learner_tmp
from attnlab.text.errors import InputError

__all__ = ["CAPTURE_BYTES", "KINDS", "STARTUP_LIMIT", "parse_target", "run_audit"]

KINDS = ("auto", "head", "multihead")
DEFAULT_TIMEOUT = 20.0
DEFAULT_MEMORY_MB = 2048
KEEPER = Path(__file__).with_name("keeper.py")
#: Seconds the keeper gets on top of its own limits before it is presumed stuck.
KEEPER_GRACE = 4 * CLEANUP_LIMIT
#: The keys of the keeper's account of an audit.
_OUTCOME = {"ready", "timed_out", "memory", "learner_died", "returncode", "result", "stdout"}
_OUTCOME |= {"stderr", "judge_stderr", "strays", "isolation"}
#: Seconds between two looks at whether the keeper was stopped (SIGSTOP).
STOPPED_POLL = 0.5


def parse_target(spec: str) -> tuple[Path, str]:
    """``"FILE.py:NAME"`` → (path, name); ``InputError`` names what is wrong."""
    path_text, sep, name = spec.rpartition(":")
    if not sep or not path_text or not name.isidentifier():
        raise InputError(f"expected FILE.py:NAME (e.g. my_head.py:AttentionHead), got {spec!r}")
    path = Path(path_text)
    if path.suffix != ".py":
        raise InputError(f"expected a .py file before ':NAME', got {path_text!r}")
    if not path.is_file():
        raise InputError(f"file not found: {path_text}")
    return path.resolve(), name


def run_audit(
    spec: str,
    kind: str = "auto",
    timeout: float = DEFAULT_TIMEOUT,
    memory_mb: int = DEFAULT_MEMORY_MB,
    init: str | None = None,
    shown: str | None = None,
) -> dict[str, object]:
    """Audit ``FILE.py:NAME`` in sandboxed child processes; nothing they start outlives the call.

    Args:
        spec: ``FILE.py:NAME``; NAME is a class or function, built with each constructor
            parameter set by the meaning of its name (:mod:`~attnlab.audit.construct`).
        kind: ``"head"``, ``"multihead"`` or ``"auto"`` (from the constructor's argument names).
        timeout: wall-clock seconds before the child is killed.
        memory_mb: address-space cap of the child.
        init: ``--init`` text, ``"d_model=C, h=H"``: values for constructor parameters
            whose names the auditor does not know (C, H, D, T or literals).
        shown: the target as the report's header names it; by default ``spec`` as given.

    Returns:
        ``{"status": "ok", "items": [...], "exit_code": 0|1|2, ...}`` (2: the audit could not
        decide, see :func:`~attnlab.audit.outcome.exit_code`) or
        ``{"status": "error", "error": {"zh", "en"}, "exit_code": 2, ...}``; both also carry
        ``"output"`` (what the learner's code printed, at most :data:`CAPTURE_BYTES` kept of
        each stream), ``"stray_processes"`` (how many it left running, now killed) and
        ``"notes"`` (bilingual lines about either, for the report).

    Raises:
        InputError: ``spec``, ``kind``, ``timeout`` or ``init`` is malformed (nothing was run).
        BaseException: whatever interrupts the wait (``KeyboardInterrupt``, an exception raised
            by a signal handler) is re-raised once the child and everything it started are
            dead and the temp folder is removed.
    """
    path, name = parse_target(spec)
    if kind not in KINDS:
        raise InputError(f"--kind must be one of {', '.join(KINDS)}, got {kind!r}")
    if not (isinstance(timeout, int | float) and 0 < timeout <= 600):
        raise InputError(f"--timeout must be between 0 and 600 seconds, got {timeout}")
    try:
        parse_init(init)
    except ValueError as exc:
        raise InputError(str(exc)) from None
    start = time.perf_counter()
    result = _spawn(path, name, kind, float(timeout), memory_mb, init)
    result.update(target=shown or spec.strip(), seconds=round(time.perf_counter() - start, 3))
    result["exit_code"] = exit_code(result)
    return result


def _request(
    path: Path, name: str, kind: str, timeout: float, memory_mb: int, mark: str, init: str | None
) -> str:
    return json.dumps(
        {
            "path": str(path),
            "name": name,
            "kind": kind,
            "init": init,
            "timeout": timeout,
            "memory_mb": memory_mb,
            "cpu_seconds": math.ceil(timeout) + 30,  # a backstop; the wall clock decides
            "mark": mark,
        }
    )


def _spawn(
    path: Path, name: str, kind: str, timeout: float, memory_mb: int, init: str | None = None
) -> dict[str, Any]:
    # The keeper is a script, not ``-m attnlab...``: it must not pay for importing torch.
    # Its stdin is a pipe we never write to: when this process exits or dies, the keeper reads
    # end-of-file and cleans up; its own session keeps a terminal's Ctrl-C for us to handle.
    mark = secrets.token_hex(8)
    request = _request(path, name, kind, timeout, memory_mb, mark, init)
    return _run_keeper(request, mark, timeout)


def _run_keeper(request: str, mark: str, timeout: float) -> dict[str, Any]:
    group_r, group_w = os.pipe()  # the keeper writes the learner's process group here
    try:
        return _keep(json.dumps({**json.loads(request), "group_fd": group_w}), mark, timeout,
                     group_r, group_w)  # fmt: skip
    finally:
        os.close(group_r)


def _learner_group(fd: int) -> int:
    """The learner's process group as the keeper wrote it, or 0."""
    os.set_blocking(fd, False)
    try:
        return int(os.read(fd, 64).split()[0])
    except (OSError, ValueError, IndexError):
        return 0


def _keep(request: str, mark: str, timeout: float, group_r: int, group_w: int) -> dict[str, Any]:
    try:
        keeper = subprocess.Popen(
            [sys.executable, "-P", str(KEEPER), request],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            pass_fds=(group_w,),
            start_new_session=True,
        )
    finally:
        os.close(group_w)  # the keeper has its copy
    try:
        raw = _read_to_end(keeper, STARTUP_LIMIT + JUDGE_SLACK * timeout + KEEPER_GRACE)
    except BaseException:  # KeyboardInterrupt, a signal handler's exception: stop, then re-raise
        _stop(keeper)
        kill_group(_learner_group(group_r))
        sweep(mark)
        raise
    _stop(keeper, ask=raw is None)  # if it answered, it is exiting: close the pipes, reap it
    if raw is None:
        kill_group(_learner_group(group_r))
        sweep(mark)
        return internal("看守进程没有按时结束", "the keeper process did not finish in time")
    try:  # a keeper that did not exit 0 may have been made to say anything: not read
        outcome = json.loads(raw) if keeper.returncode == 0 else None
    except ValueError:  # nothing, or cut short: it died before it could answer
        outcome = None
    if not isinstance(outcome, dict) or not (
        {"stopped", "error"} & outcome.keys() or _OUTCOME <= outcome.keys()
    ):
        kill_group(_learner_group(group_r))
        sweep(mark)
        code = keeper.returncode
        if code < 0:  # killed or stopped by a signal: nobody but the learner's code had cause
            sig = signal.Signals(-code).name
            return crash(
                f"审计的看守进程被 {sig} 结束（你的代码向它发了信号？）；它启动的进程都已结束",
                f"the audit's keeper process was ended by {sig} (did your code signal it?); "
                "every process it started was killed",
                "stopped",
            )
        return internal(f"看守进程退出（退出码 {code}）", f"the keeper exited with code {code}")
    if "stopped" in outcome:  # a signal we did not send: the learner's code, or someone else
        sig = outcome["stopped"]
        return crash(
            f"审计进程被 {sig} 中断（你的代码给父进程发了信号？）",
            f"the audit process was stopped by {sig} (did your code signal its parent process?)",
            "stopped",
        )
    if "error" in outcome:
        return internal(outcome["error"], outcome["error"])
    return result_of(outcome, timeout)


def _read_to_end(keeper: subprocess.Popen[bytes], limit: float) -> bytes | None:
    """All the keeper writes, once it closes its stdout; ``None`` after ``limit`` seconds.
    A keeper stopped by SIGSTOP (only the learner's code has cause to) is killed: its
    answer then ends at once."""
    assert keeper.stdout is not None  # a pipe
    fd, deadline = keeper.stdout.fileno(), time.monotonic() + limit
    poller = select.poll()  # not select(): a long-lived caller may hold fds above 1024
    poller.register(fd, select.POLLIN)
    chunks: list[bytes] = []
    while (left := deadline - time.monotonic()) > 0:
        if poller.poll(1000 * min(left, STOPPED_POLL)):
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
        elif _stopped(keeper.pid):
            keeper.kill()
    return None


def _stopped(pid: int) -> bool:
    import psutil

    try:
        return psutil.Process(pid).status() == psutil.STATUS_STOPPED
    except psutil.Error:
        return False


def sweep(mark: str) -> int:
    """Kill every process that carries the audit's mark in its environment, and remove the
    keeper's temp folder: what is left when the keeper itself was killed (a sandboxed tree dies
    with it; this is for the rest)."""
    shutil.rmtree(learner_tmp(mark), ignore_errors=True)
    shutil.rmtree(judge_tmp(mark), ignore_errors=True)
    return kill_tree(mark=mark, descendants=False)


def _stop(keeper: subprocess.Popen[bytes], ask: bool = True) -> None:
    """Close our pipes and, if ``ask``, SIGTERM the keeper (it kills the learner's processes
    and removes the temp folder), then reap it."""
    for pipe in (keeper.stdin, keeper.stdout):
        if pipe is not None:
            with contextlib.suppress(OSError):
                pipe.close()
    if ask and keeper.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            keeper.send_signal(signal.SIGTERM)
    try:
        keeper.wait(timeout=KEEPER_GRACE)
    except subprocess.TimeoutExpired:
        keeper.kill()
        keeper.wait()
