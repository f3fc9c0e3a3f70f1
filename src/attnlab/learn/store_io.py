"""Progress export files on disk: read one within bounds, write one atomically.

* :func:`read_export` reads only a regular file (a FIFO or ``/dev/zero`` is refused before it
  is opened, so it can never hang), at most :data:`MAX_FILE_BYTES` + 1 bytes of it, as UTF-8
  JSON with bounded integers and nesting; anything else is one :class:`InputError` line.
* :func:`write_json_atomic` writes a temporary file next to the target, flushes it and renames
  it over a regular file or a new name, never over a symbolic link, a device or the progress
  database itself.

What the JSON must contain is :mod:`attnlab.learn.store_file`'s job.
"""

from __future__ import annotations

import json
import os
import stat
import tempfile
from collections.abc import Sequence
from pathlib import Path

from attnlab.errors import InputError

MAX_FILE_BYTES = 10 * 1024 * 1024
#: Every number in an export is a section (0-19) or the version; 18 digits is plenty.
MAX_INT_DIGITS = 18
_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"), (stat.S_ISLNK, "a symbolic link"))  # fmt: skip


class _Refused(ValueError):
    """A JSON value :func:`read_export` will not build (raised from the parser's hooks)."""


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def _bounded_int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_INT_DIGITS:
        raise _Refused(f"integers of at most {MAX_INT_DIGITS} digits, found one of {digits}")
    return int(text)


def _no_constant(name: str) -> object:
    raise _Refused(f"JSON numbers, found {name} (not JSON)")


def _read_bytes(p: Path) -> bytes:
    try:
        mode = os.stat(p).st_mode  # look before opening: opening a FIFO waits for a writer
    except FileNotFoundError:
        raise InputError(f"{p}: expected a progress file, found no such file") from None
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the path
        found = getattr(exc, "strerror", None) or exc
        raise InputError(f"{p}: expected a readable progress file, found {found}") from None
    if not stat.S_ISREG(mode):
        raise InputError(f"{p}: expected a progress file, found {_kind(mode)}")
    try:
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise InputError(f"{p}: expected a readable progress file, found {exc.strerror}") from None
    with os.fdopen(fd, "rb") as fh:
        now = os.fstat(fh.fileno()).st_mode
        if not stat.S_ISREG(now):  # replaced between the look and the open
            raise InputError(f"{p}: expected a progress file, found {_kind(now)}")
        data = fh.read(MAX_FILE_BYTES + 1)  # at most one byte more than allowed
    if len(data) > MAX_FILE_BYTES:
        raise InputError(
            f"{p}: expected a progress file of at most {MAX_FILE_BYTES} bytes, found more"
        )
    return data


def read_export(path: str | os.PathLike[str]) -> object:
    """The JSON in ``path``.

    Raises:
        InputError: one line naming the path: missing, unreadable, not a regular file, too
            large, not UTF-8, not JSON, nested too deep or holding a huge integer.
    """
    p = Path(path)
    data = _read_bytes(p)
    try:
        text = data.decode("utf-8-sig")  # a byte-order mark from a Windows editor is fine
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{p}: expected UTF-8 text, found byte 0x{data[exc.start]:02x} at offset {exc.start}"
        ) from None
    try:
        return json.loads(text, parse_int=_bounded_int, parse_constant=_no_constant)
    except _Refused as exc:
        raise InputError(f"{p}: expected {exc}") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{p}: expected JSON, found invalid content ({exc})") from None
    except RecursionError:
        raise InputError(f"{p}: expected JSON nested a few levels deep, found far deeper") from None


def _refuse_target(target: Path, keep: Sequence[Path]) -> int | None:
    """The mode of the regular file at ``target`` (None if there is none); else InputError."""
    try:
        info = os.lstat(target)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(info.st_mode):
        raise InputError(
            f"{target}: expected a regular file or a new name, found a symbolic link to "
            f"{os.readlink(target)!r}; not replaced (give the real path)"
        )
    if not stat.S_ISREG(info.st_mode):
        raise InputError(
            f"{target}: expected a regular file or a new name, found {_kind(info.st_mode)}; "
            "not replaced"
        )
    for protected in keep:
        try:
            same = os.path.samestat(info, os.stat(protected))
        except OSError:
            continue
        if same:
            raise InputError(
                f"{target}: expected a file for the export, found the progress database "
                f"{protected} itself; not replaced"
            )
    return stat.S_IMODE(info.st_mode)


def _new_file_mode() -> int:
    mask = os.umask(0o022)  # reading the umask means setting it; put it straight back
    os.umask(mask)
    return 0o666 & ~mask


def write_json_atomic(
    path: str | os.PathLike[str], data: object, keep: Sequence[Path] = ()
) -> None:
    """Write ``data`` as JSON to ``path`` all at once: a temporary file in the same folder,
    flushed to disk, then renamed over the target (readers never see half a file).

    Args:
        path: a regular file (its permissions are kept) or a new name.
        data: what to write.
        keep: files never to replace (the progress database and its ``-wal``/``-shm``).

    Raises:
        InputError: ``path`` is a symbolic link, a directory, a device, a FIFO or one of
            ``keep``; nothing was written.
        OSError: the folder cannot be written (the temporary file is removed).
    """
    target = Path(path)
    mode = _refuse_target(target, keep)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, ensure_ascii=False, indent=2)
            fh.write("\n")
            fh.flush()
            os.fchmod(fh.fileno(), _new_file_mode() if mode is None else mode)
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _sync_folder(target.parent)


def _sync_folder(folder: Path) -> None:
    # The rename is durable once the folder is on disk too (fsync(2), "NOTES").
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
