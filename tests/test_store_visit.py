"""``store.learner_state(visit)``: what a page shows of a learner, in one statement: the same as
the separate reads; a section page's visit remembered with it; a busy or read-only store skips
the visit and still reads (both backends)."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from store_backends import PgSchemas
from store_support import lock_held
from tiers import examples

from attnlab.progress.store import ProgressStore

#: One write a learner can make: (kind, section, value).
WRITES = st.lists(
    st.tuples(
        st.sampled_from(["complete", "assess", "attempt", "note", "delete", "bookmark", "visit"]),
        st.integers(0, 19),
        st.integers(0, 2),
    ),
    max_size=25,
)


def _apply(store: ProgressStore, writes: list[tuple[str, int, int]]) -> None:
    for kind, section, value in writes:
        if kind == "complete":
            store.mark_complete(section)
        elif kind == "assess":
            store.set_assessment(section, ("understood", "review")[value % 2])
        elif kind == "attempt":
            correct = (None, True, False)[value]
            exercise = f"check-{section}" if correct is None else ("4a", "9d", "1b")[section % 3]
            store.record_attempt(exercise, f"answer {section}", correct)
        elif kind == "note":
            store.add_note(section, f"note {section} {value}")
        elif kind == "delete":
            notes = store.notes(section)
            if notes:
                store.delete_note(notes[0].id)
        elif kind == "bookmark":
            store.toggle_bookmark(section)
        else:
            store.set_last_section(section)


def _clock() -> object:
    ticks = itertools.count()
    # a coarse clock: several writes share one time, so the tie-breaking order is tested too
    return lambda: f"2026-12-02T10:00:{next(ticks) // 3:02d}+00:00"


@settings(
    max_examples=examples(25),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(writes=WRITES)
def test_the_one_statement_reads_what_the_separate_reads_do(
    new_location, writes: list[tuple[str, int, int]]
) -> None:  # type: ignore[no-untyped-def]
    with ProgressStore(new_location(), clock=_clock()) as store:  # type: ignore[arg-type]
        _apply(store, writes)
        found = store.learner_state()
        assert found.summary == store.summary()
        assert found.attempts == store.attempts()
        assert found.notes == store.notes()
        assert found.bookmarks == store.bookmarks()


def test_the_visit_is_kept_and_read_in_the_same_statement(store_location) -> None:  # type: ignore[no-untyped-def]
    with ProgressStore(store_location) as store:
        store.mark_complete(2)
        found = store.learner_state(visit=7)
        assert (found.summary.last_section, found.summary.completed) == (7, (2,))
        assert store.summary().last_section == 7
        with pytest.raises(ValueError):  # not a section: nothing written
            store.learner_state(visit=20)
        assert store.learner_state(visit=8).summary.last_section == 8
        assert store.learner_state().summary.last_section == 8


def _synchronous(store: ProgressStore) -> int:
    return int(store._conn.execute("PRAGMA synchronous").fetchone()[0])


@pytest.mark.process
def test_a_busy_sqlite_file_skips_the_visit_and_still_reads(tmp_path: Path) -> None:
    db = tmp_path / "progress.sqlite3"
    with ProgressStore(db, busy_timeout=0.2) as store:
        store.set_last_section(3)
        with lock_held(db):
            assert store.learner_state(visit=9).summary.last_section == 3
        assert store.summary().last_section == 3
        assert _synchronous(store) == 2, "answers are still synced to the disk (FULL)"


def test_only_the_visit_skips_the_wait_for_the_disk_on_sqlite(tmp_path: Path) -> None:
    with ProgressStore(tmp_path / "progress.sqlite3") as store:
        seen = []
        store._conn.set_trace_callback(seen.append)
        store.learner_state(visit=4)
        store.mark_complete(4)
        store._conn.set_trace_callback(None)
        assert _synchronous(store) == 2
    assert seen[0] == "PRAGMA synchronous = NORMAL" and "visits" in seen[2]
    back = seen.index("PRAGMA synchronous = FULL")
    assert "COMMIT" in seen[back - 1], "FULL again right after the visit's commit"
    assert "completions" in " ".join(seen[back:]), "the answer is written under FULL"


def test_a_busy_visit_on_postgresql_is_skipped_and_the_state_still_read(
    pg_schemas: PgSchemas,
) -> None:
    import psycopg

    url = pg_schemas.new()
    with ProgressStore(url, "ann", busy_timeout=0.5) as ann:
        ann.set_last_section(3)
        with psycopg.connect(url) as other:  # another writer holds ann's visit row
            other.execute("UPDATE visits SET section = 5 WHERE profile = 'ann'")
            assert ann.learner_state(visit=9).summary.last_section == 3
            other.rollback()
        assert ann.summary().last_section == 3
        assert ann.learner_state(visit=9).summary.last_section == 9
        assert ann.summary().last_section == 9
