"""The progress database file: open it safely, recognise it as ours, and migrate its schema.

Why each step (see :mod:`attnlab.learn.store` for the store itself):

* The SQLite header and ``PRAGMA quick_check`` catch a file that is not a database or is
  corrupted; ``PRAGMA application_id`` catches another program's database. All three are
  checked before anything is written, and such a file is reported by path, never overwritten.
* WAL mode lets readers and one writer work at once; the busy timeout makes a second writer wait
  for the first instead of failing (https://sqlite.org/wal.html).
* The schema version lives in ``PRAGMA user_version`` and every applied migration is listed in the
  ``migrations`` table; a file from a newer attnlab is refused, not downgraded.
"""

from __future__ import annotations

import sqlite3
import time
from datetime import UTC, datetime
from pathlib import Path

from attnlab.learn.store_file import StoreError

#: "ATLB" as a 32-bit integer: marks the file as attnlab's (PRAGMA application_id).
APPLICATION_ID = 0x41544C42
_SQLITE_HEADER = b"SQLite format 3\x00"
BUSY_TIMEOUT_MS = 15_000

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
)  # fmt: skip
SCHEMA_VERSION = MIGRATIONS[-1][0]
_OUR_TABLES = {"migrations", "completions", "assessments", "attempts", "visits"}


def utc_now() -> str:
    """The current time as ISO 8601 UTC with microseconds (sorts as text)."""
    return datetime.now(UTC).isoformat(timespec="microseconds")


def _check_file(path: Path) -> None:
    if not path.exists() or path.stat().st_size == 0:
        return
    with path.open("rb") as fh:
        header = fh.read(len(_SQLITE_HEADER))
    if header != _SQLITE_HEADER:
        raise StoreError(f"{path} is not an attnlab progress database (not SQLite); left as it is")


def connect(path: Path) -> sqlite3.Connection:
    """Open ``path`` (created when missing) after checking it is ours, in WAL mode."""
    _check_file(path)
    conn = sqlite3.connect(
        path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False
    )
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    # Look before switching to WAL: the journal mode is stored in the file, and a file that is
    # not ours must stay exactly as it was.
    _check_identity(conn, path)
    for attempt in range(50):  # switching to WAL needs a moment alone with the file
        try:
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            break
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or attempt == 49:
                raise
            time.sleep(0.05)
    if str(mode).lower() != "wal":
        raise StoreError(f"{path}: could not switch to WAL mode (got {mode!r})")
    conn.execute("PRAGMA synchronous = FULL")
    return conn


def _check_identity(conn: sqlite3.Connection, path: Path) -> None:
    (result,) = conn.execute("PRAGMA quick_check").fetchone()
    if result != "ok":
        raise StoreError(
            f"{path} is corrupted ({result}); left as it is, move it away to start over"
        )
    app_id = conn.execute("PRAGMA application_id").fetchone()[0]
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if app_id == APPLICATION_ID and not _OUR_TABLES <= tables:
        raise StoreError(f"{path} is an attnlab database with tables missing; left as it is")
    if app_id not in (0, APPLICATION_ID) or (app_id == 0 and tables):
        raise StoreError(
            f"{path} belongs to another program (application_id {app_id}, tables "
            f"{', '.join(sorted(tables)) or 'none'}); left as it is"
        )


def migrate(conn: sqlite3.Connection, path: Path, upto: int = SCHEMA_VERSION) -> list[int]:
    """Apply the migrations after the file's version, up to ``upto``; return those applied."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        _check_identity(conn, path)
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{path} has schema version {version}, newer than this attnlab's "
                f"{SCHEMA_VERSION}; upgrade attnlab (the file was left as it is)"
            )
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
        conn.execute("ROLLBACK")
        raise
