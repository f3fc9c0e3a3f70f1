"""Whether the progress file may be written, and how long to wait for another program's lock.

Only permissions are looked at (``os.access``, ``stat``): nothing here opens the database or
its ``-wal``/``-shm`` files, which only SQLite may do (see :mod:`attnlab.progress.db`).
"""

from __future__ import annotations

import math
import os
from pathlib import Path

from attnlab.progress.store_errors import StoreError

BUSY_TIMEOUT_ENV = "ATTNLAB_BUSY_TIMEOUT"
BUSY_TIMEOUT_S = 15.0


def busy_timeout(seconds: float | str | None = None) -> float:
    """How long to wait for another program's lock: ``seconds``, else ``$ATTNLAB_BUSY_TIMEOUT``,
    else 15 s. ``ValueError`` unless a number from 0 to 3600."""
    raw = seconds if seconds is not None else os.environ.get(BUSY_TIMEOUT_ENV) or None
    if raw is None:
        return BUSY_TIMEOUT_S
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not 0 <= value <= 3600:  # also refuses NaN
        source = BUSY_TIMEOUT_ENV if seconds is None else "busy timeout"
        raise ValueError(f"{source} must be a number of seconds from 0 to 3600, got {raw!r}")
    return value


def _writable(path: Path) -> bool:
    # The effective ids, as the kernel checks them on open (root passes unless the mount is
    # read-only). Only a look at the permissions: nothing here opens the database file.
    return os.access(path, os.W_OK, effective_ids=os.access in os.supports_effective_ids)


def why_read_only(path: Path) -> tuple[str, str] | None:
    """Why ``path`` cannot be written (English, Chinese), or None when it can.

    Raises:
        StoreError: the file does not exist and cannot be created.
    """
    folder = path.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(
            f"{path}: cannot create its folder ({exc.strerror or exc})",
            f"{path}：无法创建所在文件夹（{exc.strerror or exc}）",
        ) from None
    folder_ok = _writable(folder)
    if not path.exists():
        if folder_ok:
            return None
        raise StoreError(
            f"{path} does not exist and its folder {folder} is read-only, so it cannot be "
            "created; choose another folder with --data-dir or ATTNLAB_DATA_DIR",
            f"{path} 不存在，且所在文件夹 {folder} 是只读的，无法创建；请用 --data-dir 或 "
            "ATTNLAB_DATA_DIR 换一个文件夹",
        )
    if not _writable(path):
        return "the file's permissions do not allow writing", "文件权限不允许写入"
    if not folder_ok:  # SQLite creates and deletes the -wal and -shm files next to it
        return (f"its folder {folder} is read-only", f"所在文件夹 {folder} 是只读的")
    for side in (sidecar(path, "-wal"), sidecar(path, "-shm")):
        if _side_read_only(side):
            return f"{side.name} is read-only", f"{side.name} 是只读的"
    return None


def _side_read_only(side: Path, looks: int = 5) -> bool:
    """Whether the side file ``side`` exists and cannot be written. Other connections' opens
    and closes create and delete it at any moment (so access() may look at a file that is gone
    or just recreated): only a file refused at every one of ``looks`` looks is read-only."""
    return all(side.exists() and not _writable(side) for _ in range(looks))


def sidecar(path: Path, suffix: str) -> Path:
    """The ``-wal`` or ``-shm`` file SQLite keeps next to ``path``."""
    return path.with_name(path.name + suffix)


def own_files(path: Path) -> tuple[Path, ...]:
    """The database ``path`` and every file SQLite may create, read or delete next to it
    (https://sqlite.org/tempfiles.html): nothing else may ever write these names."""
    return (path, *(sidecar(path, suffix) for suffix in ("-journal", "-wal", "-shm")))
