"""Why the progress database cannot be used right now, said in one line in Chinese and English.

* :class:`StoreError`: the file is not ours, is corrupted, is too new, or SQLite failed on it.
* :class:`StoreBusy`: another program held the write lock longer than the busy timeout.
* :class:`StoreReadOnly`: the file or its folder cannot be written; reading still works.

Every message names the file's path; the front ends print it (CLI, exit 2) or show it on an
error page in the page's language (web: 503 when busy, 409 when read-only).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from attnlab.i18n import pick

# Primary SQLite result codes (https://sqlite.org/rescode.html); Python 3.11 exposes the
# extended code as ``sqlite_errorcode``, whose low byte is the primary one.
SQLITE_BUSY, SQLITE_LOCKED, SQLITE_READONLY, SQLITE_CORRUPT = 5, 6, 8, 11
SQLITE_CANTOPEN, SQLITE_NOTADB = 14, 26


class StoreError(RuntimeError):
    """The progress database cannot be used; ``str()`` is the English line, :meth:`text` picks.

    Args:
        en: the message in English (names the path).
        zh: the same message in Chinese (default: the English one).
    """

    def __init__(self, en: str, zh: str | None = None) -> None:
        super().__init__(en)
        self.en, self.zh = en, zh or en

    def text(self, lang: str) -> str:
        """The message in ``lang`` ("zh" or "en")."""
        return pick(lang, self.zh, self.en)


class StoreBusy(StoreError):
    """Another program kept the database locked longer than ``seconds``; nothing was saved."""

    def __init__(self, path: Path, seconds: float) -> None:
        super().__init__(
            f"{path} is busy: another program held its lock for more than {seconds:g} s; "
            "nothing was saved, try again in a moment",
            f"{path} 正被另一个程序占用（锁已持续超过 {seconds:g} 秒）；本次没有保存，请稍后再试",
        )


class StoreReadOnly(StoreError):
    """The database (or its folder) cannot be written: reading works, saving is refused."""

    def __init__(self, path: Path, why_en: str, why_zh: str) -> None:
        super().__init__(
            f"{path} is read-only ({why_en}); nothing was saved: make it writable or choose "
            "another folder with --data-dir or ATTNLAB_DATA_DIR",
            f"{path} 是只读的（{why_zh}）；没有保存任何内容：请让它可写，或用 --data-dir 或 "
            "ATTNLAB_DATA_DIR 换一个文件夹",
        )
        self.why_en, self.why_zh = why_en, why_zh


def not_ours(path: Path, detail: str) -> StoreError:
    """The file is not an SQLite database at all."""
    return StoreError(
        f"{path} cannot be read as a database ({detail}): it is not an attnlab progress "
        "database; left as it is",
        f"{path} 无法作为数据库读取（{detail}）：它不是 attnlab 的进度数据库；未做任何改动",
    )


def corrupted(path: Path, detail: str) -> StoreError:
    """SQLite found the file damaged."""
    return StoreError(
        f"{path} is corrupted ({detail}); left as it is, move it away to start over",
        f"{path} 已损坏（{detail}）；未做任何改动，把它移走即可重新开始",
    )


def translate(exc: sqlite3.Error, path: Path, seconds: float) -> StoreError:
    """The :class:`StoreError` for an error SQLite raised while using ``path``."""
    code = (getattr(exc, "sqlite_errorcode", 0) or 0) & 0xFF
    if code in (SQLITE_BUSY, SQLITE_LOCKED):
        return StoreBusy(path, seconds)
    if code == SQLITE_READONLY:
        return StoreReadOnly(path, f"SQLite refused to write: {exc}", f"SQLite 拒绝写入：{exc}")
    if code == SQLITE_NOTADB:
        return not_ours(path, str(exc))
    if code == SQLITE_CORRUPT:
        return corrupted(path, str(exc))
    return StoreError(
        f"{path} cannot be used ({exc}); left as it is",
        f"{path} 无法使用（{exc}）；未做任何改动",
    )
