"""The store tests run against both backends: the ``store_location`` fixture (a pytest plugin
loaded by conftest) gives a SQLite file, or a fresh PostgreSQL schema on the server named by
``ATTNLAB_TEST_PG`` (a libpq URL of a database the tests may create schemas in), dropped after
the test. Without ``ATTNLAB_TEST_PG`` the PostgreSQL cases skip with the reason, unless
``ATTNLAB_REQUIRE_PG=1`` (CI), where they fail."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

BACKENDS = ("sqlite", "postgresql")
PG_ENV, REQUIRE_ENV = "ATTNLAB_TEST_PG", "ATTNLAB_REQUIRE_PG"
#: A new location each call: a SQLite file's path, or a PostgreSQL URL of a new schema.
NewLocation = Callable[[], "Path | str"]


def pg_server() -> str:
    """The test server's URL; skips (fails under ``ATTNLAB_REQUIRE_PG=1``) when none is set."""
    url = os.environ.get(PG_ENV)
    if url:
        if not url.startswith(("postgresql://", "postgres://")) or "\n" in url:
            pytest.fail(f"{PG_ENV}: expected one postgresql:// URL, found {url!r}")
        return url
    reason = f"{PG_ENV} is not set: the PostgreSQL store tests did not run (.ci/run sets it)"
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"{REQUIRE_ENV}=1 but {reason}")
    pytest.skip(reason)


def with_schema(url: str, schema: str) -> str:
    """``url`` whose connections use ``schema`` (libpq's ``options=-c search_path=...``) and
    carry its name as their ``application_name``."""
    joiner = "&" if "?" in url else "?"
    return f"{url}{joiner}options={quote(f'-c search_path={schema}')}&application_name={schema}"


class PgSchemas:
    """Fresh schemas on the test server, each dropped (with this process's pool) at the end."""

    def __init__(self, server: str) -> None:
        self.server, self.made = server, []  # type: list[tuple[str, str]]

    def new(self) -> str:
        """The URL of a new, empty schema."""
        import psycopg

        schema = f"t_{uuid.uuid4().hex[:16]}"
        with psycopg.connect(self.server, autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA {schema}")
        url = with_schema(self.server, schema)
        self.made.append((schema, url))
        return url

    def drop(self) -> None:
        """Close the pools of the schemas made and drop them."""
        import psycopg

        from attnlab.progress import pg

        for _, url in self.made:
            pg.close_database(url)
        with psycopg.connect(self.server, autocommit=True) as conn:
            for schema, _ in self.made:
                conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


@pytest.fixture
def pg_schemas() -> Iterator[PgSchemas]:
    """Fresh schemas on the test server (the test skips without one)."""
    schemas = PgSchemas(pg_server())
    yield schemas
    schemas.drop()


@pytest.fixture(params=BACKENDS)
def new_location(request: pytest.FixtureRequest, tmp_path: Path) -> NewLocation:
    """Makes fresh store locations of one backend: a file in ``tmp_path``, or a new schema."""
    if request.param == "sqlite":
        names = iter(range(1_000_000))
        return lambda: tmp_path / f"store{next(names)}" / "progress.sqlite3"
    schemas: PgSchemas = request.getfixturevalue("pg_schemas")
    return schemas.new


@pytest.fixture
def store_location(new_location: NewLocation) -> Path | str:
    """Where a test's store lives: a SQLite file or a PostgreSQL schema (one test per backend)."""
    return new_location()


@pytest.fixture
def store_at(new_location: NewLocation) -> Callable[..., Path | str]:
    """``store_at(name)``: the location named ``name`` (made on first use) on one backend."""
    made: dict[str, Path | str] = {}

    def at(name: str = "main") -> Path | str:
        if name not in made:
            made[name] = new_location()
        return made[name]

    return at


@pytest.fixture
def db_url(new_location: NewLocation) -> str | None:
    """``--db`` of a test run on both backends: None (the SQLite file in the data folder), or a
    fresh schema's URL."""
    where = new_location()
    return where if isinstance(where, str) else None


def store_args(where: Path | str) -> list[str]:
    """The CLI options that open the store at ``where`` (``--data-dir`` or ``--db``)."""
    return ["--db", where] if isinstance(where, str) else ["--data-dir", str(where.parent)]


def app_args(where: Path | str) -> tuple[Path, str | None]:
    """``create_app``'s ``data_dir`` and ``db`` for the store at ``where``."""
    return (Path(os.devnull), where) if isinstance(where, str) else (where.parent, None)


@pytest.fixture
def db_env(db_url: str | None, monkeypatch: pytest.MonkeyPatch) -> str | None:
    """Runs a whole test on both backends through the environment: on PostgreSQL,
    ``ATTNLAB_DB`` names a fresh schema, so every store the test opens (in this process, the
    web app, the commands it starts) is there; on SQLite it is unset."""
    if db_url is None:
        monkeypatch.delenv("ATTNLAB_DB", raising=False)
    else:
        monkeypatch.setenv("ATTNLAB_DB", db_url)
    return db_url
