"""What a lesson or section page shows of one learner, read in one statement.

A page needs the learner's summary (completed sections, self-assessments, last visit, attempt
counts), every attempt, the notes and the bookmarks. Read as separate queries inside a
transaction that is seven round trips to a PostgreSQL server (``BEGIN``, five queries,
``COMMIT``); :data:`STATE_SQL` is one statement, and one statement sees one snapshot on its own,
so on PostgreSQL it runs without a transaction. A section page also remembers the visit: on
PostgreSQL the upsert is a data-modifying ``WITH`` of the same statement, on SQLite (which has
no such ``WITH``) a statement before it in one write transaction; neither commit waits for the
disk (a visit is a bookmark, not an answer).

Rows are tagged by what they hold (:data:`COLUMNS` names the generic columns each tag uses):

====  ==============  ======================================================================
tag   table           columns
====  ==============  ======================================================================
0     completions     n1 section
1     assessments     n1 section, t1 status
2     visits          n1 section
3     attempts        n1 graded attempts, n2 right ones (one row: the counts)
4     attempts        n1 correct, n2 id, t1 exercise, t2 answer, t3 diagnosis, t4 created_at
5     notes           n1 section, t1 id, t2 text, t3 created_at, t4 updated_at
6     bookmarks       n1 section
====  ==============  ======================================================================
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from attnlab.progress import exchange
from attnlab.progress.backend import Connection
from attnlab.progress.exchange import check_section
from attnlab.progress.notes import Note
from attnlab.progress.store_errors import StoreError, translate
from attnlab.progress.summary import Summary

if TYPE_CHECKING:
    from attnlab.progress.pg import PgDatabase

#: The generic columns of every row, after its tag.
COLUMNS = ("n1", "n2", "t1", "t2", "t3", "t4")

#: The parts of the statement but the visit's, each with one ``?`` (the profile).
_PARTS = (
    # the first part types the columns (a later NULL takes its column's type)
    "SELECT 0 AS tag, section AS n1, CAST(NULL AS INTEGER) AS n2, CAST(NULL AS TEXT) AS t1, "
    "CAST(NULL AS TEXT) AS t2, CAST(NULL AS TEXT) AS t3, CAST(NULL AS TEXT) AS t4 "
    "FROM completions WHERE profile = ?",
    "SELECT 1, section, NULL, status, NULL, NULL, NULL FROM assessments WHERE profile = ?",
    "SELECT 3, COUNT(*), COUNT(NULLIF(correct, 0)), NULL, NULL, NULL, NULL FROM attempts "
    "WHERE profile = ? AND correct IS NOT NULL",
    "SELECT 4, correct, id, exercise, answer, diagnosis, created_at FROM attempts "
    "WHERE profile = ?",
    "SELECT 5, section, NULL, id, text, created_at, updated_at FROM notes "
    "WHERE profile = ? AND deleted = 0",
    "SELECT 6, section, NULL, NULL, NULL, NULL, NULL FROM bookmarks "
    "WHERE profile = ? AND marked = 1",
)
#: The last visited section, as its own part.
_VISIT_PART = "SELECT 2, section, NULL, NULL, NULL, NULL, NULL FROM visits WHERE profile = ?"
#: The whole learner state: one statement, one ``?`` per part (each the profile).
STATE_SQL = " UNION ALL ".join((*_PARTS, _VISIT_PART))
#: How many times :data:`STATE_SQL` binds the profile.
STATE_PARAMS = STATE_SQL.count("?")
#: The upsert that remembers a visit (profile, section, time), as ``set_last_section`` writes it.
VISIT_SQL = (
    "INSERT INTO visits VALUES (?, ?, ?) ON CONFLICT (profile) DO UPDATE SET "
    "section = excluded.section, visited_at = excluded.visited_at"
)
#: PostgreSQL: the visit remembered and the state read in one statement. The parts read the
#: snapshot taken before the upsert, so the visit's row comes from its ``RETURNING``. A visit is
#: a bookmark, not an answer: its commit does not wait for the WAL to reach the disk
#: (``synchronous_commit`` off for this statement's transaction alone; still atomic).
PG_VISIT_STATE_SQL = (
    f"WITH visit AS ({VISIT_SQL} RETURNING section), "
    "lazy AS (SELECT set_config('synchronous_commit', 'off', true)) "
    + " UNION ALL ".join(_PARTS)
    + " UNION ALL SELECT 2, section, NULL, NULL, NULL, NULL, NULL FROM visit, lazy"
)


@dataclass(frozen=True)
class LearnerState:
    """One learner's progress as a page shows it.

    Attributes:
        summary: completed sections, assessments, last section, attempt counts.
        attempts: every attempt, oldest first (as :meth:`ProgressStore.attempts` gives them).
        notes: the notes not deleted, by section, then oldest first.
        bookmarks: the bookmarked sections, in page order.
    """

    summary: Summary
    attempts: list[dict[str, Any]]
    notes: list[Note]
    bookmarks: tuple[int, ...]


def parse(profile: str, rows: Sequence[Sequence[Any]]) -> LearnerState:
    """The :class:`LearnerState` of ``profile`` from the rows of :data:`STATE_SQL`."""
    by_tag: dict[int, list[Sequence[Any]]] = {tag: [] for tag in range(7)}
    for row in rows:
        by_tag[int(row[0])].append(row[1:])
    graded, right = next(((int(r[0]), int(r[1])) for r in by_tag[3]), (0, 0))
    visit = [int(r[0]) for r in by_tag[2]]
    summary = Summary(
        profile,
        tuple(sorted(int(r[0]) for r in by_tag[0])),
        {int(r[0]): str(r[2]) for r in by_tag[1]},
        visit[0] if visit else None,
        graded,
        right,
    )
    # attempts: oldest first, then in the order they were saved (created_at, id)
    tried = sorted(by_tag[4], key=lambda r: (r[5], int(r[1])))
    attempts = [exchange.attempt_dict(r[2], r[3], r[0], r[4], r[5]) for r in tried]
    noted = sorted(by_tag[5], key=lambda r: (int(r[0]), r[4], r[2]))
    notes = [Note(r[2], int(r[0]), r[3], r[4], r[5]) for r in noted]
    bookmarks = tuple(sorted(int(r[0]) for r in by_tag[6]))
    return LearnerState(summary, attempts, notes, bookmarks)


class StateMixin:
    """:meth:`learner_state` of :class:`attnlab.progress.store.ProgressStore` (its profile,
    clock, connection and transactions)."""

    if TYPE_CHECKING:
        profile: str
        busy_timeout: float
        _clock: Callable[[], str]
        _lock: threading.RLock
        _pg: PgDatabase | None
        _held: Connection | None
        _conn: sqlite3.Connection

        @property
        def path(self) -> Path: ...
        @property
        def writable(self) -> bool: ...
        def _write(self, scope: str | None = None) -> AbstractContextManager[Connection]: ...
        def _statement(self) -> AbstractContextManager[Connection]: ...

    def learner_state(self, visit: int | None = None) -> LearnerState:
        """Everything a page shows of this profile (summary, attempts, notes, bookmarks), read
        in one statement (:data:`STATE_SQL`), so in one snapshot.

        Args:
            visit: a section (0-19) to remember as the last one visited (as
                :meth:`set_last_section` does) before reading. The visit is a bookmark, not an
                answer: a store that cannot write it (read-only, busy, a full disk) skips it
                and still reads.
        """
        if visit is not None:
            check_section(visit)
            if self.writable:
                try:
                    return self._visit_and_read(visit)
                except StoreError:  # busy, read-only, a full disk...: nothing was written,
                    pass  # and the page still shows what the store holds
        with self._statement() as db:
            rows = db.execute(STATE_SQL, (self.profile,) * STATE_PARAMS).fetchall()
        return parse(self.profile, rows)

    def _visit_and_read(self, section: int) -> LearnerState:
        visit = (self.profile, section, self._clock())
        with self._lock:
            if self._pg is not None and self._held is None:  # one statement, one round trip
                with self._pg.statement() as db:
                    found = db.execute(PG_VISIT_STATE_SQL, visit + (self.profile,) * len(_PARTS))
                    return parse(self.profile, found.fetchall())
            # A visit is a bookmark, not an answer: its commit need not wait for the disk
            # (WAL with synchronous NORMAL: still atomic; the next FULL commit syncs it too).
            lazy = self._pg is None and not self._conn.in_transaction
            if lazy:
                self._synchronous("NORMAL")
            try:
                with self._write() as db:  # SQLite: the upsert, then the read, one transaction
                    db.execute(VISIT_SQL, visit)
                    rows = db.execute(STATE_SQL, (self.profile,) * STATE_PARAMS).fetchall()
            finally:
                if lazy:
                    self._synchronous("FULL")
            return parse(self.profile, rows)

    def _synchronous(self, level: str) -> None:
        try:
            self._conn.execute(f"PRAGMA synchronous = {level}")  # NORMAL or FULL, ours
        except sqlite3.Error as exc:
            raise translate(exc, self.path, self.busy_timeout) from None
