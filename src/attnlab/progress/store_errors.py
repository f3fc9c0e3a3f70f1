"""Why the progress database cannot be used right now, said in one line in Chinese and English.

* :class:`StoreError`: the file is not ours, is corrupted, is too new, or SQLite failed on it.
* :class:`StoreBusy`: another program held the write lock longer than the busy timeout.
* :class:`StoreReadOnly`: the file or its folder cannot be written; reading still works.
* :func:`file_error`: an export file to import or write is not what was expected
  (:data:`FILE_TEXT`, used by ``store_io`` and ``store_file``).

Every message names the file's path; the front ends print it (CLI, exit 2) or show it on an
error page in the page's language (web: 503 when busy, 409 when read-only).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from attnlab.text.errors import InputError, filled
from attnlab.text.i18n import pick

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

    def __init__(self, path: Path | str, seconds: float) -> None:
        super().__init__(
            f"{path} is busy: another program held its lock for more than {seconds:g} s; "
            "nothing was saved, try again in a moment",
            f"{path} 正被另一个程序占用（锁已持续超过 {seconds:g} 秒）；本次没有保存，请稍后再试",
        )


class StoreReadOnly(StoreError):
    """The database (or its folder) cannot be written: reading works, saving is refused."""

    def __init__(self, path: Path | str, why_en: str, why_zh: str) -> None:
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


def file_error(key: str, /, **fields: Any) -> InputError:
    """An export/import file problem (:data:`FILE_TEXT`'s ``key``) as one line in both
    languages."""
    texts = filled(FILE_TEXT, key, **fields)
    return InputError(texts["en"], texts["zh"])


#: What an export file must be (``store_io``) and hold (``store_file``), in both languages.
FILE_TEXT: dict[str, dict[str, str]] = {
    "en": {
        "missing": "{p}: expected a {what}, found no such file",
        "unreadable": "{p}: expected a readable {what}, found {found}",
        "not_regular": "{p}: expected a {what}, found {found}",
        "too_large": "{p}: expected a {what} of at most {n} bytes, found more",
        "not_utf8": "{p}: expected UTF-8 text, found byte 0x{byte:02x} at offset {offset}",
        "big_int": "{p}: expected integers of at most {n} digits, found one of {digits}",
        "constant": "{p}: expected JSON numbers, found {name} (not JSON)",
        "not_json": "{p}: expected JSON, found invalid content ({msg})",
        "deep": "{p}: expected JSON nested a few levels deep, found far deeper",
        "dup_key": "{p}: expected each key once in an object, found {key} twice",
        "symlink": "{p}: expected a regular file or a new name, found a symbolic link to "
        "{to!r}; not replaced (give the real path)",
        "target": "{p}: expected a regular file or a new name, found {found}; not replaced",
        "database": "{p}: expected a file for the export, found {db}, one of the progress "
        "database's own files; not written",
        "field": "{field}: expected {expected}, found {found}",
    },
    "zh": {
        "missing": "{p}：应为{what}，但文件不存在",
        "unreadable": "{p}：应为可读的{what}，实际是 {found}",
        "not_regular": "{p}：应为{what}，实际是{found}",
        "too_large": "{p}：{what}最多 {n} 字节，实际更大",
        "not_utf8": "{p}：应为 UTF-8 文本，但在偏移 {offset} 处有字节 0x{byte:02x}",
        "big_int": "{p}：整数最多 {n} 位，实际有一个 {digits} 位的整数",
        "constant": "{p}：应为 JSON 数字，实际是 {name}（不是 JSON）",
        "not_json": "{p}：应为 JSON，实际内容无效（{msg}）",
        "deep": "{p}：JSON 应只嵌套几层，实际嵌套得深得多",
        "dup_key": "{p}：对象中的每个键应只出现一次，实际 {key} 出现了两次",
        "symlink": "{p}：应为普通文件或新文件名，实际是指向 {to!r} 的符号链接；"
        "未替换（请给出真实路径）",
        "target": "{p}：应为普通文件或新文件名，实际是{found}；未替换",
        "database": "{p}：应为导出用的文件，实际是进度数据库自己的文件 {db}；未写入",
        "field": "{field}：应为{expected}，实际是 {found}",
    },
}

#: What a file read by :func:`~attnlab.progress.exchange_files.read_export` holds (``what`` in
#: the messages above).
FILE_NOUNS: dict[str, dict[str, str]] = {
    "progress": {"en": "progress file", "zh": "进度文件"},
    "class": {"en": "class file", "zh": "班级文件"},
}

#: Kinds of file that are not a regular one (``found`` in the messages above).
FILE_KINDS: dict[str, dict[str, str]] = {
    "en": {"dir": "a directory", "fifo": "a FIFO (named pipe)", "chr": "a character device",
           "blk": "a block device", "sock": "a socket", "lnk": "a symbolic link",
           "other": "not a regular file"},
    "zh": {"dir": "文件夹", "fifo": "命名管道（FIFO）", "chr": "字符设备", "blk": "块设备",
           "sock": "套接字", "lnk": "符号链接", "other": "非普通文件"},
}  # fmt: skip

#: What each export field must be (``expected`` in ``FILE_TEXT["field"]``).
EXPECTED: dict[str, dict[str, str]] = {
    "en": {"time": "an ISO 8601 time with a UTC offset", "keys": "an object with keys {keys}",
           "list": "a list", "object": "a JSON object",
           "format": "{format!r} (not an attnlab progress file)", "version": "the integer {v}",
           "top": "keys {keys}", "section": "an integer 0-{last}",
           "status": "{options}", "flag": "true, false or null",
           "exercise": "a known exercise id", "versions": "the integer 1 or {v}",
           "bool": "true or false"},
    "zh": {"time": "带 UTC 偏移的 ISO 8601 时间", "keys": "含键 {keys} 的对象", "list": "列表",
           "object": "JSON 对象",
           "format": "{format!r}（否则不是 attnlab 的进度文件）", "version": "整数 {v}",
           "top": "键 {keys}", "section": "0-{last} 的整数",
           "status": "{options}", "flag": "true、false 或 null",
           "exercise": "已知的练习编号", "versions": "整数 1 或 {v}",
           "bool": "true 或 false"},
}  # fmt: skip
