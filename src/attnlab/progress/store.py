"""The learner's saved progress: one SQLite file (or a PostgreSQL server), shared by
``attnlab quiz``, ``attnlab progress`` and the web lesson.

Per profile (``default`` unless ``--profile`` names another, for a shared classroom machine) it
keeps the sections marked complete, the self-assessment of each knowledge check ("understood" or
"review"), every attempt at a graded exercise, the last section visited, and the learner's notes
and bookmarks (:mod:`attnlab.progress.notes`).

Every write is one short ``BEGIN IMMEDIATE`` transaction on a WAL-mode file, so a quiz and the
web lesson can write at the same time without losing or half-writing anything; opening the file
safely and migrating it is :mod:`attnlab.progress.db`'s job. With ``ATTNLAB_DB`` (or ``db=``)
naming a ``postgresql://`` server, the same SQL runs there instead (:mod:`attnlab.progress.pg`).

Example::

    >>> import tempfile
    >>> store = ProgressStore.open(data_dir=tempfile.mkdtemp())
    >>> store.mark_complete(4)
    >>> store.summary().completed
    (4,)
"""

from __future__ import annotations

import contextlib
import copy
import os
import sqlite3
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from attnlab.progress import access as progress_access
from attnlab.progress import backend, exchange, location
from attnlab.progress import db as progress_db
from attnlab.progress.backend import Connection
from attnlab.progress.class_exchange import ClassExchangeMixin
from attnlab.progress.classes import ClassesMixin
from attnlab.progress.db import APPLICATION_ID, SCHEMA_VERSION, migrate
from attnlab.progress.exchange import ASSESSMENTS, check_profile, check_section, utc_now
from attnlab.progress.location import LocationMixin, close_read_only_stores, register
from attnlab.progress.notes import NotesMixin
from attnlab.progress.search_index import SearchMixin
from attnlab.progress.sessions import SessionsMixin
from attnlab.progress.state import StateMixin
from attnlab.progress.store_errors import StoreBusy, StoreError, StoreReadOnly, translate
from attnlab.progress.summary import Summary

if TYPE_CHECKING:
    from attnlab.progress.pg import PgDatabase

PROFILE_ENV = "ATTNLAB_PROFILE"
DEFAULT_PROFILE = "default"
FILE_NAME = "progress.sqlite3"


def _close_sqlite(conn: sqlite3.Connection, watch: _WalWatch) -> None:
    conn.close()
    watch.release()


class _WalWatch:
    """Whether the ``-wal`` of one database file is still the one this process writes to.

    SQLite keeps the WAL file open: if someone removes it (or moves another one there) while
    a connection is open, that connection's commits still succeed, into a file no other
    connection will ever read, and are lost; a connection opened later starts another WAL.
    So the WAL's identity (device, inode) is noted at this process's first write to the file
    and checked before every later one, by every connection: once it differs, each write is
    refused until the file is opened again, after this process closed every connection to it
    (SQLite itself removes the WAL only when the last connection anywhere closes, so while
    one of ours is open the WAL cannot change by SQLite's doing). A ``stat``, never an
    ``open``: opening a file of the database would drop SQLite's locks
    (:mod:`attnlab.progress.db`).
    """

    _all: ClassVar[dict[Path, _WalWatch]] = {}
    _guard: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, key: Path) -> None:
        self.key, self.wal, self.users = key, Path(f"{key}-wal"), 0
        self.seen: tuple[int, int] | None = None
        self.lost = False

    @classmethod
    def of(cls, path: Path) -> _WalWatch:
        """The watch of ``path``'s WAL, counted as used once more (:meth:`release`)."""
        key = path.absolute()
        with cls._guard:
            watch = cls._all.setdefault(key, cls(key))
            watch.users += 1
            return watch

    def release(self) -> None:
        with self._guard:
            self.users -= 1
            if self.users <= 0 and self._all.get(self.key) is self:
                del self._all[self.key]

    def intact(self) -> bool:
        """Called inside a write transaction (the write lock held: the WAL exists)."""
        try:
            found = os.stat(self.wal)
            now: tuple[int, int] | None = (found.st_dev, found.st_ino)
        except FileNotFoundError:
            now = None
        with self._guard:
            if not self.lost and self.seen is None:
                self.seen = now
            elif now != self.seen:
                self.lost = True
            return not self.lost


