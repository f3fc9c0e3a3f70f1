"""The transactions of :class:`attnlab.progress.store.ProgressStore`, on either backend.

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

from attnlab.progress import db as progress_db
from attnlab.progress.backend import Connection
from attnlab.progress.store_errors import translate

if TYPE_CHECKING:
    from attnlab.progress.pg import PgDatabase


class TransactionsMixin:
    """``_read()`` and ``_write()`` of the store: context managers yielding its connection."""

    if TYPE_CHECKING:
        profile: str
        busy_timeout: float
        _lock: threading.RLock
        _conn: sqlite3.Connection
        _pg: PgDatabase | None
        _held: Connection | None

        @property
        def path(self) -> Path: ...
        def check_writable(self) -> None: ...

    def _transaction(self, mode: str) -> AbstractContextManager[Connection]:
        if self._pg is None:
            return self._sqlite_transaction(mode)
        return self._pg_transaction(self._pg, mode)

    @contextmanager
    def _pg_transaction(self, server: PgDatabase, mode: str) -> Iterator[Connection]:
        with self._lock:
            if self._held is not None:  # nested call: already inside one transaction
                yield self._held
                return
            with server.transaction(self.profile, write=mode == "IMMEDIATE") as conn:
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

    def _write(self) -> AbstractContextManager[Connection]:
        # IMMEDIATE takes the write lock up front, so two writers queue instead of deadlocking.
        self.check_writable()
        return self._transaction("IMMEDIATE")

    def _read(self) -> AbstractContextManager[Connection]:
        # One read transaction = one consistent snapshot, even while another process writes.
        return self._transaction("DEFERRED")
