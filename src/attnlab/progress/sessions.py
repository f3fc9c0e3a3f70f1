"""Sessions of a class: a learner's from an invitation link, a teacher's from the key, and the
count of teacher-key tries that slows a guesser down.

Only hashes are stored (:func:`token_hash`, :func:`key_hash`; see
:mod:`attnlab.progress.classes`), so a copy of the database opens no session. A session lives
in the store, so it is valid on every process and machine sharing it. Teacher-key tries are
counted per client in the store: after :data:`MAX_FAILURES` within :data:`FAILURE_WINDOW` the
key is not even checked until the window ends (no request sleeps; see :meth:`SessionsMixin._try`).
"""

from __future__ import annotations

import hashlib
import hmac
import math
import secrets
import uuid
from collections.abc import Callable
from contextlib import AbstractContextManager
from datetime import datetime, timedelta

from attnlab.progress.backend import Connection
from attnlab.text.errors import InputError

#: Wrong teacher keys one client may try per :data:`FAILURE_WINDOW` before it must wait.
MAX_FAILURES = 5
FAILURE_WINDOW = timedelta(minutes=1)
#: How long a teacher's session opens the class report before the key is asked for again.
TEACHER_SESSION = timedelta(hours=12)
#: How long a learner's session (from an invitation link, kept in a cookie of the same age)
#: lasts: a closed browser keeps it; after it, the teacher gives a new link. A learner can
#: sign out sooner, and a new link for them, or ``attnlab class sign-out``, ends it at once.
LEARNER_SESSION = timedelta(days=30)


def _boot_id() -> str:
    """This machine's boot (Linux's ``boot_id``): monotonic clocks compare within one only."""
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as f:
            return f.read().strip()
    except OSError:  # elsewhere: this process's own (its clock is still monotonic)
        return f"process-{uuid.uuid4()}"


#: The monotonic clock the tries of this process are counted on.
CLOCK_ID = _boot_id()
_SCRYPT = {"n": 2**14, "r": 8, "p": 1, "dklen": 32}  # about 16 MiB and tens of ms per try


class KeyRefused(InputError):
    """A teacher key that opens no class (``wait`` is None) or a client that must wait ``wait``
    seconds after too many wrong keys."""

    def __init__(self, en: str, zh: str, wait: int | None = None) -> None:
        super().__init__(en, zh)
        self.wait = wait


