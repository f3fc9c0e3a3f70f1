"""Where the lesson's search index lives: an FTS5 table in the progress file (migration 3).

The documents (section text, checks, glossary, mistakes, in both languages) are built above this
layer (:mod:`attnlab.content.search`); here they are stored, together with the digest of their
content, and replaced only when that digest changes (a new attnlab or new lesson text), never per
query. Two query paths (https://sqlite.org/fts5.html#the_trigram_tokenizer):

* every word has 3 or more characters: ``MATCH`` on the trigram index, ranked by ``bm25`` with
  column weights (a word in a title or in the glossary terms a section teaches counts more than
  one in its prose);
* a shorter word (掩码, 缩放, W): the trigram index cannot look up fewer than 3 characters, so
  a ``LIKE`` scan over the few hundred documents, ranked by the same weights on counts.

A read-only progress file with an out-of-date index, and a store on PostgreSQL, are searched
through this process's copy in memory.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from attnlab.progress.backend import Connection
from attnlab.progress.notes import Note
from attnlab.progress.store_errors import StoreBusy

DOCS_DDL = (
    "CREATE VIRTUAL TABLE search_docs USING fts5(key UNINDEXED, section UNINDEXED, "
    "kind UNINDEXED, lang UNINDEXED, title, body, terms, tokenize = 'trigram')"
)
META_DDL = "CREATE TABLE search_meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)"
#: bm25 weight of each column of ``search_docs``, in order (the unindexed ones count nothing).
WEIGHTS = (0.0, 0.0, 0.0, 0.0, 10.0, 2.0, 10.0)
MIN_TRIGRAM = 3
_FIELDS = "key, section, kind, lang, title, body, terms"


@dataclass(frozen=True)
class Doc:
    """One searchable document: ``kind`` is section, check, glossary or mistake; ``terms`` the
    glossary terms a section teaches (ranked highest)."""

    key: str
    section: int | None
    kind: str
    lang: str
    title: str
    body: str
    terms: str = ""


def stored_digest(db: Connection) -> str | None:
    """The digest of the documents in the index (None when it was never filled)."""
    row = db.execute("SELECT value FROM search_meta WHERE name = 'digest'").fetchone()
    return None if row is None else str(row[0])


def replace_docs(db: Connection, digest: str, docs: Sequence[Doc]) -> None:
    """Replace every document of the index and record their digest (inside a transaction)."""
    db.execute("DELETE FROM search_docs")
    db.executemany(
        f"INSERT INTO search_docs ({_FIELDS}) VALUES (?, ?, ?, ?, ?, ?, ?)",
        [(d.key, d.section, d.kind, d.lang, d.title, d.body, d.terms) for d in docs],
    )
    db.execute("INSERT OR REPLACE INTO search_meta VALUES ('digest', ?)", (digest,))


def like_pattern(word: str) -> str:
    """``%word%`` for ``LIKE ... ESCAPE '\\'``: ``_`` and ``%`` match only themselves."""
    escaped = word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _count_score(doc: Doc, words: Sequence[str]) -> float:
    title, body, terms = doc.title.lower(), doc.body.lower(), doc.terms.lower()
    return sum(
        WEIGHTS[4] * title.count(w) + WEIGHTS[5] * body.count(w) + WEIGHTS[6] * terms.count(w)
        for w in (w.lower() for w in words)
    )


def query(db: Connection, words: Sequence[str], limit: int) -> list[tuple[Doc, float]]:
    """Documents containing every word (case-insensitive), best first, with a score (higher is
    better; comparable only within one query)."""
    if all(len(w) >= MIN_TRIGRAM for w in words):
        phrase = " ".join('"' + w.replace('"', '""') + '"' for w in words)
        weights = ", ".join(str(w) for w in WEIGHTS)
        rows = db.execute(
            f"SELECT {_FIELDS}, -bm25(search_docs, {weights}) AS score FROM search_docs "
            "WHERE search_docs MATCH ? ORDER BY score DESC LIMIT ?",
            (phrase, limit),
        ).fetchall()
        return [(Doc(*row[:7]), float(row[7])) for row in rows]
    where = " AND ".join(["(title || ' ' || body || ' ' || terms) LIKE ? ESCAPE '\\'"] * len(words))
    rows = db.execute(
        f"SELECT {_FIELDS} FROM search_docs WHERE {where}", [like_pattern(w) for w in words]
    ).fetchall()
    scored = [(doc, _count_score(doc, words)) for doc in (Doc(*row) for row in rows)]
    return sorted(scored, key=lambda pair: -pair[1])[:limit]


_MEMORY: dict[str, sqlite3.Connection] = {}
_MEMORY_LOCK = threading.Lock()


def _memory_index(digest: str, build: Callable[[], Sequence[Doc]]) -> sqlite3.Connection:
    # For a progress file we may not write: the index is built once per process in memory.
    with _MEMORY_LOCK:
        if digest not in _MEMORY:
            db = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
            db.execute(DOCS_DDL)
            db.execute(META_DDL)
            replace_docs(db, digest, build())
            _MEMORY.clear()
            _MEMORY[digest] = db
        return _MEMORY[digest]


class SearchMixin:
    """The search index and note search of :class:`attnlab.progress.store.ProgressStore`."""

    if TYPE_CHECKING:
        profile: str

        @property
        def writable(self) -> bool: ...
        @property
        def keeps_index(self) -> bool: ...
        def _write(self) -> AbstractContextManager[Connection]: ...
        def _read(self) -> AbstractContextManager[Connection]: ...

    def search_docs(
        self, digest: str, build: Callable[[], Sequence[Doc]], words: Sequence[str], limit: int
    ) -> list[tuple[Doc, float]]:
        """Search the index whose content has ``digest``; when the stored one differs it is
        first rebuilt from ``build()`` (once, in one transaction). A store on PostgreSQL
        searches this process's copy in memory."""
        if self.keeps_index:
            with self._read() as db:
                if stored_digest(db) == digest:
                    return query(db, words, limit)
        if self.keeps_index and self.writable:
            # Another writer holding the lock: answer from memory meanwhile.
            with contextlib.suppress(StoreBusy), self._write() as db:
                if stored_digest(db) != digest:  # again, now that we hold the lock
                    replace_docs(db, digest, build())
                return query(db, words, limit)
        db = _memory_index(digest, build)
        with _MEMORY_LOCK:
            return query(db, words, limit)

    def search_notes(self, words: Sequence[str]) -> list[Note]:
        """This profile's notes containing every word (case-insensitive), in page order."""
        # LOWER on both sides: SQLite's LIKE ignores case, PostgreSQL's does not.
        where = " AND ".join(["LOWER(text) LIKE LOWER(?) ESCAPE '\\'"] * len(words))
        with self._read() as db:
            rows = db.execute(
                "SELECT id, section, text, created_at, updated_at FROM notes WHERE profile = ? "
                f"AND deleted = 0 AND {where} ORDER BY section, created_at",
                (self.profile, *(like_pattern(w) for w in words)),
            ).fetchall()
        return [Note(*row) for row in rows]
