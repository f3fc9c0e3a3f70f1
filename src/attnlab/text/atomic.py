"""Write a file all at once: the one atomic write every file attnlab writes goes through.

The content goes to a temporary file in the destination's folder, which is renamed over the
destination (``os.replace``, atomic on POSIX): a reader sees the old file or the new one,
never half of one, and a failure leaves no temporary file behind. The new file keeps the
destination's permissions, or gets ``0o666`` under the umask when there was none (a temporary
file is made private by ``mkstemp``; a lesson notebook or a figure is not).

Example::

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "a.txt"
    >>> write_text(path, "hello")
    >>> path.read_text()
    'hello'
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any


def new_file_mode() -> int:
    """``0o666`` under the process's umask: the mode ``open()`` gives a new file."""
    return 0o666 & ~_umask()


def _umask() -> int:
    # Linux (4.7+) says it in /proc/self/status, read without changing it: the web server's
    # other threads never create a file under a borrowed umask. Elsewhere, reading the umask
    # means setting it: it is put straight back.
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_with(
    path: str | os.PathLike[str],
    write: Callable[[IO[Any]], object],
    *,
    binary: bool = False,
    durable: bool = False,
) -> None:
    """Call ``write(f)`` on a temporary file, then rename it over ``path``.

    Args:
        path: the destination; its folder must exist.
        write: fills the open file (text, UTF-8, or bytes when ``binary``).
        binary: open the temporary file in binary mode.
        durable: flush to disk before the rename, and the folder after it (``fsync``), so the
            new file survives a power cut (a backup; not needed for a cache).

    Raises:
        OSError: the folder cannot be written; nothing was left behind.
    """
    target = Path(path)
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        mode = new_file_mode()
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        opened = os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8")
        with opened as f:
            write(f)
            f.flush()
            os.fchmod(f.fileno(), mode)
            if durable:
                os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if durable:
        _sync_folder(target.parent)


def write_text(path: str | os.PathLike[str], text: str, *, durable: bool = False) -> None:
    """Write ``text`` (UTF-8) to ``path`` at once (:func:`write_with`)."""
    write_with(path, lambda f: f.write(text), durable=durable)


def _sync_folder(folder: Path) -> None:
    # The rename is durable once the folder is on disk too (fsync(2), "NOTES").
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    with contextlib.suppress(OSError):
        os.fsync(fd)
    os.close(fd)
