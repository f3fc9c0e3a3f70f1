"""``store.visiting(section)``: a section page remembers the visit and reads the learner's state
in one transaction; a busy or read-only store skips the visit and still reads (both backends)."""

from __future__ import annotations

from pathlib import Path

import pytest
from store_backends import PgSchemas
from store_support import lock_held

from attnlab.progress import pg
from attnlab.progress.db import APPLICATION_ID
from attnlab.progress.store import ProgressStore


def test_the_visit_is_kept_and_read_in_the_same_block(store_location) -> None:  # type: ignore[no-untyped-def]
    with ProgressStore(store_location) as store:
        store.mark_complete(2)
        with store.visiting(7):
            summary = store.summary()
            assert (summary.last_section, summary.completed) == (7, (2,))
        assert store.summary().last_section == 7
        with pytest.raises(ValueError), store.visiting(20):  # not a section: nothing written
            pass
        assert store.summary().last_section == 7


def test_an_error_in_the_block_writes_nothing(store_location) -> None:  # type: ignore[no-untyped-def]
    with ProgressStore(store_location) as store:
        store.set_last_section(3)
        with pytest.raises(RuntimeError), store.visiting(9):
            raise RuntimeError("the page failed")
        assert store.summary().last_section == 3


def test_a_busy_sqlite_file_skips_the_visit_and_still_reads(tmp_path: Path) -> None:
    db = tmp_path / "progress.sqlite3"
    with ProgressStore(db, busy_timeout=0.2) as store:
        store.set_last_section(3)
        with lock_held(db), store.visiting(9):
            assert store.summary().last_section == 3
        assert store.summary().last_section == 3


def test_a_busy_profile_on_postgresql_skips_the_visit_and_still_reads(
    pg_schemas: PgSchemas,
) -> None:
    import psycopg

    url = pg_schemas.new()
    with ProgressStore(url, "ann", busy_timeout=0.5) as ann:
        ann.set_last_section(3)
        with psycopg.connect(url, autocommit=True) as other:  # ann's writer elsewhere
            other.execute(
                "SELECT pg_advisory_lock(%s, %s)", (APPLICATION_ID, pg.profile_key("ann"))
            )
            with ann.visiting(9):
                assert ann.summary().last_section == 3
        assert ann.summary().last_section == 3
        with ann.visiting(9):
            pass
        assert ann.summary().last_section == 9
