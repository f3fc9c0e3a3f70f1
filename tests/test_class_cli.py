"""``attnlab class``: create, invite, list, report, export and import, round trip through the
web, and one line with exit 2 (nothing written) for a wrong class id or file; on SQLite (a
store's folder) and on PostgreSQL (a fresh schema's URL, given with ``--db``)."""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path
from typing import Any

import pytest
from class_support import EXERCISE, joined, no_scale_answer
from typer.testing import CliRunner
from web_support import post_form

from attnlab.cli.main import app
from attnlab.progress.store import FILE_NAME, ProgressStore

Home = Path | str  # a store's folder, or a PostgreSQL URL


@pytest.fixture
def home_of(store_at: Any) -> Any:
    """``home_of(name)``: the store named ``name`` on this test's backend."""

    def of(name: str) -> Home:
        where = store_at(name)
        return where if isinstance(where, str) else where.parent

    return of


def _run(home: Home, *args: str, lang: str = "en") -> Any:
    where = ["--db", home] if isinstance(home, str) else ["--data-dir", str(home)]
    return CliRunner().invoke(app, [*args, *where, "--lang", lang])


def _open(home: Home, profile: str) -> ProgressStore:
    return ProgressStore(home if isinstance(home, str) else home / FILE_NAME, profile)


def _state(home: Home) -> object:
    """Everything the store holds: the file's bytes, or every row of every table."""
    if isinstance(home, Path):
        return (home / FILE_NAME).read_bytes() if (home / FILE_NAME).exists() else None
    import psycopg

    with psycopg.connect(home) as conn:
        tables = [r[0] for r in conn.execute("SELECT table_name FROM information_schema.tables "
                                             "WHERE table_schema = current_schema()")]  # fmt: skip
        return {t: sorted(map(repr, conn.execute(f"SELECT * FROM {t}"))) for t in sorted(tables)}


def _ok(home: Home, *args: str) -> Any:
    r = _run(home, *args)
    assert r.exit_code == 0, r.output
    return r


def _refused(home: Home, *args: str, match: str) -> None:
    before = _state(home)
    r = _run(home, *args)
    lines = r.output.strip().splitlines()
    assert r.exit_code == 2 and len(lines) == 1 and match in lines[0], r.output
    assert "Traceback" not in r.output
    assert _state(home) == before, "nothing written"


def _report(home: Home, cid: int) -> dict[str, Any]:
    data = json.loads(_ok(home, "class", "report", "--class", str(cid), "--json").stdout)
    data.pop("name")
    return data


def test_round_trip_create_invite_join_report_export_import(
    web_client_factory: Any, tmp_path: Path, home_of: Any
) -> None:
    home, other = home_of("a"), home_of("b")
    made = json.loads(_ok(home, "class", "create", "week 7", "--json").stdout)
    assert made["teacher_url"] == "/teacher" and made["class"] == 1
    names = tmp_path / "names.txt"
    names.write_text("Ada\n张三\n", encoding="utf-8")
    cid = str(made["class"])
    invites = json.loads(
        _ok(home, "class", "invite", "--class", cid, "--names", str(names), "--json").stdout
    )["invites"]
    assert [i["learner"] for i in invites] == ["Ada", "张三"]
    assert all(i["url"].startswith("/join/") for i in invites)
    more = json.loads(_ok(home, "class", "invite", "--class", cid, "--count", "1", "--json").stdout)
    assert [i["learner"] for i in more["invites"]] == ["learner-1"]

    if isinstance(home, str):
        ada = joined(web_client_factory, tmp_path, invites[0]["url"], db=home)
    else:
        ada = joined(web_client_factory, home, invites[0]["url"])
    post_form(ada, f"/exercise/{EXERCISE}", answer=no_scale_answer())
    post_form(ada, "/section/5/note", note_id="0a0a0a0a-0000-4000-8000-00000000000a", text="mine")
    post_form(ada, "/section/2/complete", back="section")
    report = _report(home, made["class"])
    [first] = [p for p in report["learners"] if p["name"] == "Ada"]
    assert first["completed"] == [2] and not first["exercises"][EXERCISE]["correct"]
    assert report["exercises"][EXERCISE]["mistakes"][0]["learners"] == 1
    listed = _ok(home, "class", "list").stdout
    assert "week 7" in listed and "3 learners" in listed
    text = _run(home, "class", "report", "--class", cid, lang="zh").stdout
    assert "张三" in text and "3 位学员" in text
    rows = list(csv.DictReader(io.StringIO(_ok(home, "class", "report", "--class", cid,
                                                "--csv").stdout)))  # fmt: skip
    assert {r["learner"] for r in rows} == {"Ada", "张三", "learner-1"}
    assert [r["exercise"] for r in rows if r["learner"] == "Ada"] == [EXERCISE]

    file = tmp_path / "class.json"
    _ok(home, "class", "export", "--class", cid, str(file))
    _ok(other, "class", "import", str(file))
    assert _report(other, 1) == report
    with _open(other, "c1-1") as store:
        assert [n.text for n in store.notes()] == ["mine"]
        assert store.teacher_login(made["teacher_key"], "me")[1] == 1, "the key still opens it"
    _ok(other, "class", "import", str(file))  # again: merged, nothing doubled
    assert _report(other, 1) == report


