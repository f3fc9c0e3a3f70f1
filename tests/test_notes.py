"""Notes and bookmarks in the progress store: saving, deleting, the migration of a store made
before them, and export/import (newer wins, nothing duplicated, old export files still read)."""

from __future__ import annotations

import sqlite3
from itertools import count
from pathlib import Path

import pytest

from attnlab.inputs.text_limits import KINDS, TextError
from attnlab.progress import db as store_db
from attnlab.progress.exchange import NoteError, validate_export
from attnlab.progress.store import ProgressStore
from attnlab.text.errors import InputError

DB = "progress.sqlite3"
MAX_TEXT = KINDS["note"].most


def _clock(start: int = 0):  # type: ignore[no-untyped-def]
    ticks = count(start)
    return lambda: f"2026-12-01T10:{next(ticks):02d}:00.000000+00:00"


def _store(where: Path | str, start: int = 0) -> ProgressStore:
    return ProgressStore(where, clock=_clock(start))


def test_notes_are_saved_listed_and_deleted(store_at) -> None:
    with _store(store_at()) as store:
        first = store.add_note(5, "  each row sums to 1  ")
        second = store.add_note(5, "softmax along dim=-1")
        store.add_note(10, "the future gets exactly 0")
        assert first.text == "each row sums to 1"  # blanks around are not kept
        assert [n.text for n in store.notes(5)] == ["each row sums to 1", "softmax along dim=-1"]
        edited = store.save_note(5, first.id, "rows sum to 1")
        assert (edited.created_at, edited.text) == (first.created_at, "rows sum to 1")
        assert store.delete_note(second.id[:4]).id == second.id  # a unique prefix is enough
        assert [n.section for n in store.notes()] == [5, 10]


def test_bad_notes_are_refused_and_nothing_is_written(store_at) -> None:
    with _store(store_at()) as store:
        note = store.add_note(3, "Q asks, K answers")
        with pytest.raises(ValueError, match=r"section must be an integer 0-19 .*, got 20"):
            store.add_note(20, "x")
        with pytest.raises(TextError, match=r"expected some text .*found none"):
            store.add_note(3, "   ")
        with pytest.raises(
            TextError, match=rf"at most {MAX_TEXT} characters, found {MAX_TEXT + 1}"
        ):
            store.add_note(3, "x" * (MAX_TEXT + 1))
        with pytest.raises(
            NoteError, match=r"expected a note of section 4, found one of section 3"
        ):
            store.save_note(4, note.id, "moved?")
        with pytest.raises(NoteError, match=r"found no note for 'ffff'"):
            store.delete_note("ffff")
        with pytest.raises(NoteError, match=rf"found no note for '{note.id[:2]}'"):
            store.delete_note(note.id[:2])  # too short to name one note safely
        assert [n.text for n in store.notes()] == ["Q asks, K answers"]


def test_bookmarks_toggle_per_profile(store_at) -> None:
    with _store(store_at()) as store, ProgressStore(store_at(), "other") as other:
        assert store.toggle_bookmark(8) is True
        assert store.toggle_bookmark(12) is True
        assert store.toggle_bookmark(8) is False
        other.add_note(1, "someone else's")
        assert store.bookmarks() == (12,)
        assert other.bookmarks() == ()
        assert store.notes() == []


def test_a_store_made_before_notes_is_migrated_and_keeps_its_progress(tmp_path: Path) -> None:
    path = tmp_path / DB
    conn = store_db.connect(path)  # the file as the previous release left it: schema 2
    assert store_db.migrate(conn, path, upto=2) == [1, 2]
    conn.execute("INSERT INTO completions VALUES ('default', 4, '2026-11-30T09:00:00+00:00')")
    conn.close()
    with _store(path) as store:
        assert [v for v, _ in store.migrations()] == [v for v, _, _ in store_db.MIGRATIONS]
        assert store.summary().completed == (4,)
        store.add_note(4, "x @ w_q gives the query")
        assert store.toggle_bookmark(4)
    with sqlite3.connect(path) as raw:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == store_db.SCHEMA_VERSION


