"""The progress database file: open it safely, recognise it as ours, and migrate its schema.

Why each step (see :mod:`attnlab.progress.store` for the store itself):

* Only SQLite ever opens the database, ``-wal`` and ``-shm`` files: closing a descriptor of
  them opened any other way drops the locks SQLite holds in this process, and another process
  then deletes the WAL in use (https://sqlite.org/howtocorrupt.html, 2.2). So SQLite itself
  reads the header ("file is not a database"), ``PRAGMA quick_check`` catches a corrupted file
  and ``PRAGMA application_id`` another program's database. All three are checked before
  anything is written, and such a file is reported by path, never overwritten.
* WAL mode lets readers and one writer work at once; the busy timeout makes a second writer wait
  for the first, up to ``$ATTNLAB_BUSY_TIMEOUT`` seconds (https://sqlite.org/wal.html).
* A file or folder we may not write is opened read-only (``mode=ro``): it can be read, and
  nothing is migrated or switched to WAL.
* The schema version lives in ``PRAGMA user_version`` and every applied migration is listed in the
  ``migrations`` table; a file from a newer attnlab is refused, not downgraded.
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
from pathlib import Path

from attnlab.progress.access import busy_timeout, sidecar
from attnlab.progress.exchange import utc_now
from attnlab.progress.search_index import DOCS_DDL, META_DDL
from attnlab.progress.store_errors import (
    SQLITE_BUSY,
    SQLITE_CANTOPEN,
    SQLITE_LOCKED,
    SQLITE_NOTADB,
    SQLITE_READONLY,
    StoreError,
    StoreReadOnly,
    corrupted,
    not_ours,
)

#: "ATLB" as a 32-bit integer: marks the file as attnlab's (PRAGMA application_id).
APPLICATION_ID = 0x41544C42

#: (version, name, statements). Append only: a released migration is never edited.
MIGRATIONS: tuple[tuple[int, str, tuple[str, ...]], ...] = (
    (1, "initial tables", (
        "CREATE TABLE completions (profile TEXT NOT NULL, section INTEGER NOT NULL, "
        "completed_at TEXT NOT NULL, PRIMARY KEY (profile, section))",
        "CREATE TABLE assessments (profile TEXT NOT NULL, section INTEGER NOT NULL, "
        "status TEXT NOT NULL CHECK (status IN ('understood', 'review')), "
        "updated_at TEXT NOT NULL, PRIMARY KEY (profile, section))",
        "CREATE TABLE attempts (id INTEGER PRIMARY KEY, profile TEXT NOT NULL, "
        "exercise TEXT NOT NULL, answer TEXT NOT NULL, correct INTEGER, "
        "created_at TEXT NOT NULL, UNIQUE (profile, exercise, created_at, answer))",
        "CREATE TABLE visits (profile TEXT PRIMARY KEY, section INTEGER NOT NULL, "
        "visited_at TEXT NOT NULL)",
    )),
    (2, "attempt diagnosis and index", (
        "ALTER TABLE attempts ADD COLUMN diagnosis TEXT",
        "CREATE INDEX attempts_by_exercise ON attempts (profile, exercise, created_at)",
    )),
    (3, "notes, bookmarks and the search index", (
        "CREATE TABLE notes (profile TEXT NOT NULL, id TEXT NOT NULL, "
        "section INTEGER NOT NULL, text TEXT NOT NULL, created_at TEXT NOT NULL, "
        "updated_at TEXT NOT NULL, deleted INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (profile, id))",
        "CREATE TABLE bookmarks (profile TEXT NOT NULL, section INTEGER NOT NULL, "
        "marked INTEGER NOT NULL, updated_at TEXT NOT NULL, PRIMARY KEY (profile, section))",
        DOCS_DDL,
        META_DDL,
    )),
    # A verdict is kept as data (JSON: kind, mistake names, slips...) and worded where it is
    # shown; a reason kept as words before is dropped and graded again from the answer.
    (4, "verdicts as data", (
        "UPDATE attempts SET diagnosis = NULL WHERE diagnosis IS NOT NULL "
        "AND json_valid(diagnosis) = 0",
    )),
    # A class's learners are profiles of this store; keys, links and sessions are kept as
    # hashes only (attnlab.progress.classes). Portable SQL: the same statements run elsewhere.
    (5, "classes, invitations and sessions", (
        "CREATE TABLE classes (id INTEGER PRIMARY KEY, name TEXT NOT NULL, "
        "key_salt TEXT NOT NULL, key_hash TEXT NOT NULL, created_at TEXT NOT NULL)",
        "CREATE TABLE class_learners (class_id INTEGER NOT NULL REFERENCES classes (id), "
        "name TEXT NOT NULL, profile TEXT NOT NULL UNIQUE, created_at TEXT NOT NULL, "
        "PRIMARY KEY (class_id, name))",
        "CREATE TABLE class_invites (token_hash TEXT PRIMARY KEY, "
        "class_id INTEGER NOT NULL REFERENCES classes (id), "
        "profile TEXT NOT NULL REFERENCES class_learners (profile), created_at TEXT NOT NULL, "
        "used_at TEXT, revoked INTEGER NOT NULL DEFAULT 0)",
        "CREATE TABLE class_sessions (id_hash TEXT PRIMARY KEY, "
        "kind TEXT NOT NULL CHECK (kind IN ('learner', 'teacher')), "
        "class_id INTEGER NOT NULL REFERENCES classes (id), profile TEXT, "
        "created_at TEXT NOT NULL)",
        "CREATE TABLE class_key_failures (client TEXT NOT NULL, failed_at TEXT NOT NULL)",
        "CREATE INDEX class_key_failures_by_client ON class_key_failures (client, failed_at)",
    )),
    # Teacher-key tries counted and checked in one statement (an upsert that locks the row),
    # on a monotonic clock: one counter per client and machine boot (``clock``), its window
    # starting at the first try. The wall-clock failures table it replaces goes.
    (6, "teacher-key tries on a monotonic clock", (
        "CREATE TABLE class_key_tries (client TEXT NOT NULL, clock TEXT NOT NULL, "
        "window_start DOUBLE PRECISION NOT NULL, tries INTEGER NOT NULL, "
        "PRIMARY KEY (client, clock))",
        "DROP TABLE class_key_failures",
    )),
)  # fmt: skip
SCHEMA_VERSION = MIGRATIONS[-1][0]
_OUR_TABLES = {"migrations", "completions", "assessments", "attempts", "visits"}


def _sqlite(path: Path, query: str, seconds: float) -> sqlite3.Connection:
    # SQLite alone opens the database file, its -wal and -shm. Opening and closing any of
    # them with Python's open() would drop every POSIX lock SQLite holds on it in this process
    # (https://sqlite.org/howtocorrupt.html, 2.2); another process would then believe it is
    # the last user, checkpoint and delete the WAL under us, and our later writes are lost.
    uri = f"{path.absolute().as_uri()}?{query}"
    conn = sqlite3.connect(
        uri, uri=True, timeout=seconds, isolation_level=None, check_same_thread=False
    )
    conn.execute(f"PRAGMA busy_timeout = {round(seconds * 1000)}")
    return conn


def connect(path: Path, seconds: float | None = None) -> sqlite3.Connection:
    """Open ``path`` for writing (created when missing) after checking it is ours, in WAL mode.

    Raises:
        StoreError: not SQLite, corrupted, or another program's (checked before any write).
        sqlite3.Error: what SQLite said otherwise (busy, read-only, ...).
    """
    wait = busy_timeout(seconds)
    conn = _sqlite(path, "mode=rwc", wait)
    try:
        # Look before switching to WAL: the journal mode is stored in the file, and a file
        # that is not ours must stay exactly as it was.
        _check_identity(conn, path)
        _use_wal(conn, path, wait)
        conn.execute("PRAGMA synchronous = FULL")
    except BaseException:
        conn.close()
        raise
    return conn


def _use_wal(conn: sqlite3.Connection, path: Path, wait: float) -> None:
    if str(conn.execute("PRAGMA journal_mode").fetchone()[0]).lower() == "wal":
        return  # already: asking again would need a moment alone with the file
    deadline = time.monotonic() + wait
    while True:
        try:
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            break
        except sqlite3.OperationalError as exc:
            busy = exc.sqlite_errorcode & 0xFF in (SQLITE_BUSY, SQLITE_LOCKED)
            if not busy or time.monotonic() > deadline:
                raise
            time.sleep(0.05)
    if str(mode).lower() != "wal":
        raise StoreError(
            f"{path}: could not switch to WAL mode (got {mode!r})",
            f"{path}：无法切换到 WAL 模式（得到 {mode!r}）",
        )


def connect_read_only(path: Path, seconds: float | None = None) -> sqlite3.Connection:
    """Open an existing ``path`` for reading only, checking it is ours; nothing is written.

    A WAL file is read through its ``-shm`` index, which SQLite creates when it can. When it
    cannot (a read-only folder) and no ``-wal`` holds changes, nobody is writing (a writer
    would need both), so the file alone is the whole database and is opened as immutable
    (https://sqlite.org/wal.html#readonly, https://sqlite.org/uri.html#uriimmutable).
    """
    wait = busy_timeout(seconds)
    conn = _sqlite(path, "mode=ro", wait)
    try:
        _check_identity(conn, path)
        return conn
    except sqlite3.OperationalError as exc:
        conn.close()
        no_index = exc.sqlite_errorcode & 0xFF in (SQLITE_CANTOPEN, SQLITE_READONLY)
        wal = sidecar(path, "-wal")
        if not no_index or (wal.exists() and wal.stat().st_size > 0):
            raise
    conn = _sqlite(path, "mode=ro&immutable=1", wait)
    try:
        _check_identity(conn, path)
    except BaseException:
        conn.close()
        raise
    return conn


def open_checked(
    path: Path, read_only: tuple[str, str] | None, seconds: float | None = None
) -> sqlite3.Connection:
    """``path`` checked and up to date: for writing and migrated, or (``read_only`` says why)
    for reading only, which needs the current schema since nothing can be migrated."""
    conn = connect(path, seconds) if read_only is None else connect_read_only(path, seconds)
    try:
        if read_only is None:
            migrate(conn, path)
        elif (version := check_version(conn, path)) < SCHEMA_VERSION:
            raise StoreReadOnly(
                path,
                f"{read_only[0]}; its schema version {version} must first be upgraded to "
                f"{SCHEMA_VERSION}",
                f"{read_only[1]}；需要先把数据结构从版本 {version} 升级到 {SCHEMA_VERSION}",
            )
    except BaseException:
        conn.close()
        raise
    return conn


def _check_identity(conn: sqlite3.Connection, path: Path) -> None:
    try:
        (result,) = conn.execute("PRAGMA quick_check").fetchone()
    except sqlite3.DatabaseError as exc:
        if exc.sqlite_errorcode & 0xFF == SQLITE_NOTADB:  # SQLite read the header: not ours
            raise not_ours(path, str(exc)) from None
        raise
    if result != "ok":
        raise corrupted(path, result)
    app_id = conn.execute("PRAGMA application_id").fetchone()[0]
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if app_id == APPLICATION_ID and not _OUR_TABLES <= tables:
        raise StoreError(
            f"{path} is an attnlab database with tables missing; left as it is",
            f"{path} 是 attnlab 的数据库，但缺少数据表；未做任何改动",
        )
    if app_id not in (0, APPLICATION_ID) or (app_id == 0 and tables):
        names = ", ".join(sorted(tables)) or "none"
        raise StoreError(
            f"{path} belongs to another program (application_id {app_id}, tables {names}); "
            "left as it is",
            f"{path} 属于另一个程序（application_id {app_id}，数据表 {names}）；未做任何改动",
        )


def check_version(conn: sqlite3.Connection, path: Path) -> int:
    """The file's schema version; ``StoreError`` if a newer attnlab wrote it."""
    version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"{path} has schema version {version}, newer than this attnlab's "
            f"{SCHEMA_VERSION}; upgrade attnlab (the file was left as it is)",
            f"{path} 的数据结构版本是 {version}，比本 attnlab 的 {SCHEMA_VERSION} 新；"
            "请升级 attnlab（文件未做任何改动）",
        )
    return version


