"""The progress store: round trips, migrations, bad files, export/import and the CLI."""

from __future__ import annotations

import json
import re
import sqlite3
from itertools import count
from pathlib import Path

import pytest
from typer.testing import CliRunner

from attnlab.cli.main import app
from attnlab.progress.db import APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION, connect, migrate
from attnlab.progress.exchange_files import read_export
from attnlab.progress.store import ProgressStore, StoreError
from attnlab.text.errors import InputError

#: Verdict data as the answer service keeps it with an attempt.
VERDICT = '{"kind": "wrong", "mistakes": ["no_scale"], "slips": []}'


def fake_clock(start: int = 0):
    """ISO times one second apart, so "newer" is unambiguous in tests."""
    ticks = count(start)

    def now() -> str:
        t = next(ticks)
        return f"2026-11-29T10:{t // 60:02d}:{t % 60:02d}.000000+00:00"

    return now


@pytest.fixture
def db(store_location: Path | str) -> Path | str:
    """The store of a test that runs on SQLite and on PostgreSQL (tests/store_backends.py)."""
    return store_location


@pytest.fixture
def sqlite_db(tmp_path: Path) -> Path:
    """The file of a test of SQLite's own checks."""
    return tmp_path / "progress.sqlite3"


def test_round_trip_of_every_kind_of_entry(db: Path) -> None:
    with ProgressStore(db) as store:
        store.mark_complete(4)
        store.mark_complete(0)
        store.set_assessment(4, "review")
        store.set_assessment(0, "understood")
        store.record_attempt("4c", "1.131", True)
        store.record_attempt("4d", "0.566", False, VERDICT)
        store.record_attempt("check-4", "free text", None)
        store.set_last_section(5)
    with ProgressStore(db) as again:  # a fresh connection reads what the first one wrote
        s = again.summary()
        attempts = again.attempts()
    assert s.completed == (0, 4)
    assert s.assessments == {0: "understood", 4: "review"}
    assert (s.last_section, s.attempts, s.correct) == (5, 2, 1)
    assert s.to_review == (4,) and s.percent == 10
    assert s.next_section() == 1 and s.unfinished()[:4] == (1, 2, 3, 4)  # 4: "review"
    assert [(a["exercise"], a["correct"], a["diagnosis"]) for a in attempts] == [
        ("4c", True, None), ("4d", False, VERDICT), ("check-4", None, None)
    ]  # fmt: skip


def test_profiles_are_separate_and_reset_touches_only_one(db: Path) -> None:
    with ProgressStore(db, "alice") as alice, ProgressStore(db, "李雷") as li:
        alice.mark_complete(1)
        li.mark_complete(2)
        li.set_assessment(2, "review")
        assert alice.summary().completed == (1,) and li.summary().completed == (2,)
        li.reset()
        assert li.summary().completed == () and li.summary().assessments == {}
        assert alice.summary().completed == (1,)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda s: s.mark_complete(20), r"section must be an integer 0-19"),
        (lambda s: s.mark_complete(True), r"section must be an integer 0-19"),
        (lambda s: s.set_assessment(3, "maybe"), r"status must be one of understood, review"),
        (lambda s: s.record_attempt("99z", "1", True), r"exercise must be an id such as"),
    ],
)
def test_bad_arguments_are_refused(db: Path, call, message: str) -> None:
    with ProgressStore(db) as store, pytest.raises(ValueError, match=message):
        call(store)


def test_bad_profile_name(db: Path) -> None:
    with pytest.raises(ValueError, match=r"profile: expected 1-64 letters, digits"):
        ProgressStore(db, "a b/c")


def test_file_is_wal_with_schema_version_and_our_application_id(sqlite_db: Path) -> None:
    ProgressStore(sqlite_db).close()
    conn = sqlite3.connect(sqlite_db)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    rows = conn.execute("SELECT version FROM migrations ORDER BY version").fetchall()
    assert [r[0] for r in rows] == [m[0] for m in MIGRATIONS]


def test_an_old_schema_is_migrated_and_keeps_its_data(sqlite_db: Path) -> None:
    conn = connect(sqlite_db)
    assert migrate(conn, sqlite_db, upto=1) == [1]
    conn.execute(
        "INSERT INTO attempts (profile, exercise, answer, correct, created_at) "
        "VALUES ('default', '9a', '0.426', 1, '2026-01-01T00:00:00.000000+00:00')"
    )
    conn.close()
    with ProgressStore(sqlite_db) as store:
        assert store.migrations() == [(m[0], m[1]) for m in MIGRATIONS]
        assert store.attempts()[0]["answer"] == "0.426"
        store.record_attempt("9c", "0.5", False, VERDICT)
        assert store.attempts("9c")[-1]["diagnosis"] == VERDICT


def test_a_newer_schema_is_refused(sqlite_db: Path) -> None:
    ProgressStore(sqlite_db).close()
    conn = sqlite3.connect(sqlite_db)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    with pytest.raises(StoreError, match=rf"schema version {SCHEMA_VERSION + 1}, newer than"):
        ProgressStore(sqlite_db)