def test_export_import_round_trip_without_duplicates(store_at) -> None:
    with _store(store_at("a")) as a:
        kept = a.add_note(5, "rows sum to 1")
        gone = a.add_note(6, "to delete")
        a.delete_note(gone.id)
        a.toggle_bookmark(8)
        a.toggle_bookmark(9)
        a.toggle_bookmark(9)
        data = a.export_dict()
    assert data["version"] == 2
    assert [n["deleted"] for n in data["notes"]] == [False, True]
    assert data["bookmarks"] == [
        {"section": 8, "marked": True, "at": data["bookmarks"][0]["at"]},
        {"section": 9, "marked": False, "at": data["bookmarks"][1]["at"]},
    ]
    with _store(store_at("b"), start=30) as b:
        assert b.import_dict(data)["notes"] == 2
        b.import_dict(data)  # twice: still one copy of everything
        assert [(n.id, n.text) for n in b.notes()] == [(kept.id, "rows sum to 1")]
        assert b.bookmarks() == (8,)
        assert b.export_dict()["notes"] == data["notes"]


def test_the_newer_edit_wins_and_a_deletion_is_not_undone(store_at) -> None:
    with _store(store_at("a")) as a:
        note = a.add_note(5, "first version")
        other = a.add_note(7, "still here in the old export")
        old = a.export_dict()
    with _store(store_at("b"), start=30) as b:  # later clock: b's edits are newer
        b.import_dict(old)
        b.save_note(5, note.id, "edited later")
        b.delete_note(other.id)
        b.toggle_bookmark(3)
        newer = b.export_dict()
        b.import_dict(old)  # the older file changes nothing
        assert [n.text for n in b.notes()] == ["edited later"]
    with _store(store_at("a"), start=10) as a:
        a.import_dict(newer)
        assert [n.text for n in a.notes()] == ["edited later"]
        assert a.bookmarks() == (3,)


def test_a_version_1_export_still_imports(store_at) -> None:
    old = {
        "format": "attnlab-progress", "version": 1, "profile": "default",
        "exported_at": "2026-11-29T10:00:00+00:00",
        "completed": [{"section": 1, "at": "2026-11-29T10:00:00+00:00"}],
        "assessments": [], "attempts": [], "last_section": None,
    }  # fmt: skip
    with _store(store_at()) as store:
        assert store.import_dict(old) == {"completed": 1, "assessments": 0, "attempts": 0,
                                          "notes": 0}  # fmt: skip
        assert store.summary().completed == (1,)


def _v2(**changes: object) -> dict:
    base = {
        "format": "attnlab-progress", "version": 2, "profile": "default",
        "exported_at": "2026-11-29T10:00:00+00:00", "completed": [], "assessments": [],
        "attempts": [], "last_section": None, "bookmarks": [],
        "notes": [{"id": "0b7e2a52-52e4-4a3e-9d2e-4a2b8f0c1d11", "section": 5, "text": "hi",
                   "created": "2026-11-29T10:00:00+00:00", "at": "2026-11-29T10:00:00+00:00",
                   "deleted": False}],
    }  # fmt: skip
    base.update(changes)
    return base


def _note(**changes: object) -> dict:
    return {**_v2()["notes"][0], **changes}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({k: v for k, v in _v2().items() if k != "notes"}, r"progress file: expected keys"),
        (_v2(notes=[_note(id="42")]), r"notes\[0\]\.id: expected a lowercase UUID .*, found '42'"),
        (_v2(notes=[_note(section=20)]), r"notes\[0\]\.section: expected an integer 0-19"),
        (_v2(notes=[_note(text="")]), r"notes\[0\]\.text: expected some text \(1-2000 char"),
        (_v2(notes=[_note(deleted=0)]), r"notes\[0\]\.deleted: expected true or false, found 0"),
        (_v2(notes=[_note(at="today")]), r"notes\[0\]\.at: expected an ISO 8601 time"),
        (_v2(bookmarks=[{"section": 1, "marked": 1, "at": "2026-11-29T10:00:00+00:00"}]),
         r"bookmarks\[0\]\.marked: expected true or false, found 1"),
    ],
)  # fmt: skip
def test_bad_note_entries_refuse_the_whole_file(data: dict, message: str) -> None:
    with pytest.raises(InputError, match=message):
        validate_export(data)
