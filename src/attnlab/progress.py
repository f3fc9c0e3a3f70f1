"""The learner's saved progress: one SQLite file, shared by ``attnlab quiz``, ``attnlab progress``
and the web lesson.

Per profile (``default`` unless ``--profile`` names another, for a shared classroom machine) it
keeps the sections marked complete, the self-assessment of each knowledge check ("understood" or
"review"), every attempt at a graded exercise, and the last section visited.

Reliability, and why:

* WAL mode and a busy timeout let a quiz and the web lesson write at the same time; every write
  is one short ``BEGIN IMMEDIATE`` transaction, so no write is lost and nothing is half written
  (https://sqlite.org/wal.html).
* The schema version lives in ``PRAGMA user_version`` and every applied migration is listed in
  the ``migrations`` table; a file written by a newer attnlab is refused, not downgraded.
* ``PRAGMA application_id`` marks the file as ours. A file that is not SQLite, fails
  ``quick_check`` or belongs to another program is reported with its path and never overwritten.

Example::

    >>> store = ProgressStore.open(data_dir=tmp_path)
    >>> store.mark_complete(4)
    >>> store.summary().completed
    (4,)
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from attnlab import progress_file
from attnlab.progress_file import (
    ASSESSMENTS,
    SECTION_COUNT,
    StoreError,
    check_profile,
    check_section,
)

DATA_DIR_ENV = "ATTNLAB_DATA_DIR"
PROFILE_ENV = "ATTNLAB_PROFILE"
DEFAULT_PROFILE = "default"
FILE_NAME = "progress.sqlite3"
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


def default_data_dir(data_dir: str | os.PathLike[str] | None = None) -> Path:
    """``data_dir`` if given, else ``$ATTNLAB_DATA_DIR``, else the platform's user data folder."""
    if data_dir:
        return Path(data_dir)
    if os.environ.get(DATA_DIR_ENV):
        return Path(os.environ[DATA_DIR_ENV])
    import platformdirs

    return Path(platformdirs.user_data_dir("attnlab", appauthor=False))


@dataclass(frozen=True)
class Summary:
    """One profile's progress at a glance."""

    profile: str
    completed: tuple[int, ...]
    assessments: dict[int, str]
    last_section: int | None
    attempts: int
    correct: int

    @property
    def percent(self) -> int:
        """Whole-number percentage of the 20 sections completed."""
        return round(100 * len(self.completed) / SECTION_COUNT)

    @property
    def to_review(self) -> tuple[int, ...]:
        """Sections whose check is marked "review", in page order."""
        return tuple(s for s in sorted(self.assessments) if self.assessments[s] == "review")

    def next_section(self) -> int | None:
        """The first section to review, else the first one not yet completed, else None."""
        if self.to_review:
            return self.to_review[0]
        start = self.last_section or 0
        order = [*range(start, SECTION_COUNT), *range(start)]
        return next((s for s in order if s not in self.completed), None)


def _check_file(path: Path) -> None:
    if not path.exists() or path.stat().st_size == 0:
        return
    with path.open("rb") as fh:
        header = fh.read(len(_SQLITE_HEADER))
    if header != _SQLITE_HEADER:
        raise StoreError(f"{path} is not an attnlab progress database (not SQLite); left as it is")


def _connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
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


