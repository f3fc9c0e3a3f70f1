"""Where the progress store lives: a SQLite file (the default) or a PostgreSQL server.

``ATTNLAB_DB`` (or ``--db``) holding a ``postgresql://`` URL puts every profile's progress,
answers, notes and bookmarks in that server (:mod:`attnlab.progress.pg`); unset, the store is
the SQLite file of :mod:`attnlab.progress.db`. Both run the same SQL, written with ``?``
placeholders (the PostgreSQL connection turns them into its own), through a connection that
has what :class:`Connection` describes.

Example::

    >>> redact("postgresql://ann:secret@db.example:5432/course")
    'postgresql://ann:***@db.example:5432/course'
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from typing import Any, Protocol
from urllib.parse import urlsplit, urlunsplit

from attnlab.text.errors import InputError

DB_ENV = "ATTNLAB_DB"
SCHEMES = ("postgresql", "postgres")
_HIDDEN = "***"
_KEYWORD_PASSWORD = re.compile(r"(password\s*=\s*)(?!\*\*\*)('[^']*'|[^\s&]+)", re.IGNORECASE)


class Cursor(Protocol):
    """What the store reads from a statement's result (``sqlite3.Cursor`` and psycopg's)."""

    @property
    def rowcount(self) -> int: ...
    def fetchone(self) -> Any: ...
    def fetchall(self) -> list[Any]: ...


class Connection(Protocol):
    """What the store's modules use of a connection inside a transaction (``sqlite3`` has it;
    :class:`attnlab.progress.pg.PgConnection` gives it to psycopg)."""

    def execute(self, sql: str, parameters: Sequence[Any] = ..., /) -> Cursor: ...
    def executemany(self, sql: str, parameters: Iterable[Sequence[Any]], /) -> Cursor: ...


def is_url(location: object) -> bool:
    """Whether ``location`` names a PostgreSQL server (``postgresql://...``), not a file."""
    return (
        isinstance(location, str)
        and location.split("://", 1)[0].lower() in SCHEMES
        and ("://" in location)
    )


def redact(url: str) -> str:
    """``url`` with its password (in the user part or a ``password=`` parameter) replaced by
    ``***``: what messages show."""
    parts = urlsplit(url)
    netloc = parts.netloc
    user, at, host = netloc.rpartition("@")
    if at and ":" in user:
        netloc = f"{user.split(':', 1)[0]}:{_HIDDEN}@{host}"
    query = "&".join(
        f"password={_HIDDEN}" if item.lower().startswith("password=") else item
        for item in parts.query.split("&")
    )
    shown = url  # as typed, unless a password is taken out of it
    if netloc != parts.netloc or query != parts.query:
        shown = urlunsplit((parts.scheme, netloc, parts.path, query if parts.query else "", ""))
    return _KEYWORD_PASSWORD.sub(rf"\1{_HIDDEN}", shown)  # libpq's "host=... password=..." form


def scrub(text: str, url: str) -> str:
    """``text`` (a driver's message) with any password of ``url`` in it hidden."""
    parts = urlsplit(url)
    secrets = [parts.password or ""]
    secrets += [
        q.split("=", 1)[1] for q in parts.query.split("&") if q.lower().startswith("password=")
    ]
    for secret in (s for s in secrets if s):
        text = text.replace(secret, _HIDDEN)
    return text


def resolve(db: str | None) -> str | None:
    """The server's URL from ``db``, else ``$ATTNLAB_DB``; None for the SQLite file.

    Raises:
        InputError: the value is not a ``postgresql://`` URL (one line, password hidden).
    """
    chosen = db if db else os.environ.get(DB_ENV) or None
    if chosen is None:
        return None
    if not is_url(chosen):
        source = "--db" if db else DB_ENV
        shown = redact(chosen)[:80]
        raise InputError(
            f"{source}: expected a PostgreSQL URL such as postgresql://user@host:5432/dbname, "
            f"found {shown!r}",
            f"{source}：应为 PostgreSQL 地址，例如 postgresql://user@host:5432/dbname，"
            f"实际是 {shown!r}",
        )
    try:
        urlsplit(chosen).port  # noqa: B018 - parsing it raises for a port that is no number
    except ValueError:
        raise InputError(
            f"{DB_ENV if not db else '--db'}: expected a port number in the URL, found "
            f"{redact(chosen)[:80]!r}",
            f"{DB_ENV if not db else '--db'}：地址中的端口应为数字，实际是 {redact(chosen)[:80]!r}",
        ) from None
    return chosen