def migrate(conn: sqlite3.Connection, path: Path, upto: int = SCHEMA_VERSION) -> list[int]:
    """Apply the migrations after the file's version, up to ``upto``; return those applied.

    An up-to-date file is only read, so opening it never waits for another program's write.
    """
    if check_version(conn, path) >= upto:
        return []
    conn.execute("BEGIN IMMEDIATE")
    try:
        _check_identity(conn, path)  # again, now that nobody else can change it
        version = check_version(conn, path)
        applied = []
        if version == 0:
            conn.execute(
                "CREATE TABLE migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
                "applied_at TEXT NOT NULL)"
            )
            conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        for number, name, statements in MIGRATIONS:
            if version < number <= upto:
                for sql in statements:
                    conn.execute(sql)
                conn.execute("INSERT INTO migrations VALUES (?, ?, ?)", (number, name, utc_now()))
                conn.execute(f"PRAGMA user_version = {number}")
                applied.append(number)
        conn.execute("COMMIT")
        return applied
    except BaseException:
        rollback(conn)
        raise


def rollback(conn: sqlite3.Connection) -> None:
    """Undo the open transaction, if SQLite has not already (a failed COMMIT may have)."""
    if conn.in_transaction:
        with contextlib.suppress(sqlite3.Error):
            conn.execute("ROLLBACK")
