"""Classes in the progress store (schema migration 5): classes, their learners and invitation
links (sessions: :mod:`attnlab.progress.sessions`).

A learner of class ``N`` is an ordinary profile of the store (``cN-1``, ``cN-2``, ...), so every
progress, notes and search method works for them unchanged (:meth:`ProgressStore.as_profile`).
Secrets are random (:mod:`secrets`) and only their hashes are stored: the teacher key with
``hashlib.scrypt`` and a salt of its own (a key is typed by a person and may be copied around),
invitation tokens and session ids with SHA-256 (each is 256 random bits, so a slow hash adds
nothing). Hashes are compared with :func:`hmac.compare_digest`. A session lives in the store,
so it is valid on every process sharing the file.

Example::

    >>> import tempfile
    >>> from attnlab.progress.store import ProgressStore
    >>> store = ProgressStore.open(data_dir=tempfile.mkdtemp())
    >>> made = store.create_class("week 7")
    >>> [link] = store.invite(made.id, ["Ada"])
    >>> session, profile = store.join(link.token)
    >>> profile, store.learner_of(session)
    ('c1-1', 'c1-1')
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from attnlab.progress.backend import Connection
from attnlab.progress.sessions import key_hash, token_hash
from attnlab.text.errors import InputError


@dataclass(frozen=True)
class NewClass:
    """A class just created: its id, name and teacher key (shown once, never stored)."""

    id: int
    name: str
    teacher_key: str


@dataclass(frozen=True)
class Invite:
    """One invitation link: the learner's name and profile, and the token of ``/join/TOKEN``."""

    learner: str
    profile: str
    token: str


def _no_class(class_id: object) -> InputError:
    return InputError(
        f"class: expected the id of a class of this store (see 'attnlab class list'), "
        f"found {class_id!r}",
        f"班级：应为本存储中某个班级的编号（见 'attnlab class list'），实际是 {class_id!r}",
    )


LEARNER = {"zh": "学员名", "en": "learner name"}
CLASS = {"zh": "班级名", "en": "class name"}


def check_name(name: object, field: dict[str, str] = LEARNER) -> str:
    """``name`` without surrounding blanks if it is 1-64 characters on one line, else
    ``InputError`` naming ``field`` (:data:`LEARNER` or :data:`CLASS`)."""
    text = name.strip() if isinstance(name, str) else None
    if not text or len(text) > 64 or any(c in text for c in "\r\n\t\0"):
        shown = repr(str(name)[:40])
        raise InputError(f"{field['en']}: expected 1-64 characters on one line, found {shown}",
                         f"{field['zh']}：应为一行 1–64 个字符，实际是 {shown}")  # fmt: skip
    return text


#: The write lock of class and learner numbering (``#`` is in no profile name).
CLASSES_LOCK = "#classes"


