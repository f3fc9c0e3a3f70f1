"""The progress store on PostgreSQL: migrations from an empty schema, run again and by two
processes at once; a server that is down, another program's tables, a newer schema; the URL's
password never shown; ``ATTNLAB_DB`` and ``--db`` in the CLI and the web lesson.

Needs ``ATTNLAB_TEST_PG`` (tests/store_backends.py); the tests of URL checks run without it.
"""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
from store_backends import PgSchemas
from store_support import cli, post, server
from typer.testing import CliRunner
from web_support import post_form

from attnlab.cli.main import app
from attnlab.progress import backend, pg
from attnlab.progress.db import APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION
from attnlab.progress.store import ProgressStore, StoreError
from attnlab.text.errors import InputError

SECRET = "s3cret-Pw"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _nobody_listening() -> str:
    """A URL with a password, of a port where no server listens."""
    return f"postgresql://ann:{SECRET}@127.0.0.1:{_free_port()}/course"


def _raw(url: str, sql: str) -> list[tuple]:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        cursor = conn.execute(sql)
        return cursor.fetchall() if cursor.description else []


def test_an_empty_schema_is_migrated_once_and_again_finds_nothing(pg_schemas: PgSchemas) -> None:
    import psycopg

    url = pg_schemas.new()
    with psycopg.connect(url, autocommit=True) as conn:
        assert pg.migrate(conn, "test", upto=2) == [1, 2]
        assert pg.migrate(conn, "test") == [m[0] for m in MIGRATIONS if m[0] > 2]
        assert pg.migrate(conn, "test") == []
    rows = _raw(url, "SELECT version, name FROM migrations ORDER BY version")
    assert rows == [(m[0], m[1]) for m in MIGRATIONS]
    with ProgressStore(url) as store:
        assert store.migrations() == [(m[0], m[1]) for m in MIGRATIONS]


