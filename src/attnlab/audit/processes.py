"""The keeper's tools for processes and their output: a capped capture of a stream, the child
subreaper flag, and finding, measuring, freezing and killing this process's descendants.

Standard library, plus psutil imported where it is used: the keeper starts in milliseconds.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import time
from typing import Any

#: Bytes kept of each of the learner's output streams; the rest is counted and dropped.
CAPTURE_BYTES = 2**20
#: Of those, the bytes kept from the end of the stream (where a crash's last words are).
TAIL_BYTES = 64 * 1024
#: Seconds to kill every leftover process and read what is left in the pipes.
CLEANUP_LIMIT = 5.0
PR_SET_CHILD_SUBREAPER = 36
PR_SET_PDEATHSIG = 1


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


def die_with_parent(signum: int) -> None:
    """Ask Linux to send ``signum`` to this process when its parent dies, even by SIGKILL (no
    effect elsewhere)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signum, 0, 0, 0)


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


def _living(spare: frozenset[int] = frozenset()) -> list[Any]:
    """This process's living descendants, but those in ``spare``."""
    import psutil  # here, not at the top: ``run_audit`` imports this module for its constants

    found = []
    for proc in psutil.Process().children(recursive=True):
        with contextlib.suppress(psutil.Error):
            if proc.pid not in spare and proc.status() != psutil.STATUS_ZOMBIE:
                found.append(proc)
    return found


def tree_usage(spare: frozenset[int]) -> tuple[int, int]:
    """``(bytes, tasks)`` of every descendant but ``spare`` (the judge): the learner's whole
    tree. Bytes are resident memory plus the memory-backed files its processes hold open
    (memfds, ``/dev/shm``: neither is resident memory of anyone once unmapped), each file
    counted once; tasks are processes and threads."""
    import psutil

    total, tasks, seen = 0, 0, set[tuple[int, int]]()
    for proc in _living(spare):
        with contextlib.suppress(psutil.Error):
            total += proc.memory_info().rss
            tasks += proc.num_threads()
        total += _held(proc.pid, seen)
    return total, tasks


def _held(pid: int, seen: set[tuple[int, int]]) -> int:
    """Bytes of the memfds and ``/dev/shm`` files process ``pid`` holds open, but those in
    ``seen`` (``(device, inode)``, updated)."""
    total = 0
    folder = f"/proc/{pid}/fd"
    with contextlib.suppress(OSError):
        for fd in os.listdir(folder):
            with contextlib.suppress(OSError):
                link = os.readlink(f"{folder}/{fd}")
                if link.startswith(("/memfd:", "/dev/shm/")):
                    st = os.stat(f"{folder}/{fd}")
                    if (st.st_dev, st.st_ino) not in seen:
                        seen.add((st.st_dev, st.st_ino))
                        total += st.st_blocks * 512
    return total


def _marked(mark: str) -> list[Any]:
    """Living processes anywhere whose environment carries the audit's ``mark``: the learner's
    processes, also one whose parent died between two looks (it is nobody's descendant then)."""
    import psutil

    from attnlab.audit.sandbox import MARK

    found = []
    for proc in psutil.process_iter():
        with contextlib.suppress(psutil.Error):
            if proc.status() != psutil.STATUS_ZOMBIE and proc.environ().get(MARK) == mark:
                found.append(proc)
    return found


def kill_tree(
    known: frozenset[int] = frozenset(), mark: str | None = None, descendants: bool = True
) -> int:
    """Freeze every descendant (when ``descendants``) and every process carrying ``mark``
    round after round until
    three rounds in a row find none alive and unfrozen (a stopped process cannot fork), SIGKILL
    them and reap; how many there were, but those in ``known``."""
    import psutil

    frozen: dict[int, Any] = {}
    quiet, deadline = 0, time.monotonic() + CLEANUP_LIMIT
    while quiet < 3 and time.monotonic() < deadline:
        _reap()  # a killed child is a zombie until reaped; its children then re-parent to us
        found = [*(_living() if descendants else []), *(_marked(mark) if mark else [])]
        alive = {p.pid: p for p in found}
        fresh = [p for pid, p in alive.items() if pid not in frozen]
        for proc in fresh:
            with contextlib.suppress(psutil.Error):
                proc.suspend()
                frozen[proc.pid] = proc
        if not fresh:  # all frozen: none can start another now
            for proc in alive.values():
                with contextlib.suppress(psutil.Error):
                    proc.kill()
        quiet = 0 if alive else quiet + 1
        time.sleep(0.005)
    _reap()
    return len(set(frozen) - known)


def kill_group(pgid: int) -> None:
    """SIGKILL the process group ``pgid`` until it is empty: one signal reaches every member at
    once, and the kernel lets no fork in progress escape it (a fork loop dies here)."""
    import signal

    deadline = time.monotonic() + CLEANUP_LIMIT
    while pgid > 1 and time.monotonic() < deadline:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            return
        time.sleep(0.002)
        _reap()


def learner_main(outer: int) -> int | None:
    """The learner's Python process: ``outer`` itself, or its one Python descendant in
    bubblewrap (looked up when it reports ready, before any learner code ran)."""
    import psutil

    with contextlib.suppress(psutil.Error):
        for proc in psutil.Process(outer).children(recursive=True):
            if proc.cmdline()[1:3] == ["-m", "attnlab.audit.learner"]:
                return proc.pid
    return outer


def bwraps(outer: int) -> list[int]:
    """The bubblewrap processes under ``outer`` (its own PID-1 reaper), already gone or not."""
    import psutil

    found = []
    with contextlib.suppress(psutil.Error):
        for proc in psutil.Process(outer).children(recursive=True):
            with contextlib.suppress(psutil.Error):
                if proc.name() == "bwrap":
                    found.append(proc.pid)
    return found