def test_wrong_ids_and_files_are_one_line_and_write_nothing(tmp_path: Path, home_of: Any) -> None:
    home = home_of("home")
    _ok(home, "class", "create", "week 7")
    _refused(home, "class", "invite", "--class", "9", "--count", "2", match="class: expected")
    _refused(home, "class", "invite", "--class", "x", "--count", "2", match="--class: expected")
    _refused(home, "class", "invite", "--class", "1", "--count", "0", match="--count: expected")
    _refused(home, "class", "report", "--class", "9", match="class: expected")
    (tmp_path / "names.txt").write_text("Ada\n", encoding="utf-8")
    _refused(home, "class", "invite", "--class", "1", "--count", "2", "--names",
             str(tmp_path / "names.txt"), match="expected 2 names, found 1")  # fmt: skip
    _refused(home, "class", "export", "--class", "9", str(tmp_path / "x.json"),
             match="class: expected")  # fmt: skip
    assert not (tmp_path / "x.json").exists()
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": "attnlab-progress"}), encoding="utf-8")
    _refused(home, "class", "import", str(bad), match="format: expected 'attnlab-class'")
    bad.write_text("{", encoding="utf-8")
    _refused(home, "class", "import", str(bad), match="bad.json")
    _refused(home, "class", "import", str(tmp_path / "none.json"),
             match="none.json: expected a class file, found no such file")  # fmt: skip
    _refused(home, "class", "import", str(tmp_path), match="expected a class file, found a dir")


@pytest.mark.parametrize("clash", ["another class", "a broken learner"])
def test_an_import_that_clashes_changes_nothing(tmp_path: Path, clash: str, home_of: Any) -> None:
    home, other = home_of("a"), home_of("b")
    _ok(home, "class", "create", "week 7")
    _ok(home, "class", "invite", "--class", "1", "--count", "2")
    file = tmp_path / "class.json"
    _ok(home, "class", "export", "--class", "1", str(file))
    data = json.loads(file.read_text(encoding="utf-8"))
    if clash == "another class":  # class 1 here is not the file's class 1
        _ok(other, "class", "create", "another")
        expected = "another class with that id"
    else:  # the first learner is fine, the second is not: neither is imported
        data["learners"][1]["progress"]["attempts"] = "not a list"
        expected = "attempts"
    file.write_text(json.dumps(data), encoding="utf-8")
    _refused(other, "class", "import", str(file), match=expected)


@pytest.mark.parametrize("name", ['=HYPERLINK("http://x")', "+1", "-2+3", "@SUM(A1)"])
def test_a_name_a_spreadsheet_would_run_is_written_as_text(name: str) -> None:
    from attnlab.grading.class_report import as_csv

    learner = {"name": name, "profile": "c1-1", "completed": [1], "exercises": {}, "practice": {}}
    row = next(csv.DictReader(io.StringIO(as_csv({"learners": [learner]}))))
    assert row["learner"] == "'" + name
    plain = {**learner, "name": "Ada = me"}
    assert next(csv.DictReader(io.StringIO(as_csv({"learners": [plain]}))))["learner"] == "Ada = me"


