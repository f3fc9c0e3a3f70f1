"""The learner's notes and bookmarks in the progress store (schema migration 3).

A note has a stable id (a UUID made where it was first written) and the time of its last edit,
so an export merged into another store updates the same note instead of adding a copy, and the
newer edit wins (:func:`attnlab.progress.exchange.merge_into`). Deleting a note or removing a
bookmark keeps a row marked as such with its time: an older export merged later cannot bring
it back.

Example::

    >>> import tempfile
    >>> from attnlab.progress.store import ProgressStore
    >>> store = ProgressStore.open(data_dir=tempfile.mkdtemp())
    >>> store.add_note(5, "softmax: each row sums to 1").section
    5
    >>> store.toggle_bookmark(8), store.bookmarks()
    (True, (8,))
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from attnlab.inputs.text_limits import check_text
from attnlab.progress.backend import Connection
from attnlab.progress.exchange import NoteError, check_section

#: Shortest id prefix ``attnlab notes rm`` accepts (the list shows 8 characters).
MIN_ID_PREFIX = 4
_ID_PREFIX = re.compile(rf"[0-9a-f-]{{{MIN_ID_PREFIX},36}}")
_COLUMNS = "id, section, text, created_at, updated_at"


@dataclass(frozen=True)
class Note:
    """One note: its id, the section (0-19) it belongs to, its text and times (ISO, UTC)."""

    id: str
    section: int
    text: str
    created_at: str
    updated_at: str

    @property
    def short_id(self) -> str:
        """The first 8 characters of the id, as lists show it."""
        return self.id[:8]


def new_note_id() -> str:
    """A fresh note id (a random UUID)."""
    return str(uuid.uuid4())


class NotesMixin:
    """Notes and bookmarks of :class:`attnlab.progress.store.ProgressStore` (its profile, clock
    and transactions)."""

    if TYPE_CHECKING:
        profile: str
        _clock: Callable[[], str]

        def _write(self) -> AbstractContextManager[Connection]: ...
        def _read(self) -> AbstractContextManager[Connection]: ...

    def add_note(self, section: int, text: str) -> Note:
        """Add a new note to ``section``; ``ValueError`` for a bad section,
        :class:`~attnlab.inputs.text_limits.TextError` for an empty or over-long text (nothing
        is written)."""
        return self.save_note(section, new_note_id(), text)

    def save_note(self, section: int, note_id: str, text: str) -> Note:
        """Create or update note ``note_id`` of ``section`` (the web's note box saves this way
        as the learner types)."""
        check_section(section)
        check_text(note_id, "note_id")
        clean, now = check_text(text, "note"), self._clock()
        with self._write() as db:
            row = db.execute(
                "SELECT section FROM notes WHERE profile = ? AND id = ?", (self.profile, note_id)
            ).fetchone()
            if row is not None and row[0] != section:
                raise NoteError(
                    f"note {note_id[:8]}: expected a note of section {section}, found one of "
                    f"section {row[0]}",
                    f"笔记 {note_id[:8]}：应属于第 {section} 节，实际属于第 {row[0]} 节",
                )
            db.execute(
                "INSERT INTO notes VALUES (?, ?, ?, ?, ?, ?, 0) ON CONFLICT (profile, id) DO "
                "UPDATE SET text = excluded.text, updated_at = excluded.updated_at, deleted = 0",
                (self.profile, note_id, section, clean, now, now),
            )
            created = db.execute(
                "SELECT created_at FROM notes WHERE profile = ? AND id = ?", (self.profile, note_id)
            ).fetchone()[0]
        return Note(note_id, section, clean, created, now)

    def delete_note(self, id_or_prefix: str) -> Note:
        """Delete the note whose id is (or starts with, at least 4 characters) ``id_or_prefix``.

        Raises:
            NoteError: no such note, or the prefix names more than one.
        """
        with self._write() as db:
            note = self._find(db, id_or_prefix)
            db.execute(
                "UPDATE notes SET text = '', deleted = 1, updated_at = ? WHERE profile = ? "
                "AND id = ?",
                (self._clock(), self.profile, note.id),
            )
        return note

    def _find(self, db: Connection, id_or_prefix: str) -> Note:
        key = id_or_prefix.strip().lower()
        rows = []
        if _ID_PREFIX.fullmatch(key):  # nothing else can start an id, nor reach LIKE
            rows = db.execute(
                f"SELECT {_COLUMNS} FROM notes WHERE profile = ? AND deleted = 0 AND id LIKE ?",
                (self.profile, key + "%"),
            ).fetchall()
        if len(rows) != 1:
            shown = repr(id_or_prefix[:40])
            raise NoteError(
                f"note id: expected the id of one of your notes (at least {MIN_ID_PREFIX} "
                "characters; `attnlab notes` lists them), found "
                f"{'several notes' if rows else 'no note'} for {shown}",
                f"笔记编号：应为你的某条笔记的编号（至少 {MIN_ID_PREFIX} 个字符；"
                f"`attnlab notes` 会列出），{shown} {'对应多条笔记' if rows else '没有对应的笔记'}",
            )
        return Note(*rows[0])

    def notes(self, section: int | None = None) -> list[Note]:
        """This profile's notes (of one section, if given), oldest first."""
        with self._read() as db:
            rows = db.execute(
                f"SELECT {_COLUMNS} FROM notes WHERE profile = ? AND deleted = 0 "
                "AND (? IS NULL OR section = ?) ORDER BY section, created_at, id",
                (self.profile, section, section),
            ).fetchall()
        return [Note(*row) for row in rows]

    def toggle_bookmark(self, section: int) -> bool:
        """Bookmark ``section``, or remove its bookmark; return whether it is now bookmarked."""
        check_section(section)
        with self._write() as db:
            row = db.execute(
                "SELECT marked FROM bookmarks WHERE profile = ? AND section = ?",
                (self.profile, section),
            ).fetchone()
            marked = not (row and row[0])
            db.execute(
                "INSERT INTO bookmarks VALUES (?, ?, ?, ?) ON CONFLICT (profile, section) DO "
                "UPDATE SET marked = excluded.marked, updated_at = excluded.updated_at",
                (self.profile, section, int(marked), self._clock()),
            )
        return marked

    def bookmarks(self) -> tuple[int, ...]:
        """The bookmarked sections, in page order."""
        with self._read() as db:
            rows = db.execute(
                "SELECT section FROM bookmarks WHERE profile = ? AND marked = 1 ORDER BY section",
                (self.profile,),
            ).fetchall()
        return tuple(r[0] for r in rows)