class ProgressStore(
    LocationMixin,
    NotesMixin,
    StateMixin,
    SearchMixin,
    ClassesMixin,
    SessionsMixin,
    ClassExchangeMixin,
):
    """Progress of one profile in one SQLite file or PostgreSQL server (see the module docstring).

    Args:
        path: the database file (created with its folder when missing), or a
            ``postgresql://`` URL (:mod:`attnlab.progress.pg`).
        profile: learner profile name (letters, digits, ``_ . -``; at most 64).
        clock: returns the current time as ISO text (tests pass a fake one).
        busy_timeout: seconds to wait for another program's lock (default
            ``$ATTNLAB_BUSY_TIMEOUT``, else 15).

    One store may be shared by the threads of one process (a lock serialises its calls); every
    process (and every thread of the web server) opens its own, and SQLite's locking keeps them
    apart. A file or folder that cannot be written is opened read-only: reading works, and
    every write raises :class:`StoreReadOnly` before touching it.

    Raises:
        StoreError: the file is not SQLite, is corrupted, belongs to another program or was
            written by a newer attnlab. The message names the path; the file is not touched.
            Any method raises :class:`StoreBusy` when another program holds the lock longer
            than ``busy_timeout``, and the other subclasses of :class:`StoreError` for what
            SQLite reports; never a bare ``sqlite3`` error.
    """

    def __init__(
        self,
        path: Path | str,
        profile: str = DEFAULT_PROFILE,
        clock: Callable[[], str] = utc_now,
        busy_timeout: float | None = None,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.profile, self._clock = check_profile(profile), clock
        self._monotonic = monotonic  # the teacher-key window's clock
        self.busy_timeout = progress_access.busy_timeout(busy_timeout)
        self._lock = threading.RLock()
        self.closed = False
        self._held: Connection | None = None  # the open transaction's connection (PostgreSQL)
        if backend.is_url(path):
            from attnlab.progress import pg

            #: What messages name: the file's path, or the server's URL without its password.
            self.where: Path | str = backend.redact(str(path))
            self.file: Path | None = None  # the SQLite file (None on PostgreSQL)
            self.read_only: tuple[str, str] | None = None
            self._pg: PgDatabase | None = pg.database(str(path), self.busy_timeout)
            return
        self.file = self.where = path = Path(path)
        self._pg = None
        #: Why the file cannot be written (English, Chinese), or None when it can.
        self.read_only = progress_access.why_read_only(path)
        if self.read_only is None:
            close_read_only_stores(path.absolute())
        try:
            self._conn = progress_db.open_checked(path, self.read_only, self.busy_timeout)
        except sqlite3.Error as exc:
            raise translate(exc, path, self.busy_timeout) from None
        # A store dropped unclosed (a web worker thread that ended) closes its connection at
        # once: sqlite3 connections sit in a reference cycle and would wait for the collector.
        self._wal_watch = _WalWatch.of(path)
        self._finalizer = weakref.finalize(self, _close_sqlite, self._conn, self._wal_watch)
        register(self)

    @classmethod
    def open(
        cls,
        data_dir: str | os.PathLike[str] | None = None,
        profile: str | None = None,
        db: str | None = None,
    ) -> ProgressStore:
        """The store for ``profile`` (else ``$ATTNLAB_PROFILE``, else ``default``) on the
        PostgreSQL server ``db`` (else ``$ATTNLAB_DB``; ``InputError`` if it is no
        ``postgresql://`` URL), else in ``data_dir``
        (:func:`~attnlab.progress.location.default_data_dir`)."""
        chosen = profile or os.environ.get(PROFILE_ENV) or DEFAULT_PROFILE
        url = backend.resolve(db)
        return cls(url if url else location.default_data_dir(data_dir) / FILE_NAME, chosen)

    def as_profile(self, profile: str) -> ProgressStore:
        """This store acting for ``profile``: the same connection and lock, another profile
        (cheap: the web binds one per request to the learner of its session)."""
        view = copy.copy(self)
        view.profile = check_profile(profile)
        return view

    def close(self) -> None:
        """Close the connection (every write is already committed; on PostgreSQL the pool's
        connections stay for the process's other stores)."""
        with self._lock:
            if self._pg is None:
                self._finalizer()  # the connection, and this process's count of the file's
            self.closed = True

    def __enter__(self) -> ProgressStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def writable(self) -> bool:
        """Whether answers can be saved (False for a read-only file or folder)."""
        return self.read_only is None

    def check_writable(self) -> None:
        """Raise :class:`StoreReadOnly` (naming the path and why) unless answers can be saved."""
        if self.read_only is not None:
            raise StoreReadOnly(self.where, *self.read_only)

    def _transaction(
        self, mode: str, scope: str | None = None
    ) -> AbstractContextManager[Connection]:
        # SQLite: BEGIN IMMEDIATE (a write) or DEFERRED (a read), its errors as StoreError;
        # PostgreSQL: PgDatabase.transaction. A call inside another's transaction joins it.
        if self._pg is None:
            return self._sqlite_transaction(mode)
        return self._pg_transaction(self._pg, mode, scope)

    @contextmanager
    def _pg_transaction(
        self, server: PgDatabase, mode: str, scope: str | None = None
    ) -> Iterator[Connection]:
        with self._lock:
            if self._held is not None:  # nested call: already inside one transaction
                yield self._held
                return
            lock = scope or self.profile
            with server.transaction(lock, write=mode == "IMMEDIATE") as conn:
                self._held = conn
                try:
                    yield conn
                finally:
                    self._held = None

    @contextmanager
    def _sqlite_transaction(self, mode: str) -> Iterator[sqlite3.Connection]:
        with self._lock:
            if self._conn.in_transaction:  # nested call: already inside one transaction
                yield self._conn
                return
            try:
                self._conn.execute(f"BEGIN {mode}")
                try:
                    if mode == "IMMEDIATE":  # the write lock is ours: nobody can make a WAL now
                        self._check_wal()
                    yield self._conn
                    self._conn.execute("COMMIT")
                except BaseException:
                    progress_db.rollback(self._conn)
                    raise
            except sqlite3.Error as exc:
                raise translate(exc, self.path, self.busy_timeout) from None

    def _check_wal(self) -> None:
        """Refuse to write when the file's ``-wal`` is not the one this process writes to
        (:class:`_WalWatch`).

        Raises:
            StoreError: the WAL was removed or replaced while this process had the file open.
        """
        assert self.file is not None  # SQLite
        if self._wal_watch.intact():
            return
        wal = f"{self.file}-wal"
        raise StoreError(
            f"{wal} was removed or replaced while attnlab had {self.file} open: an answer "
            "saved now would be lost, so nothing is saved; stop attnlab and start it again",
            f"{wal} 在 attnlab 打开 {self.file} 期间被删除或替换：现在保存的回答会丢失，"
            "因此不再保存；请停止 attnlab 后重新启动",
        )

    def checkpoint(self) -> None:
        """Copy the WAL into the database file and empty it (a clean stop leaves the file
        alone complete: copying ``progress.sqlite3`` by itself then loses nothing)."""
        if self._pg is not None or self.closed or not self.writable:
            return
        with self._lock, contextlib.suppress(sqlite3.Error):
            self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def _write(self, scope: str | None = None) -> AbstractContextManager[Connection]:
        """A write transaction. SQLite queues every writer of the file; PostgreSQL queues the
        writers of this profile, or of ``scope`` when given (a name no profile can have, such as
        ``"#classes"``, for writes that number rows shared by every profile)."""
        # IMMEDIATE takes the write lock up front, so two writers queue instead of deadlocking.
        self.check_writable()
        return self._transaction("IMMEDIATE", scope)

    def _read(self) -> AbstractContextManager[Connection]:
        # One read transaction = one consistent snapshot, even while another process writes.
        return self._transaction("DEFERRED")

    def mark_complete(self, section: int) -> None:
        """Mark ``section`` (0-19) complete; the first completion time is kept."""
        check_section(section)
        with self._write() as db:
            db.execute(
                "INSERT INTO completions VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
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
        (``exercise`` = ``"check-N"``, ``correct`` None).

        The answer (without surrounding blanks) and the diagnosis must be text within their
        kind's limit (:mod:`attnlab.inputs.text_limits`), else ``TextError``; the diagnosis is
        the verdict as data (:meth:`attnlab.grading.answers.Submission.data` as JSON), else
        ``InputError``. Nothing is written then.
        """
        exercise, answer, diagnosis = exchange.check_attempt(exercise, answer, diagnosis)
        with self._write() as db:
            db.execute(
                "INSERT INTO attempts (profile, exercise, answer, correct, created_at, diagnosis) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                (self.profile, exercise, answer, correct, self._clock(), diagnosis),
            )

    def set_last_section(self, section: int) -> None:
        """Remember the section the learner visited last (where they resume is
        :meth:`Summary.next_section`)."""
        check_section(section)
        with self._write() as db:
            db.execute(
                "INSERT INTO visits VALUES (?, ?, ?) ON CONFLICT (profile) DO UPDATE SET "
                "section = excluded.section, visited_at = excluded.visited_at",
                (self.profile, section, self._clock()),
            )

    @contextmanager
    def _statement(self) -> Iterator[Connection]:
        """One read statement's connection: on PostgreSQL outside a transaction, autocommit
        (a statement is one snapshot, no BEGIN/COMMIT); else a read transaction or the caller's."""
        with self._lock:
            pg = self._pg if self._held is None else None
            with pg.statement() if pg is not None else self._read() as db:
                yield db

    def _rows(self, sql: str) -> list[tuple[Any, ...]]:
        with self._read() as db:  # inside the caller's read: its snapshot
            return [tuple(row) for row in db.execute(sql, (self.profile,)).fetchall()]

    def summary(self) -> Summary:
        """Completed sections, assessments, last section and attempt counts of this profile."""
        # One statement (one round trip on PostgreSQL): rows tagged 0 completed section,
        # 1 assessment, 2 last section, 3 the counts of graded and of right attempts.
        with self._statement() as db:
            rows = db.execute(
                "SELECT 0, section, NULL FROM completions WHERE profile = ? "
                "UNION ALL SELECT 1, section, status FROM assessments WHERE profile = ? "
                "UNION ALL SELECT 2, section, NULL FROM visits WHERE profile = ? "
                "UNION ALL SELECT 3, COUNT(*), CAST(COUNT(NULLIF(correct, 0)) AS TEXT) "
                "FROM attempts WHERE profile = ? AND correct IS NOT NULL",
                (self.profile,) * 4,
            ).fetchall()
        done = sorted(int(section) for tag, section, _ in rows if tag == 0)
        marks = {int(section): status for tag, section, status in rows if tag == 1}
        visit = [int(section) for tag, section, _ in rows if tag == 2]
        graded, right = next((int(n), int(r)) for tag, n, r in rows if tag == 3)
        return Summary(self.profile, tuple(done), marks, visit[0] if visit else None, graded, right)

    def snapshot(self) -> AbstractContextManager[Any]:
        """``with store.snapshot():`` every read in the block sees one consistent state of the
        store and shares one transaction (on PostgreSQL: one pooled connection, not one per
        read)."""
        return self._read()

    def attempts(self, exercise: str | None = None) -> list[dict[str, Any]]:
        """This profile's attempts, oldest first (optionally for one exercise only)."""
        with self._statement() as db:
            rows = db.execute(
                "SELECT exercise, answer, correct, diagnosis, created_at FROM attempts "
                "WHERE profile = ? AND (? IS NULL OR exercise = ?) ORDER BY created_at, id",
                (self.profile, exercise, exercise),
            ).fetchall()
        return [exchange.attempt_dict(*row) for row in rows]

    def migrations(self) -> list[tuple[int, str]]:
        """The migrations applied to this file, in order."""
        with self._read() as db:
            rows = db.execute("SELECT version, name FROM migrations ORDER BY version").fetchall()
        return [(int(v), str(n)) for v, n in rows]

    def reset(self) -> None:
        """Delete everything saved for this profile (other profiles are kept)."""
        with self._write() as db:
            for table in ("completions", "assessments", "attempts", "visits", "notes", "bookmarks"):
                db.execute(f"DELETE FROM {table} WHERE profile = ?", (self.profile,))


__all__ = [
    "APPLICATION_ID",
    "SCHEMA_VERSION",
    "ProgressStore",
    "StoreBusy",
    "StoreError",
    "StoreReadOnly",
    "Summary",
    "migrate",
]