def _foreign_db(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE photos (id INTEGER PRIMARY KEY, name TEXT)")
    conn.execute("INSERT INTO photos VALUES (1, 'cat.jpg')")
    conn.commit()
    conn.close()


def _corrupt_db(path: Path) -> None:
    ProgressStore(path).close()
    data = bytearray(path.read_bytes())
    data[100:] = b"\xff" * (len(data) - 100)  # keep the header, wreck every page
    path.write_bytes(bytes(data))


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: p.write_text("just some notes\n"), r"is not an attnlab progress database"),
        (lambda p: p.write_bytes(b"SQLite format 3\x00" + b"\x00" * 50), r"cannot be read"),
        (_foreign_db, r"belongs to another program .*tables photos"),
        (_corrupt_db, r"(is corrupted|cannot be read as a database)"),
    ],
)
def test_bad_files_are_reported_with_their_path_and_left_untouched(
    sqlite_db: Path, make, message
) -> None:
    make(sqlite_db)
    before = sqlite_db.read_bytes()
    with pytest.raises(StoreError, match=message) as info:
        ProgressStore(sqlite_db)
    assert str(sqlite_db) in str(info.value)
    assert sqlite_db.read_bytes() == before, "the bad file was modified"
    result = CliRunner().invoke(app, ["progress", "--data-dir", str(sqlite_db.parent)])
    assert result.exit_code == 2
    assert str(sqlite_db) in result.stderr and "Traceback" not in result.output + result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert sqlite_db.read_bytes() == before


def _filled(path: Path, profile: str = "default", start: int = 0) -> ProgressStore:
    store = ProgressStore(path, profile, clock=fake_clock(start))
    store.mark_complete(3)
    store.set_assessment(3, "review")
    store.record_attempt("4c", "1.131", True)
    store.set_last_section(4)
    return store


def test_export_then_import_into_an_empty_profile_reproduces_it(db: Path) -> None:
    with _filled(db) as src, ProgressStore(db, "copy") as dst:
        exported = src.export_dict()
        dst.import_dict(json.loads(json.dumps(exported)))
        again = dst.export_dict()
    for key in ("completed", "assessments", "attempts", "last_section"):
        assert again[key] == exported[key], key


def test_import_keeps_the_newer_entry_and_loses_nothing(db: Path, new_location) -> None:
    with _filled(new_location(), start=0) as old:
        old.record_attempt("5c", "0.599", True)
        old.set_assessment(7, "understood")
        stale = old.export_dict()  # older times: 10:00..
    with _filled(db, start=500) as store:  # newer times: 10:04..
        store.set_assessment(3, "understood")
        store.import_dict(stale)
        s = store.summary()
        exercises = sorted(a["exercise"] for a in store.attempts())
    assert s.assessments[3] == "understood", "an older import overwrote a newer assessment"
    assert s.assessments[7] == "understood", "an entry only in the file was lost"
    assert exercises == ["4c", "4c", "5c"]  # the same answer at two different times is kept twice
    assert s.last_section == 4


def test_importing_the_same_file_twice_adds_nothing(db: Path) -> None:
    with _filled(db) as store:
        data = store.export_dict()
        store.import_dict(data)
        store.import_dict(data)
        assert len(store.attempts()) == 1


def _export(**changes: object) -> dict:
    base = {
        "format": "attnlab-progress", "version": 1, "profile": "default",
        "exported_at": "2026-11-29T10:00:00+00:00",
        "completed": [{"section": 1, "at": "2026-11-29T10:00:00+00:00"}],
        "assessments": [], "attempts": [], "last_section": None,
    }  # fmt: skip
    base.update(changes)
    return base


REFUSED = [
    ([1, 2], r"progress file: expected a JSON object, found 'list'"),
    (_export(format="photos"), r"format: expected 'attnlab-progress'"),
    (_export(version=3), r"version: expected the integer 1 or 2, found 3"),
    ({**_export(), "extra": 1}, r"progress file: expected keys"),
    (_export(profile="a/b"), r"profile: expected 1-64 letters, digits"),
    (_export(completed=[{"section": 20, "at": "2026-11-29T10:00:00+00:00"}]),
     r"completed\[0\]\.section: expected an integer 0-19, found 20"),
    (_export(completed=[{"section": 1, "at": "yesterday"}]),
     r"completed\[0\]\.at: expected an ISO"),
    (_export(completed=[{"section": 1, "at": "2026-11-29T10:00:00"}]), r"with a UTC offset"),
    (_export(assessments=[{"section": 1, "status": "meh", "at": "2026-11-29T10:00:00Z"}]),
     r"assessments\[0\]\.status: expected understood or review, found 'meh'"),
    (_export(attempts=[{"exercise": "zz", "answer": "1", "correct": True, "diagnosis": None,
                        "at": "2026-11-29T10:00:00Z"}]),
     r"attempts\[0\]\.exercise: expected a known exercise id"),
    (_export(attempts=[{"exercise": "4c", "answer": "1", "correct": "yes", "diagnosis": None,
                        "at": "2026-11-29T10:00:00Z"}]),
     r"attempts\[0\]\.correct: expected true, false or null"),
    (_export(last_section={"section": 1}),
     r"last_section: expected an object with keys at, section"),
]  # fmt: skip


