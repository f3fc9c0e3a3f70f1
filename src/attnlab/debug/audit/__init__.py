"""``attnlab audit``: check a learner's attention module against the lesson's 10-point list.

The learner's code never runs in this process: :func:`run_audit` starts
``python -m attnlab.debug.audit.runner`` with a wall-clock timeout, a CPU-time cap and a memory cap,
and turns whatever happens there (a report, an exception, ``sys.exit``, a crash, a hang) into
one JSON-ready dict. Modules:

* :mod:`~attnlab.debug.audit.runner`: the child process;
  :mod:`~attnlab.debug.audit.loader`: import and build the learner's class;
  :mod:`~attnlab.debug.audit.probe`: find its projections;
* :mod:`~attnlab.debug.audit.record`/:mod:`~attnlab.debug.audit.observe`: watch its forward pass;
* :mod:`~attnlab.debug.audit.context`/:mod:`~attnlab.debug.audit.items`: judge the 10 items;
* :mod:`~attnlab.debug.audit.report`: render the result.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import cast

from attnlab.errors import InputError

KINDS = ("auto", "head", "multihead")
DEFAULT_TIMEOUT = 20.0
DEFAULT_MEMORY_MB = 2048
#: Seconds the child may take to import torch before the learner's timeout starts.
STARTUP_LIMIT = 60.0
#: The line the child prints when its imports are done.
READY = b"attnlab-audit-ready"


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


def _crash(zh: str, en: str, where: str) -> dict[str, object]:
    return {"status": "error", "where": where, "error": {"zh": zh, "en": en}}


def _describe_death(returncode: int, stderr: str) -> dict[str, object]:
    if returncode < 0:
        sig = signal.Signals(-returncode).name
        hint = {
            "SIGSEGV": "segmentation fault",
            "SIGKILL": "killed (memory?)",
            "SIGXCPU": "CPU time limit",
        }.get(sig, sig)
        return _crash(
            f"你的代码让进程崩溃（{sig}，{hint}）",
            f"your code crashed the process ({sig}: {hint})",
            "crash",
        )
    tail = " ".join(stderr.strip().splitlines()[-1:])[:200]
    return _crash(
        f"进程在审计完成前退出（退出码 {returncode}）{tail}",
        f"the process exited with code {returncode} before the audit finished "
        f"(os._exit or a crash?) {tail}".strip(),
        "exit",
    )


def run_audit(
    spec: str,
    kind: str = "auto",
    timeout: float = DEFAULT_TIMEOUT,
    memory_mb: int = DEFAULT_MEMORY_MB,
) -> dict[str, object]:
    """Audit ``FILE.py:NAME`` in a sandboxed child process.

    Args:
        spec: ``FILE.py:NAME``; NAME is a class or function called as the lesson's classes are.
        kind: ``"head"``, ``"multihead"`` or ``"auto"`` (from the constructor's argument names).
        timeout: wall-clock seconds before the child is killed.
        memory_mb: address-space cap of the child.

    Returns:
        ``{"status": "ok", "items": [...], "exit_code": 0|1, ...}`` or
        ``{"status": "error", "error": {"zh", "en"}, "exit_code": 2, ...}``.

    Raises:
        InputError: ``spec``, ``kind`` or ``timeout`` is malformed (nothing was run).
    """
    path, name = parse_target(spec)
    if kind not in KINDS:
        raise InputError(f"--kind must be one of {', '.join(KINDS)}, got {kind!r}")
    if not (isinstance(timeout, int | float) and 0 < timeout <= 600):
        raise InputError(f"--timeout must be between 0 and 600 seconds, got {timeout}")
    start = time.perf_counter()
    result = _spawn(path, name, kind, float(timeout), memory_mb)
    result.update(target=f"{path.name}:{name}", seconds=round(time.perf_counter() - start, 3))
    if result["status"] != "ok":
        result["exit_code"] = 2
    else:
        items = cast(list[dict[str, object]], result.get("items", []))
        failed = any(i["status"] == "FAIL" for i in items)
        result["exit_code"] = 1 if failed else 0
    return result


def _request(path: Path, name: str, kind: str, timeout: float, memory_mb: int) -> str:
    return json.dumps(
        {
            "path": str(path),
            "name": name,
            "kind": kind,
            "memory_mb": memory_mb,
            "cpu_seconds": math.ceil(timeout) + 30,  # a backstop; the wall clock decides
        }
    )


def _spawn(path: Path, name: str, kind: str, timeout: float, memory_mb: int) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="attnlab-audit-") as tmp:
        request, result, errors = (Path(tmp) / n for n in ("request.json", "result.json", "err"))
        request.write_text(_request(path, name, kind, timeout, memory_mb), encoding="utf-8")
        cmd = [sys.executable, "-m", "attnlab.debug.audit.runner", str(request), str(result)]
        with errors.open("wb") as stderr:
            # stderr goes to a file, not a pipe: nothing the learner prints can block the child,
            # and a grandchild holding the file open cannot keep us waiting.
            proc = subprocess.Popen(
                cmd,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=stderr,
                start_new_session=True,
            )
            # The learner's time starts once the child has imported torch (its start-up is ours).
            ready = _wait_ready(proc, STARTUP_LIMIT)
            try:
                proc.wait(timeout=timeout if ready else 1.0)
            except subprocess.TimeoutExpired:
                _kill(proc)
                return _too_slow(timeout) if ready else _no_start()
            finally:
                if proc.stdout is not None:
                    proc.stdout.close()
        if result.is_file():
            return dict(json.loads(result.read_text(encoding="utf-8")))
        return _describe_death(proc.returncode, errors.read_text("utf-8", "replace"))


def _too_slow(timeout: float) -> dict[str, object]:
    return _crash(
        f"你的代码在 {timeout:g} 秒内没有完成（死循环？）",
        f"your code did not finish within {timeout:g} s (an endless loop?)",
        "timeout",
    )


def _no_start() -> dict[str, object]:
    return _crash(
        f"审计进程 {STARTUP_LIMIT:g} 秒内没有启动（机器太忙？）",
        f"the audit process did not start within {STARTUP_LIMIT:g} s (machine too busy?)",
        "startup",
    )


def _wait_ready(proc: subprocess.Popen[bytes], limit: float) -> bool:
    """Block until the child prints its ready line (True), or it dies / ``limit`` passes."""
    if proc.stdout is None:
        return False
    ready, _, _ = select.select([proc.stdout], [], [], limit)
    return bool(ready) and proc.stdout.readline().strip() == READY


def _kill(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)  # the whole session: learner subprocesses too
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=5)