def test_a_teacher_session_ends_after_its_hours(store_location: Path | str) -> None:
    from datetime import UTC, datetime, timedelta

    from attnlab.progress.sessions import TEACHER_SESSION

    now = [datetime(2026, 12, 2, 9, tzinfo=UTC)]
    clock = lambda: now[0].isoformat(timespec="microseconds")  # noqa: E731
    with ProgressStore(store_location, clock=clock) as store:
        key = store.create_class("week 7").teacher_key
        session, cid = store.teacher_login(key, "me")
        now[0] += TEACHER_SESSION - timedelta(seconds=1)
        assert store.teacher_of(session) == cid
        now[0] += timedelta(seconds=1)
        assert store.teacher_of(session) is None, "ran out: the key is asked for again"
        again, _ = store.teacher_login(key, "me")
        assert store.teacher_of(again) == cid


@pytest.mark.parametrize("key", ["²", "²³.abc", "١.x", "1²"])
def test_a_key_of_digits_that_are_not_ascii_is_refused_as_a_wrong_key(
    store_location: Path | str, key: str
) -> None:
    """'²' is a digit to str.isdigit() but no number to int(): a wrong key, never a crash."""
    from attnlab.progress.sessions import KeyRefused

    with ProgressStore(store_location) as store:
        store.create_class("week 7")
        with pytest.raises(KeyRefused):
            store.teacher_login(key, "me")


def test_sixty_wrong_keys_at_once_get_exactly_the_limit_checked(
    store_location: Path | str,
) -> None:
    """60 wrong keys from one client at once, from 12 threads with a store each (as workers
    are): the count and the check are one statement, so exactly MAX_FAILURES keys are checked
    and every other try is told to wait."""
    from concurrent.futures import ThreadPoolExecutor

    from attnlab.progress.sessions import MAX_FAILURES, KeyRefused

    with ProgressStore(store_location) as store:
        store.create_class("week 7")

    def tries(n: int) -> list[int | None]:
        waits = []
        with ProgressStore(store_location) as store:
            for _ in range(n):
                try:
                    store.teacher_login("1.wrong-key", "guesser")
                except KeyRefused as exc:
                    waits.append(exc.wait)
        return waits

    with ThreadPoolExecutor(max_workers=12) as pool:
        waits = [w for got in pool.map(tries, [5] * 12) for w in got]
    assert len(waits) == 60
    assert waits.count(None) == MAX_FAILURES, "checked (a wrong key), not told to wait"


def test_a_wall_clock_set_back_does_not_lock_the_right_key_out(
    store_location: Path | str,
) -> None:
    """The window is on a monotonic clock: after the limit, one window later the right key
    opens the class, though the wall clock was set back an hour meanwhile."""
    from datetime import UTC, datetime, timedelta

    from attnlab.progress.sessions import FAILURE_WINDOW, MAX_FAILURES, KeyRefused

    wall = [datetime(2026, 12, 2, 9, tzinfo=UTC)]
    mono = [1000.0]
    clock = lambda: wall[0].isoformat(timespec="microseconds")  # noqa: E731
    with ProgressStore(store_location, clock=clock, monotonic=lambda: mono[0]) as store:
        key = store.create_class("week 7").teacher_key
        for _ in range(MAX_FAILURES):
            with pytest.raises(KeyRefused):
                store.teacher_login("1.wrong-key", "me")
        with pytest.raises(KeyRefused) as waited:
            store.teacher_login(key, "me")
        assert waited.value.wait == math.ceil(FAILURE_WINDOW.total_seconds())
        wall[0] -= timedelta(hours=1)
        mono[0] += FAILURE_WINDOW.total_seconds() + 1
        assert store.teacher_login(key, "me")[1] == 1
