"""Progress export files on disk: read one within bounds, write one atomically.

* :func:`read_export` reads only a regular file (a FIFO or ``/dev/zero`` is refused before it
  is opened, so it can never hang; a symbolic link is refused, never followed), at most
  :data:`MAX_FILE_BYTES` + 1 bytes of it, as UTF-8 JSON with bounded integers and nesting;
  anything else is one :class:`InputError` line in both languages
  (:data:`attnlab.progress.store_errors.FILE_TEXT`).
* :func:`write_json_atomic` writes a temporary file next to the target, flushes it and renames
  it over a regular file or a new name, never over a symbolic link, a device, and never to the
  progress database or a name SQLite keeps next to it (``-journal``, ``-wal``, ``-shm``).

What the JSON must contain is :mod:`attnlab.progress.exchange`'s job.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from attnlab.inputs import safe_load
from attnlab.progress.store_errors import FILE_KINDS, FILE_NOUNS, file_error
from attnlab.text import atomic

MAX_FILE_BYTES = 10 * 1024 * 1024
#: Every number in an export is a section (0-19) or the version; 18 digits is plenty.
MAX_INT_DIGITS = 18
_KINDS = ((stat.S_ISDIR, "dir"), (stat.S_ISFIFO, "fifo"), (stat.S_ISCHR, "chr"),
          (stat.S_ISBLK, "blk"), (stat.S_ISSOCK, "sock"), (stat.S_ISLNK, "lnk"))  # fmt: skip


class _Refused(ValueError):
    """A JSON value :func:`read_export` will not build (raised from the parser's hooks):
    a ``FILE_TEXT`` key and its fields."""

    def __init__(self, key: str, **fields: object) -> None:
        super().__init__(key)
        self.key, self.fields = key, fields


def _kind(mode: int) -> dict[str, str]:
    key = next((name for test, name in _KINDS if test(mode)), "other")
    return {lang: FILE_KINDS[lang][key] for lang in FILE_KINDS}


def _bounded_int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_INT_DIGITS:
        raise _Refused("big_int", n=MAX_INT_DIGITS, digits=digits)
    return int(text)


def _no_constant(name: str) -> object:
    raise _Refused("constant", name=name)


def _read_bytes(p: Path, what: dict[str, str]) -> bytes:
    try:
        # Look before opening: opening a FIFO waits for a writer. lstat, not stat: a symbolic
        # link is refused, not followed.
        mode = os.lstat(p).st_mode
    except FileNotFoundError:
        raise file_error("missing", p=p, what=what) from None
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the path
        found = getattr(exc, "strerror", None) or exc
        raise file_error("unreadable", p=p, what=what, found=found) from None
    if not stat.S_ISREG(mode):
        raise file_error("not_regular", p=p, what=what, found=_kind(mode))
    try:  # O_NOFOLLOW: a link put in its place after the look is refused as well (ELOOP)
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_NOFOLLOW)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise file_error("not_regular", p=p, what=what, found=_kind(stat.S_IFLNK)) from None
        raise file_error("unreadable", p=p, what=what, found=exc.strerror) from None
    with os.fdopen(fd, "rb") as fh:
        now = os.fstat(fh.fileno()).st_mode
        if not stat.S_ISREG(now):  # replaced between the look and the open
            raise file_error("not_regular", p=p, what=what, found=_kind(now))
        data = fh.read(MAX_FILE_BYTES + 1)  # at most one byte more than allowed
    if len(data) > MAX_FILE_BYTES:
        raise file_error("too_large", p=p, what=what, n=MAX_FILE_BYTES)
    return data


def read_export(path: str | os.PathLike[str], kind: str = "progress") -> object:
    """The JSON in ``path``, a ``kind`` file (a key of
    :data:`~attnlab.progress.store_errors.FILE_NOUNS`: ``"progress"`` or ``"class"``).

    Raises:
        InputError: one line naming the path: missing, unreadable, a symbolic link or not a
            regular file, too large, not UTF-8 (a leading byte-order mark is skipped), not
            JSON, nested too deep, holding a huge integer or an object naming a key twice.
    """
    p = Path(path)
    data = _read_bytes(p, FILE_NOUNS[kind])
    try:  # the rules of every learner file: a byte-order mark is skipped, a key named once
        text = safe_load.utf8_text(data)
        return json.loads(
            text,
            parse_int=_bounded_int,
            parse_constant=_no_constant,
            object_pairs_hook=safe_load.unique_keys,
        )
    except safe_load.NotUtf8 as exc:
        raise file_error("not_utf8", p=p, byte=exc.byte, offset=exc.offset) from None
    except safe_load.DuplicateKey as exc:
        raise file_error("dup_key", p=p, key=safe_load.shown_key(exc.key)) from None
    except _Refused as exc:
        raise file_error(exc.key, p=p, **exc.fields) from None
    except json.JSONDecodeError as exc:
        raise file_error("not_json", p=p, msg=exc) from None
    except RecursionError:
        raise file_error("deep", p=p) from None


def _refuse_target(target: Path, keep: Sequence[Path]) -> int | None:
    """The mode of the regular file at ``target`` (None if there is none); else InputError."""
    try:
        info = os.lstat(target)
    except FileNotFoundError:
        _refuse_protected(target, None, keep)
        return None
    if stat.S_ISLNK(info.st_mode):
        raise file_error("symlink", p=target, to=os.readlink(target))
    if not stat.S_ISREG(info.st_mode):
        raise file_error("target", p=target, found=_kind(info.st_mode))
    _refuse_protected(target, info, keep)
    return stat.S_IMODE(info.st_mode)


def _refuse_protected(target: Path, info: os.stat_result | None, keep: Sequence[Path]) -> None:
    """InputError if ``target`` is one of ``keep`` (by folder and name, whether it exists or
    not, however the folder is spelt) or a hard link to one."""
    for protected in keep:
        if _same_file(target, info, protected):
            raise file_error("database", p=target, db=protected)


def _same_file(target: Path, info: os.stat_result | None, protected: Path) -> bool:
    with contextlib.suppress(OSError):  # the file itself, or a hard link to it
        if info is not None and os.path.samestat(info, os.stat(protected)):
            return True
    with contextlib.suppress(OSError):  # a folder that does not exist holds nothing of ours
        return target.name == protected.name and os.path.samefile(target.parent, protected.parent)
    return False


def write_json_atomic(
    path: str | os.PathLike[str], data: object, keep: Sequence[Path] = ()
) -> None:
    """Write ``data`` as JSON to ``path`` all at once: a temporary file in the same folder,
    flushed to disk, then renamed over the target (readers never see half a file).

    Args:
        path: a regular file (its permissions are kept) or a new name.
        data: what to write.
        keep: files never to write, existing or not (the progress database and the files
            SQLite keeps next to it, :func:`attnlab.progress.access.own_files`).

    Raises:
        InputError: ``path`` is a symbolic link, a directory, a device, a FIFO, one of
            ``keep`` or a hard link to one; nothing was written.
        OSError: the folder cannot be written (the temporary file is removed).
    """
    target = Path(path)
    _refuse_target(target, keep)

    def dump(fh: IO[str]) -> None:
        json.dump(data, fh, ensure_ascii=False, indent=2)
        fh.write("\n")

    atomic.write_with(target, dump, durable=True)