class ProgressStore:
    """Progress of one profile in one SQLite file (see the module docstring).

    Args:
        path: the database file (created with its folder when missing).
        profile: learner profile name (letters, digits, ``_ . -``; at most 64).
        clock: returns the current time as ISO text (tests pass a fake one).

    Raises:
        StoreError: the file is not SQLite, is corrupted, belongs to another program or was
            written by a newer attnlab. The message names the path; the file is not touched.
    """

    def __init__(
        self, path: Path, profile: str = DEFAULT_PROFILE, clock: Callable[[], str] = utc_now
    ) -> None:
        self.path, self.profile, self._clock = Path(path), check_profile(profile), clock
        self.path.parent.mkdir(parents=True, exist_ok=True)
        _check_file(self.path)
        try:
            self._conn = _connect(self.path)
            migrate(self._conn, self.path)
        except sqlite3.DatabaseError as exc:
            msg = f"{self.path} cannot be read as a database ({exc}); left as it is"
            raise StoreError(msg) from None

    @classmethod
    def open(
        cls, data_dir: str | os.PathLike[str] | None = None, profile: str | None = None
    ) -> ProgressStore:
        """The store in ``data_dir`` (see :func:`default_data_dir`) for ``profile``
        (else ``$ATTNLAB_PROFILE``, else ``default``)."""
        chosen = profile or os.environ.get(PROFILE_ENV) or DEFAULT_PROFILE
        return cls(default_data_dir(data_dir) / FILE_NAME, chosen)

    def close(self) -> None:
        """Close the connection (every write is already committed)."""
        self._conn.close()

    def __enter__(self) -> ProgressStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            yield self._conn
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        self._conn.execute("COMMIT")

    def mark_complete(self, section: int) -> None:
        """Mark ``section`` (0-19) complete; the first completion time is kept."""
        check_section(section)
        with self._write() as db:
            db.execute(
                "INSERT OR IGNORE INTO completions VALUES (?, ?, ?)",
                (self.profile, section, self._clock()),
            )

    def set_assessment(self, section: int, status: str) -> None:
        """Record the learner's self-assessment of a check: ``"understood"`` or ``"review"``."""
        check_section(section)
        if status not in ASSESSMENTS:
            raise ValueError(f"status must be one of {', '.join(ASSESSMENTS)}, got {status!r}")
        with self._write() as db:
            db.execute(
                "INSERT INTO assessments VALUES (?, ?, ?, ?) ON CONFLICT (profile, section) "
                "DO UPDATE SET status = excluded.status, updated_at = excluded.updated_at",
                (self.profile, section, status, self._clock()),
            )

    def record_attempt(
        self, exercise: str, answer: str, correct: bool | None, diagnosis: str | None = None
    ) -> None:
        """Save one answer: a graded exercise (``correct`` True/False) or a free-text check
        (``exercise`` = ``"check-N"``, ``correct`` None)."""
        progress_file.check_exercise(exercise)
        with self._write() as db:
            db.execute(
                "INSERT OR IGNORE INTO attempts (profile, exercise, answer, correct, created_at, "
                "diagnosis) VALUES (?, ?, ?, ?, ?, ?)",
                (self.profile, exercise, answer, correct, self._clock(), diagnosis),
            )

    def set_last_section(self, section: int) -> None:
        """Remember the section the learner is on (where ``attnlab quiz`` resumes)."""
        check_section(section)
        with self._write() as db:
            db.execute(
                "INSERT INTO visits VALUES (?, ?, ?) ON CONFLICT (profile) DO UPDATE SET "
                "section = excluded.section, visited_at = excluded.visited_at",
                (self.profile, section, self._clock()),
            )

    def _rows(self, sql: str) -> list[tuple[Any, ...]]:
        return self._conn.execute(sql, (self.profile,)).fetchall()

    def summary(self) -> Summary:
        """Completed sections, assessments, last section and attempt counts of this profile."""
        done = self._rows("SELECT section FROM completions WHERE profile = ? ORDER BY section")
        marks = self._rows("SELECT section, status FROM assessments WHERE profile = ?")
        visit = self._rows("SELECT section FROM visits WHERE profile = ?")
        tries = self._rows("SELECT COUNT(*), COUNT(NULLIF(correct, 0)) FROM attempts "
                           "WHERE profile = ? AND correct IS NOT NULL")  # fmt: skip
        return Summary(
            self.profile,
            tuple(r[0] for r in done),
            dict(marks),
            visit[0][0] if visit else None,
            tries[0][0],
            tries[0][1],
        )

    def attempts(self, exercise: str | None = None) -> list[dict[str, Any]]:
        """This profile's attempts, oldest first (optionally for one exercise only)."""
        rows = self._conn.execute(
            "SELECT exercise, answer, correct, diagnosis, created_at FROM attempts "
            "WHERE profile = ? AND (? IS NULL OR exercise = ?) ORDER BY created_at, id",
            (self.profile, exercise, exercise),
        ).fetchall()
        return [progress_file.attempt_dict(*row) for row in rows]

    def migrations(self) -> list[tuple[int, str]]:
        """The migrations applied to this file, in order."""
        return self._conn.execute(
            "SELECT version, name FROM migrations ORDER BY version"
        ).fetchall()

    def export_dict(self) -> dict[str, Any]:
        """This profile's progress in the export format (:mod:`attnlab.progress_file`)."""
        q = self._rows
        return progress_file.build_export(
            self.profile,
            self._clock(),
            completed=q("SELECT section, completed_at FROM completions WHERE profile = ?"),
            assessments=q("SELECT section, status, updated_at FROM assessments WHERE profile = ?"),
            attempts=self.attempts(),
            visit=q("SELECT section, visited_at FROM visits WHERE profile = ?"),
        )

    def import_dict(self, data: object) -> dict[str, int]:
        """Merge an export into this profile, keeping the newer of any two entries.

        The data is validated in full first (:func:`attnlab.progress_file.validate_export`); an
        invalid export raises ``InputError`` and changes nothing. Returns how many entries of
        each kind the file held.
        """
        clean = progress_file.validate_export(data)
        with self._write() as db:
            progress_file.merge_into(db, self.profile, clean)
        return {k: len(clean[k]) for k in ("completed", "assessments", "attempts")}

    def reset(self) -> None:
        """Delete everything saved for this profile (other profiles are kept)."""
        with self._write() as db:
            for table in ("completions", "assessments", "attempts", "visits"):
                db.execute(f"DELETE FROM {table} WHERE profile = ?", (self.profile,))


__all__ = [
    "APPLICATION_ID",
    "SCHEMA_VERSION",
    "ProgressStore",
    "StoreError",
    "Summary",
    "default_data_dir",
    "migrate",
]