def token_hash(token: str) -> str:
    """The SHA-256 of a random token (invitation or session), as stored."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def key_hash(key: str, salt: bytes) -> str:
    """The scrypt hash of a teacher key with ``salt``, as stored."""
    return hashlib.scrypt(key.encode("utf-8", "surrogatepass"), salt=salt, **_SCRYPT).hex()


class SessionsMixin:
    """The session methods of :class:`~attnlab.progress.store.ProgressStore`."""

    _clock: Callable[[], str]
    _monotonic: Callable[[], float]

    def _write(self) -> AbstractContextManager[Connection]:
        raise NotImplementedError

    def _read(self) -> AbstractContextManager[Connection]:
        raise NotImplementedError

    def join(self, token: str) -> tuple[str, str] | None:
        """Use an invitation: a new learner session ``(session id, profile)``, or None for a
        token that is unknown, used or revoked (a token works once: one conditional UPDATE
        claims it, so two devices opening the same link at once cannot both get it)."""
        hashed, session, now = token_hash(token), secrets.token_urlsafe(32), self._clock()
        with self._write() as db:
            claimed = db.execute(
                "UPDATE class_invites SET used_at = ? WHERE token_hash = ? "
                "AND used_at IS NULL AND revoked = 0",
                (now, hashed),
            ).rowcount
            if claimed != 1:
                return None
            class_id, profile = db.execute(
                "SELECT class_id, profile FROM class_invites WHERE token_hash = ?", (hashed,)
            ).fetchone()
            db.execute(
                "INSERT INTO class_sessions VALUES (?, 'learner', ?, ?, ?)",
                (token_hash(session), class_id, profile, now),
            )
        return session, str(profile)

    def invite_open(self, token: str) -> bool:
        """Whether ``token`` is an invitation that :meth:`join` would use (nothing is changed:
        a link preview's GET must not use up a link that works once)."""
        with self._read() as db:
            row = db.execute(
                "SELECT 1 FROM class_invites WHERE token_hash = ? AND used_at IS NULL "
                "AND revoked = 0",
                (token_hash(token),),
            ).fetchone()
        return row is not None

    def learner_of(self, session: str) -> str | None:
        """The profile of a learner session, None if there is no such session, it ended or it
        began :data:`LEARNER_SESSION` ago or more."""
        with self._read() as db:
            row = db.execute(
                "SELECT profile FROM class_sessions WHERE id_hash = ? AND kind = 'learner' "
                "AND created_at > ?",
                (token_hash(session), self._before(LEARNER_SESSION)),
            ).fetchone()
        return None if row is None else str(row[0])

    def end_learner_sessions(self, profile: str) -> int:
        """End every session of the learner ``profile`` (a lost phone, a shared computer): each
        cookie opens nothing any more. How many there were."""
        with self._write() as db:
            return int(
                db.execute(
                    "DELETE FROM class_sessions WHERE kind = 'learner' AND profile = ?",
                    (profile,),
                ).rowcount
            )

    def teacher_of(self, session: str) -> int | None:
        """The class of a teacher session, None if there is no such session or it began
        :data:`TEACHER_SESSION` ago or more."""
        with self._read() as db:
            row = db.execute(
                "SELECT class_id FROM class_sessions WHERE id_hash = ? AND kind = 'teacher' "
                "AND created_at > ?",
                (token_hash(session), self._before(TEACHER_SESSION)),
            ).fetchone()
        return None if row is None else int(row[0])

    def end_session(self, session: str) -> None:
        """Forget a session (a teacher or a learner signing out): its cookie opens nothing any
        more."""
        with self._write() as db:
            db.execute("DELETE FROM class_sessions WHERE id_hash = ?", (token_hash(session),))

    def teacher_login(self, key: str, client: str) -> tuple[str, int]:
        """A teacher session ``(session id, class id)`` for the right key.

        Raises:
            KeyRefused: the key opens no class (the failure is counted for ``client``), or
                ``client`` gave :data:`MAX_FAILURES` wrong keys within :data:`FAILURE_WINDOW`
                (``wait``: seconds until it may try again; the key is not even checked).
        """
        wait = self._try(client)
        if wait:
            raise KeyRefused(
                f"teacher key: too many wrong keys; try again in {wait} s",
                f"教师密钥：错误次数太多，请 {wait} 秒后再试",
                wait,
            )
        class_id = self._key_class(key)
        if class_id is None:
            raise KeyRefused(
                "teacher key: expected the key 'attnlab class create' printed, found a key "
                "that opens no class",
                "教师密钥：应为 'attnlab class create' 打印的密钥，实际的密钥不属于任何班级",
            )
        session = secrets.token_urlsafe(32)
        with self._write() as db:  # the teacher sessions that ran out go
            # The right key: this client's tries start again (a teacher on a second device).
            db.execute("DELETE FROM class_key_tries WHERE client = ?", (client,))
            db.execute(
                "DELETE FROM class_sessions WHERE kind = 'teacher' AND created_at <= ?",
                (self._before(TEACHER_SESSION),),
            )
            db.execute(
                "INSERT INTO class_sessions VALUES (?, 'teacher', ?, NULL, ?)",
                (token_hash(session), class_id, self._clock()),
            )
        return session, class_id

    def _before(self, span: timedelta) -> str:
        return (datetime.fromisoformat(self._clock()) - span).isoformat(timespec="microseconds")

    def _try(self, client: str) -> int:
        """Count a try of ``client`` and say whether it may be checked: 0, or the seconds until
        its window ends once :data:`MAX_FAILURES` tries were made in it.

        One statement counts and decides (an upsert: the row is locked while it runs, so 60
        tries at once count 60), on this machine's monotonic clock (a wall clock set back
        would hold the window open for as long): its ``clock`` is the boot, and a window
        opened on another machine or boot is that one's own. ``now`` may be a moment before
        a window another request opened since: that window is not over then, only later.
        """
        now, span = self._monotonic(), FAILURE_WINDOW.total_seconds()
        with self._write() as db:
            window_start, tries = db.execute(
                "INSERT INTO class_key_tries AS t (client, clock, window_start, tries) "
                "VALUES (?, ?, ?, 1) ON CONFLICT (client, clock) DO UPDATE SET "
                "tries = CASE WHEN t.window_start <= ? THEN 1 ELSE t.tries + 1 END, "
                "window_start = CASE WHEN t.window_start <= ? THEN ? ELSE t.window_start END "
                "RETURNING window_start, tries",
                (client, CLOCK_ID, now, now - span, now - span, now),
            ).fetchone()
        if int(tries) <= MAX_FAILURES:
            return 0
        return max(1, math.ceil(float(window_start) + span - now))

    def _key_class(self, key: str) -> int | None:
        head, _, _ = key.strip().partition(".")
        if not (head.isascii() and head.isdigit()) or len(head) > 9:
            return None
        with self._read() as db:
            row = db.execute(
                "SELECT key_salt, key_hash FROM classes WHERE id = ?", (int(head),)
            ).fetchone()
        if row is None:
            return None
        found = key_hash(key.strip(), bytes.fromhex(row[0]))
        return int(head) if hmac.compare_digest(found, row[1]) else None
