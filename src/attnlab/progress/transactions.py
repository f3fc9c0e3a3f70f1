"""Where a :class:`attnlab.progress.store.ProgressStore` lives, whether it can be written, and
its transactions, on either backend.

* SQLite: ``BEGIN IMMEDIATE`` for a write takes the file's write lock up front, so two writers
  queue instead of deadlocking; ``BEGIN DEFERRED`` for a read is one consistent snapshot while
  another process writes. SQLite's errors become :class:`~attnlab.progress.store_errors.StoreError`.
* PostgreSQL: :meth:`attnlab.progress.pg.PgDatabase.transaction` (a write queues behind the
  profile's other writers; a read is one ``REPEATABLE READ`` snapshot).

A call made inside another's transaction (on the same thread) joins it.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from attnlab.progress import access as progress_access
from attnlab.progress import db as progress_db
from attnlab.progress.backend import Connection
from attnlab.progress.store_errors import StoreError, StoreReadOnly, translate

if TYPE_CHECKING:
    from attnlab.progress.pg import PgDatabase


class TransactionsMixin:
    """The store's file or server, its writability, and ``_read()`` and ``_write()``: context
    managers yielding its connection."""

    if TYPE_CHECKING:
        profile: str
        busy_timeout: float
        file: Path | None
        where: Path | str
        read_only: tuple[str, str] | None
        _lock: threading.RLock
        _conn: sqlite3.Connection
        _pg: PgDatabase | None
        _held: Connection | None

    @property
    def path(self) -> Path:
        """The SQLite file (``ValueError`` on PostgreSQL: use :attr:`where` to name it)."""
        if self.file is None:
            raise ValueError(f"the store is on a PostgreSQL server ({self.where}), not in a file")
        return self.file

    def own_files(self) -> tuple[Path, ...]:
        """The files nothing else may ever write: the SQLite file and those SQLite keeps next
        to it (:func:`attnlab.progress.access.own_files`); none on PostgreSQL."""
        return () if self.file is None else progress_access.own_files(self.file)

    @property
    def writable(self) -> bool:
        """Whether answers can be saved (False for a read-only file or folder)."""
        return self.read_only is None

    def writable_now(self) -> bool:
        """Whether the file can be written now (a read-only store opened earlier stays read-only:
        open a new one to save)."""
        try:
            return self.file is None or progress_access.why_read_only(self.file) is None
        except StoreError:
            return False

    def check_writable(self) -> None:
        """Raise :class:`StoreReadOnly` (naming the path and why) unless answers can be saved."""
        if self.read_only is not None:
            raise StoreReadOnly(self.where, *self.read_only)

    @property
    def keeps_index(self) -> bool:
        """Whether the lesson's search index is kept in the store (the SQLite file), not in
        this process's memory (PostgreSQL)."""
        return self._pg is None

    def _transaction(
        self, mode: str, scope: str | None = None
    ) -> AbstractContextManager[Connection]:
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
                    yield self._conn
                    self._conn.execute("COMMIT")
                except BaseException:
                    progress_db.rollback(self._conn)
                    raise
            except sqlite3.Error as exc:
                raise translate(exc, self.path, self.busy_timeout) from None

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