@pytest.mark.parametrize(("data", "message"), REFUSED)
def test_bad_exports_are_refused_and_change_nothing(db: Path, data: object, message: str) -> None:
    with _filled(db) as store:
        before = store.export_dict()
        with pytest.raises(InputError, match=message):
            store.import_dict(data)
        after = store.export_dict()
    before.pop("exported_at"), after.pop("exported_at")
    assert after == before


def test_a_late_error_in_a_file_rolls_back_its_good_entries(db: Path) -> None:
    bad = _export(
        completed=[{"section": 5, "at": "2026-11-29T10:00:00Z"}],
        last_section={"section": 99, "at": "2026-11-29T10:00:00Z"},
    )
    with ProgressStore(db) as store:
        with pytest.raises(InputError, match=r"last_section\.section"):
            store.import_dict(bad)
        assert store.summary().completed == ()


def run(*args: str, data_dir: Path, input: str | None = None):
    return CliRunner().invoke(app, [*args[:1], "--data-dir", str(data_dir), *args[1:]], input=input)


def test_cli_progress_summary_in_both_languages(tmp_path: Path) -> None:
    with _filled(tmp_path / "progress.sqlite3"):
        pass
    zh = CliRunner().invoke(app, ["progress", "--data-dir", str(tmp_path)])
    assert zh.exit_code == 0, zh.output
    assert "本周进度：20 节中已完成 1 节（5%）" in zh.output
    assert "标记为需要复习：第 3 节" in zh.output and "接下来：核心目标" in zh.output
    en = CliRunner().invoke(app, ["--lang", "en", "progress", "--data-dir", str(tmp_path)])
    assert "Week progress: 1 of 20 sections (5%)" in en.output
    assert "Marked review again: Section 3" in en.output
    assert "Next: Core goal" in en.output  # the first unfinished section, in page order
    assert "Run attnlab quiz to continue there" in en.output


def test_cli_export_import_reset(tmp_path: Path) -> None:
    home, other = tmp_path / "home", tmp_path / "other"
    home.mkdir()
    with _filled(home / "progress.sqlite3"):
        pass
    out = tmp_path / "mine.json"
    out.write_text("old content that must be replaced whole")
    r = CliRunner().invoke(
        app, ["--lang", "en", "progress", "export", str(out), "--data-dir", str(home)]
    )
    assert r.exit_code == 0, r.output
    data = read_export(out)
    assert isinstance(data, dict) and data["completed"][0]["section"] == 3
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []
    r = CliRunner().invoke(
        app, ["--lang", "en", "progress", "--data-dir", str(other), "import", str(out)]
    )
    assert r.exit_code == 0, r.output
    with ProgressStore(other / "progress.sqlite3") as store:
        assert store.summary().completed == (3,)
    r = CliRunner().invoke(app, ["--lang", "en", "progress", "reset", "--data-dir", str(other)])
    assert r.exit_code == 2 and "expected --yes" in r.stderr
    r = CliRunner().invoke(
        app, ["--lang", "en", "progress", "reset", "--yes", "--data-dir", str(other)]
    )
    assert r.exit_code == 0, r.output
    with ProgressStore(other / "progress.sqlite3") as store:
        assert store.summary().completed == ()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, r"expected a progress file, found no such file"),
        ("{not json", r"expected JSON, found invalid content"),
        (json.dumps({"format": "something-else"}), r"format: expected 'attnlab-progress'"),
    ],
)
def test_cli_import_refuses_bad_files_in_one_line(tmp_path: Path, content, message) -> None:
    path = tmp_path / "in.json"
    if content is not None:
        path.write_text(content)
    with _filled(tmp_path / "progress.sqlite3") as store:
        before = store.export_dict()["completed"]
    r = CliRunner().invoke(
        app, ["--lang", "en", "progress", "import", str(path), "--data-dir", str(tmp_path)]
    )
    assert r.exit_code == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and str(path) in lines[0], r.stderr
    assert re.search(message, lines[0]), lines[0]
    with ProgressStore(tmp_path / "progress.sqlite3") as store:
        assert store.export_dict()["completed"] == before


def test_data_dir_and_profile_from_the_environment(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("ATTNLAB_DATA_DIR", str(tmp_path / "env"))
    monkeypatch.setenv("ATTNLAB_PROFILE", "class-3")
    with ProgressStore.open() as store:
        assert store.path == tmp_path / "env" / "progress.sqlite3"
        assert store.profile == "class-3"