def test_two_processes_migrating_at_once_migrate_once(pg_schemas: PgSchemas) -> None:
    import psycopg

    url = pg_schemas.new()
    code = (
        "import sys\n"
        "from attnlab.progress.store import ProgressStore\n"
        "with ProgressStore(sys.argv[1], sys.argv[2]) as s:\n"
        "    s.mark_complete(int(sys.argv[3]))\n"
    )
    waiting = ("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted "
               f"AND objid = {APPLICATION_ID} AND objsubid = 1")  # fmt: skip
    with psycopg.connect(url, autocommit=True) as holder:
        # Both processes reach the migration while it is locked, then start it together.
        holder.execute("SELECT pg_advisory_lock(%s)", (APPLICATION_ID,))
        procs = [
            subprocess.Popen([sys.executable, "-c", code, url, f"p{i}", str(i)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for i in range(2)
        ]  # fmt: skip
        deadline = time.monotonic() + 120
        while holder.execute(waiting).fetchone()[0] < 2:
            assert time.monotonic() < deadline, "the processes never waited for the lock"
            assert all(p.poll() is None for p in procs), [p.communicate() for p in procs]
            time.sleep(0.1)
        holder.execute("SELECT pg_advisory_unlock(%s)", (APPLICATION_ID,))
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    rows = _raw(url, "SELECT version FROM migrations ORDER BY version")
    assert [r[0] for r in rows] == [m[0] for m in MIGRATIONS]
    assert sorted(_raw(url, "SELECT profile, section FROM completions")) == [("p0", 0), ("p1", 1)]


def test_a_server_that_is_down_is_one_clear_line_without_the_password() -> None:
    url = _nobody_listening()
    with pytest.raises(StoreError, match=r"cannot connect to the PostgreSQL server") as info:
        ProgressStore(url, busy_timeout=2)
    assert SECRET not in str(info.value) and SECRET not in info.value.text("zh")
    assert "postgresql://ann:***@127.0.0.1" in str(info.value)
    result = CliRunner().invoke(app, ["--lang", "en", "progress", "--db", url])
    assert result.exit_code == 2
    assert "cannot connect to the PostgreSQL server" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert SECRET not in result.output + result.stderr and "Traceback" not in result.stderr


def test_the_web_lesson_answers_503_when_the_server_is_down(
    web_client_factory, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    client = web_client_factory(tmp_path, db=_nobody_listening())
    page = client.get("/section/4?lang=en")
    assert page.status_code == 503
    assert "cannot connect to the PostgreSQL server" in page.text and SECRET not in page.text


@pytest.mark.parametrize(
    ("url", "message"),
    [
        (
            f"mysql://ann:{SECRET}@db/course",
            r"expected a PostgreSQL URL .*found 'mysql://ann:\*\*\*@",
        ),
        ("course.sqlite3", r"expected a PostgreSQL URL .*found 'course.sqlite3'"),
        (f"postgresql://ann:{SECRET}@db:port/course", r"expected a port number in the URL"),
    ],
)
def test_a_bad_url_is_refused_in_one_line_exit_2(url: str, message: str, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(InputError, match=message):
        backend.resolve(url)
    for args, env in ((["--db", url], {}), ([], {"ATTNLAB_DB": url})):
        for command in (["progress"], ["notes"], ["serve", "--port", "0"]):
            result = CliRunner().invoke(app, ["--lang", "en", *command, *args], env=env)
            assert result.exit_code == 2, (command, args, result.output)
            lines = result.stderr.strip().splitlines()
            assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
            assert SECRET not in result.output + result.stderr


def test_the_password_is_hidden_wherever_it_is() -> None:
    assert backend.redact(f"postgresql://ann:{SECRET}@h/db") == "postgresql://ann:***@h/db"
    shown = backend.redact(f"postgresql://h/db?user=ann&password={SECRET}&sslmode=require")
    assert shown == "postgresql://h/db?user=ann&password=***&sslmode=require"
    assert backend.redact("postgresql://ann@h/db") == "postgresql://ann@h/db"
    for typed in ("sqlite:///x", "postgresql:///db?host=/run/pg", "postgres://h"):
        assert backend.redact(typed) == typed  # without a password: shown as typed
    assert backend.redact(f"host=h password={SECRET} dbname=db") == "host=h password=*** dbname=db"
    with pytest.raises(InputError) as info:
        backend.resolve(f"host=h password = '{SECRET} x' dbname=db")
    assert SECRET not in str(info.value) and "password = ***" in str(info.value)
    url = f"postgresql://ann:{SECRET}@h/db"
    assert backend.scrub(f"auth failed for {SECRET}", url) == "auth failed for ***"


def test_another_programs_tables_and_a_newer_schema_are_refused(pg_schemas: PgSchemas) -> None:
    foreign = pg_schemas.new()
    _raw(foreign, "CREATE TABLE photos (id INTEGER PRIMARY KEY, name TEXT)")
    with pytest.raises(StoreError, match=r"belongs to another program \(tables photos\)"):
        ProgressStore(foreign)
    assert _raw(foreign, "SELECT count(*) FROM information_schema.tables "
                "WHERE table_schema = current_schema()") == [(1,)]  # fmt: skip
    newer = pg_schemas.new()
    ProgressStore(newer).close()
    pg.close_database(newer)
    _raw(newer, f"INSERT INTO migrations VALUES ({SCHEMA_VERSION + 1}, 'future', 'now')")
    with pytest.raises(StoreError, match=rf"schema version {SCHEMA_VERSION + 1}, newer than"):
        ProgressStore(newer)


def test_a_long_chinese_answer_and_a_true_flag_are_kept(pg_schemas: PgSchemas) -> None:
    # 2000 characters of 3 bytes: more than a B-tree entry holds; True into an INTEGER column.
    text = "".join(chr(0x4E00 + (i * 7919) % 20000) for i in range(2000))
    with ProgressStore(pg_schemas.new()) as store:
        store.record_attempt("check-4", text, None)
        store.record_attempt("check-4", text, None)  # the same time is impossible: kept twice
        store.record_attempt("4c", "1.131", True)
        assert [a["answer"] for a in store.attempts("check-4")] == [text, text]
        assert store.summary().correct == 1


def test_a_note_is_found_whatever_its_case(store_location) -> None:  # type: ignore[no-untyped-def]
    from attnlab.content import search

    with ProgressStore(store_location) as store:
        store.add_note(12, "My own TRICK: mask with -inf, 100% never 0")
        hits = search.search(store, "trick", "en")
        assert (hits[0].kind, hits[0].section) == ("note", 12)
        assert [n.section for n in store.search_notes(["100%"])] == [12]
        assert store.search_notes(["1000%"]) == []
        assert any(h.kind == "section" for h in search.search(store, "softmax", "en"))


def test_attnlab_db_and_db_reach_the_same_store(
    pg_schemas: PgSchemas, tmp_path: Path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    url = pg_schemas.new()
    runner = CliRunner()
    added = runner.invoke(app, ["--lang", "en", "notes", "add", "5", "rows sum to 1", "--db", url])
    assert added.exit_code == 0, added.output
    monkeypatch.setenv("ATTNLAB_DB", url)
    monkeypatch.setenv("ATTNLAB_DATA_DIR", str(tmp_path))
    with ProgressStore.open() as store:
        assert [n.text for n in store.notes()] == ["rows sum to 1"]
        assert store.file is None and str(store.where).startswith("postgresql://")
    listed = runner.invoke(app, ["--lang", "en", "notes"])
    assert "rows sum to 1" in listed.output
    assert not (tmp_path / "progress.sqlite3").exists(), "the SQLite file was made as well"


def test_the_web_lesson_saves_to_the_server(
    pg_schemas: PgSchemas, web_client_factory, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    url = pg_schemas.new()
    client = web_client_factory(tmp_path, db=url)
    done = post_form(client, "/section/8/bookmark?lang=en")
    assert done.status_code in (200, 303), done.text[:200]
    with ProgressStore(url) as store:
        assert store.bookmarks() == (8,)
    assert not (tmp_path / "progress.sqlite3").exists()


def test_a_url_with_another_host_names_it_without_the_password() -> None:
    parts = urlsplit(_nobody_listening())
    other = urlunsplit(parts._replace(netloc=f"bob:{SECRET}@{parts.hostname}:{parts.port}"))
    with pytest.raises(StoreError) as info:
        ProgressStore(other, busy_timeout=1)
    assert "bob:***@" in str(info.value) and SECRET not in str(info.value)


def _end_connections(url: str) -> None:
    """End every server connection of ``url``'s schema but our own, as a server restart or an
    administrator does, and wait (10 s at most) until each is gone."""
    name = url.rsplit("application_name=", 1)[1]
    ended = _raw(url, "SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity "
                 f"WHERE application_name = '{name}' AND pid <> pg_backend_pid()")  # fmt: skip
    assert ended and all(r[0] for r in ended)


def test_connections_the_server_closed_are_replaced(pg_schemas: PgSchemas) -> None:
    url = pg_schemas.new()
    with ProgressStore(url) as store:
        store.mark_complete(1)
        _end_connections(url)
        store.mark_complete(2)  # a fresh connection from the pool, not an error
        assert store.summary().completed == (1, 2)


def test_a_write_on_a_connection_ended_a_moment_ago_starts_again(
    pg_schemas: PgSchemas, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pool hands out a connection used a moment ago without a round trip; if the server
    ended it in a moment the pool's poll could not see yet (CI saw it once), the write starts
    again on a fresh connection instead of failing: nothing had been done."""
    url = pg_schemas.new()
    with ProgressStore(url) as store:
        store.mark_complete(1)
        _end_connections(url)
        monkeypatch.setattr(pg, "has_news", lambda _conn: False)  # the poll came too early
        store.mark_complete(2)
        monkeypatch.undo()
        assert store.summary().completed == (1, 2)


@pytest.mark.parametrize("visit", [None, 3])
def test_a_one_statement_read_on_a_connection_ended_a_moment_ago_runs_again(
    pg_schemas: PgSchemas, monkeypatch: pytest.MonkeyPatch, visit: int | None
) -> None:
    """A page's read of the learner's state is one statement in autocommit mode (with a
    section's visit, an upsert in the same statement): on a connection the server ended a
    moment ago it runs again, once, on a fresh one, instead of showing an error."""
    url = pg_schemas.new()
    with ProgressStore(url) as store:
        store.mark_complete(1)
        assert store.summary().completed == (1,)  # the connection just used is pooled
        _end_connections(url)
        monkeypatch.setattr(pg, "has_news", lambda _conn: False)  # the poll came too early
        state = store.learner_state(visit)
        monkeypatch.undo()
        assert state.summary.completed == (1,)
        assert store.summary().last_section == visit


def test_no_free_connection_within_the_timeout_is_one_clear_line(pg_schemas: PgSchemas) -> None:
    url = pg_schemas.new()
    with ProgressStore(url, busy_timeout=1) as store, contextlib.ExitStack() as held:
        pool = pg.database(url, 1).pool
        for _ in range(pg.POOL_SIZE):  # every connection busy elsewhere in this process
            held.enter_context(pool.connection())
        with pytest.raises(StoreError, match=r"no connection to the PostgreSQL server within 1 s"):
            store.mark_complete(3)
    with ProgressStore(url) as store:
        assert store.summary().completed == ()


def test_a_write_waits_for_the_profiles_other_writer_then_is_busy(pg_schemas: PgSchemas) -> None:
    import psycopg

    url = pg_schemas.new()
    with ProgressStore(url, "ann", busy_timeout=1) as ann, ProgressStore(url, "bo") as bo:
        with psycopg.connect(url, autocommit=True) as other:  # ann's writer elsewhere
            other.execute(
                "SELECT pg_advisory_lock(%s, %s)", (APPLICATION_ID, pg.profile_key("ann"))
            )
            with pytest.raises(StoreError, match=r"is busy: another program held its lock"):
                ann.toggle_bookmark(4)
            bo.toggle_bookmark(4)  # another profile's writes do not wait
        assert (ann.bookmarks(), bo.bookmarks()) == ((), (4,))
        assert ann.toggle_bookmark(4) is True


@pytest.mark.slow
def test_the_server_and_terminal_commands_share_the_database(  # type: ignore[no-untyped-def]
    pg_schemas: PgSchemas, tmp_path: Path, monkeypatch
) -> None:
    url = pg_schemas.new()
    monkeypatch.setenv("ATTNLAB_DB", url)  # the server and the commands inherit it
    with server(tmp_path) as web:
        assert post(web, "/section/1/answer", answer="web one").status_code < 400
        assert post(web, "/section/1/complete", back="section").status_code < 400
        quiz = cli(tmp_path, "quiz", "--section", "0", stdin="quiz answer\nu\n")
        assert quiz.returncode == 0, quiz.stderr
        with ProgressStore.open() as store:
            store.record_attempt("check-3", "in-process", None)
        view = web.get("/api/progress").json()
        assert set(view["completed"]) == {0, 1}, view
        assert "in-process" in web.get("/section/3?lang=en").text
        summary = cli(tmp_path, "progress")
        assert "Week progress: 2 of 20" in summary.stdout, summary
    with ProgressStore(url) as store:
        kept = {(a["exercise"], a["answer"]) for a in store.attempts()}
    assert kept == {("check-1", "web one"), ("check-0", "quiz answer"), ("check-3", "in-process")}
    assert not (tmp_path / "progress.sqlite3").exists(), "the SQLite file was made as well"


def test_cli_export_import_and_reset_on_the_server(pg_schemas: PgSchemas, tmp_path: Path) -> None:
    first, second = pg_schemas.new(), pg_schemas.new()
    with ProgressStore(first) as store:
        store.mark_complete(3)
        store.add_note(3, "x @ w_q gives the query")
        store.record_attempt("4c", "1.131", True)
    runner, out = CliRunner(), tmp_path / "mine.json"
    exported = runner.invoke(app, ["--lang", "en", "progress", "export", str(out), "--db", first])
    assert exported.exit_code == 0, exported.output
    imported = runner.invoke(app, ["--lang", "en", "progress", "import", str(out), "--db", second])
    assert imported.exit_code == 0, imported.output
    with ProgressStore(first) as a, ProgressStore(second) as b:
        assert b.summary() == a.summary() and b.notes() == a.notes()
    reset = runner.invoke(app, ["--lang", "en", "progress", "reset", "--yes", "--db", second])
    assert reset.exit_code == 0 and "postgresql://attnlab" in reset.output, reset.output
    password = urlsplit(second).password
    assert not password or f":{password}@" not in reset.output, reset.output
    with ProgressStore(second) as b:
        assert b.summary().completed == () and b.notes() == []


def test_every_profile_has_a_32_bit_lock_key() -> None:
    keys = {pg.profile_key(name) for name in ("default", "ann", "李雷", "a" * 64, "x.y-z_1")}
    assert len(keys) == 5 and all(-(2**31) <= k < 2**31 for k in keys), keys
    assert any(k < 0 for k in (pg.profile_key(f"p{i}") for i in range(50)))  # the upper half too


def test_a_refused_login_is_one_clear_line_without_the_password(pg_schemas: PgSchemas) -> None:
    parts = urlsplit(pg_schemas.new())
    wrong = urlunsplit(parts._replace(netloc=f"nobody_here:{SECRET}@{parts.hostname}:{parts.port}"))
    with pytest.raises(StoreError, match=r"cannot connect to the PostgreSQL server") as info:
        ProgressStore(wrong, busy_timeout=2)
    assert "nobody_here:***@" in str(info.value) and SECRET not in str(info.value)
    assert len(str(info.value).splitlines()) == 1


def test_classes_made_at_once_by_different_profiles_get_their_own_numbers(
    store_location,  # type: ignore[no-untyped-def]
) -> None:
    from concurrent.futures import ThreadPoolExecutor

    where = store_location
    profiles = [f"maker{i}" for i in range(6)]
    stores = [ProgressStore(where, p) for p in profiles]
    try:
        with ThreadPoolExecutor(max_workers=6) as pool:
            made = list(pool.map(lambda s: s.create_class(f"class of {s.profile}"), stores))
            links = list(pool.map(lambda s: s.invite(made[0].id, [s.profile]), stores))
    finally:
        for store in stores:
            store.close()
    assert sorted(c.id for c in made) == list(range(1, 7))
    learners = [link.profile for batch in links for link in batch]
    assert len(set(learners)) == len(profiles)


def test_a_snapshot_does_not_see_a_write_committed_during_it(store_location) -> None:  # type: ignore[no-untyped-def]
    """``store.snapshot()`` is one consistent state (PostgreSQL: REPEATABLE READ; SQLite: one
    read transaction), while another connection writes and commits."""
    with ProgressStore(store_location) as reader, ProgressStore(store_location) as writer:
        writer.record_attempt("4c", "0.39", True)
        with reader.snapshot():
            before = reader.attempts()
            writer.record_attempt("4c", "0.40", False)  # committed now, on its own connection
            assert reader.attempts() == before
            assert reader.summary().attempts == len(before)
        assert len(reader.attempts()) == len(before) + 1