class ClassesMixin:
    """The class methods of :class:`~attnlab.progress.store.ProgressStore` (see the module)."""

    _clock: Callable[[], str]

    def _write(self, scope: str | None = None) -> AbstractContextManager[Connection]:
        raise NotImplementedError

    def _read(self) -> AbstractContextManager[Connection]:
        raise NotImplementedError

    def create_class(self, name: str) -> NewClass:
        """A new class named ``name`` with a fresh teacher key (``"ID.secret"``)."""
        name = check_name(name, CLASS)
        salt = secrets.token_bytes(16)
        with self._write(CLASSES_LOCK) as db:  # class ids are MAX + 1: one creator at a time
            (last,) = db.execute("SELECT COALESCE(MAX(id), 0) FROM classes").fetchone()
            key = f"{last + 1}.{secrets.token_urlsafe(32)}"
            db.execute(
                "INSERT INTO classes VALUES (?, ?, ?, ?, ?)",
                (last + 1, name, salt.hex(), key_hash(key, salt), self._clock()),
            )
        return NewClass(last + 1, name, key)

    def classes(self) -> list[dict[str, Any]]:
        """Every class: id, name, created time and number of learners."""
        with self._read() as db:
            rows = db.execute(
                "SELECT c.id, c.name, c.created_at, COUNT(l.profile) FROM classes c "
                "LEFT JOIN class_learners l ON l.class_id = c.id "
                "GROUP BY c.id, c.name, c.created_at ORDER BY c.id"
            ).fetchall()
        return [{"class": i, "name": n, "created": at, "learners": k} for i, n, at, k in rows]

    def _check_class(self, db: Connection, class_id: int) -> str:
        row = db.execute("SELECT name FROM classes WHERE id = ?", (class_id,)).fetchone()
        if row is None:
            raise _no_class(class_id)
        return str(row[0])

    def class_learners(self, class_id: int) -> list[tuple[str, str]]:
        """The class's learners as (name, profile), in the order they were added."""
        with self._read() as db:
            self._check_class(db, class_id)
            rows = db.execute(
                "SELECT name, profile FROM class_learners WHERE class_id = ? "
                "ORDER BY created_at, profile",
                (class_id,),
            ).fetchall()
        return [(str(n), str(p)) for n, p in rows]

    def sign_out(self, class_id: int, name: str) -> int:
        """End every session of the class's learner ``name`` (they join again with a new link);
        how many there were.

        Raises:
            InputError: no such class, or no learner of that name in it.
        """
        with self._read() as db:
            self._check_class(db, class_id)
            row = db.execute(
                "SELECT profile FROM class_learners WHERE class_id = ? AND name = ?",
                (class_id, name),
            ).fetchone()
        if row is None:
            raise InputError(
                f"--learner: expected a learner of class {class_id} (see 'attnlab class "
                f"report'), found {name[:60]!r}",
                f"--learner：应为班级 {class_id} 的学员（见 'attnlab class report'），"
                f"实际是 {name[:60]!r}",
            )
        return self.end_learner_sessions(str(row[0]))  # type: ignore[attr-defined]

    def invite(self, class_id: int, names: list[str]) -> list[Invite]:
        """One link per name: a new learner, or a new link for a learner of that name (their
        unused links are revoked and their sessions end; they keep their progress)."""
        names = [check_name(n) for n in names]
        links = []
        with self._write(CLASSES_LOCK) as db:  # learner numbers are COUNT + 1
            self._check_class(db, class_id)
            for name in names:
                row = db.execute(
                    "SELECT profile FROM class_learners WHERE class_id = ? AND name = ?",
                    (class_id, name),
                ).fetchone()
                if row is None:
                    profile = self._new_learner(db, class_id, name)
                else:  # a new link: the old one, and every session opened with a link, end
                    profile = row[0]
                    db.execute(
                        "UPDATE class_invites SET revoked = 1 WHERE profile = ? "
                        "AND used_at IS NULL",
                        (profile,),
                    )
                    db.execute(
                        "DELETE FROM class_sessions WHERE kind = 'learner' AND profile = ?",
                        (profile,),
                    )
                token = secrets.token_urlsafe(32)
                db.execute(
                    "INSERT INTO class_invites (token_hash, class_id, profile, created_at) "
                    "VALUES (?, ?, ?, ?)",
                    (token_hash(token), class_id, profile, self._clock()),
                )
                links.append(Invite(name, profile, token))
        return links

    def _new_learner(self, db: Connection, class_id: int, name: str) -> str:
        (count,) = db.execute(
            "SELECT COUNT(*) FROM class_learners WHERE class_id = ?", (class_id,)
        ).fetchone()
        number = count + 1
        while db.execute(
            "SELECT 1 FROM class_learners WHERE profile = ?", (f"c{class_id}-{number}",)
        ).fetchone():
            number += 1
        profile = f"c{class_id}-{number}"
        db.execute(
            "INSERT INTO class_learners VALUES (?, ?, ?, ?)",
            (class_id, name, profile, self._clock()),
        )
        return profile

    def class_data(self, class_id: int) -> dict[str, Any]:
        """What the teacher's report is computed from: the class's id and name, and per
        learner their name, profile, completed sections and attempts (oldest first)."""
        with self._read() as db:
            name = self._check_class(db, class_id)
            learners = db.execute(
                "SELECT name, profile FROM class_learners WHERE class_id = ? "
                "ORDER BY created_at, profile",
                (class_id,),
            ).fetchall()
            rows = []
            for learner, profile in learners:
                done = db.execute(
                    "SELECT section FROM completions WHERE profile = ? ORDER BY section",
                    (profile,),
                ).fetchall()
                tries = db.execute(
                    "SELECT exercise, answer, correct, diagnosis, created_at FROM attempts "
                    "WHERE profile = ? ORDER BY created_at, id",
                    (profile,),
                ).fetchall()
                rows.append({"name": learner, "profile": profile,
                             "completed": [r[0] for r in done], "attempts": tries})  # fmt: skip
        return {"class": class_id, "name": name, "learners": rows}
