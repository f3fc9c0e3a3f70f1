"""Stores recover and say the truth (issue 33, point 9): the PostgreSQL pool retries a lost
server every second, a clean stop leaves no ``-wal``, a ``-wal`` removed under a running store
makes it refuse writes instead of losing them, a visit that cannot be written (a full disk)
does not stop the page, and a visitor without a session on a shared server never sees where
the store is."""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from web_support import ORIGIN, post_form

from attnlab.progress.store import FILE_NAME, ProgressStore, StoreError


def test_the_pool_retries_a_lost_server_every_second_not_with_a_doubling_wait() -> None:
    """psycopg_pool's own schedule after 6 failed tries is 1, 2, 4, 8, 16, 32 s: a server back
    after 30 s was answered up to 30 s later. attnlab's: every RECONNECT_S."""
    pytest.importorskip("psycopg_pool")
    from psycopg_pool.base import AttemptWithBackoff

    from attnlab.progress import pg

    pg.steady_reconnects()
    attempt, now, waits = AttemptWithBackoff(timeout=300.0), 0.0, []
    for _ in range(12):
        attempt.update_delay(now)
        waits.append(attempt.delay)
        now += attempt.delay
    assert max(waits) <= pg.RECONNECT_S * 1.1 and min(waits) >= pg.RECONNECT_S * 0.9, waits
    assert pg.RECONNECT_S <= 1.0  # with the pool's own wait for a connection: answers in ≤ 5 s


def _client(data_dir: Path, **kwargs: Any) -> Any:
    from fastapi.testclient import TestClient

    from attnlab.web.app import create_app

    app = create_app(data_dir, figures_on=False, **kwargs)
    return TestClient(app, base_url=ORIGIN)


def test_a_clean_stop_leaves_no_wal_and_the_file_alone_holds_everything(tmp_path: Path) -> None:
    """The server stops (its lifespan ends) with notes written from several threads: the
    WAL is emptied into progress.sqlite3, so a copy of that one file has every note."""
    with _client(tmp_path) as client:
        client.get("/healthz")
        for n in range(30):
            note = f"0a0a0a0a-0000-4000-8000-{n:012d}"
            text = f"note {n} " + "x" * 400
            r = post_form(client, f"/section/{n % 20}/note", note_id=note, text=text)
            assert r.status_code == 303, r.text[:200]
        assert (tmp_path / f"{FILE_NAME}-wal").stat().st_size > 0, "written to the WAL first"
    wal = tmp_path / f"{FILE_NAME}-wal"
    assert not wal.exists() or wal.stat().st_size == 0
    copy = tmp_path / "copy"
    copy.mkdir()
    shutil.copyfile(tmp_path / FILE_NAME, copy / FILE_NAME)  # the file alone
    with sqlite3.connect(copy / FILE_NAME) as raw:
        (notes,) = raw.execute("SELECT COUNT(*) FROM notes").fetchone()
    assert notes == 30


def test_a_wal_removed_under_an_open_store_makes_it_refuse_writes(tmp_path: Path) -> None:
    """Someone deletes progress.sqlite3-wal while the store is open: its next write would
    'succeed' into the deleted file and be lost. It is refused in one line, then every one."""
    path = tmp_path / FILE_NAME
    with ProgressStore(path) as store:
        store.mark_complete(1)
        os.unlink(f"{path}-wal")
        for section in (2, 3):
            with pytest.raises(StoreError) as refused:
                store.mark_complete(section)
            said = str(refused.value)
            assert "-wal was removed or replaced" in said and "\n" not in said
            assert "被删除或替换" in refused.value.text("zh")


def test_a_visit_that_cannot_be_written_still_shows_the_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full disk refuses the visit's write (SQLITE_FULL): the section page shows all the
    same, and the visit is skipped."""
    from attnlab.progress import state
    from attnlab.progress.store_errors import translate

    def full(self: Any, section: int) -> Any:
        raise translate(sqlite3.OperationalError("database or disk is full"), self.where, 1)

    monkeypatch.setattr(state.StateMixin, "_visit_and_read", full)
    client = _client(tmp_path)
    r = client.get("/section/3?lang=en")
    assert r.status_code == 200 and "page-section" in r.text


@pytest.mark.parametrize("opts", [{"class_only": True}, {"hosts": ["lesson.example"]}])
def test_a_visitor_without_a_session_never_sees_where_the_store_is(
    tmp_path: Path, opts: dict[str, Any]
) -> None:
    """The store cannot be opened (its folder is a file): on a class-only or network server,
    a visitor with no session gets one line without the path; a local learner gets the path."""
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("x")
    from fastapi.testclient import TestClient

    from attnlab.web.app import create_app

    base = "http://lesson.example" if "hosts" in opts else ORIGIN
    app = create_app(blocked, figures_on=False, **opts)
    r = TestClient(app, base_url=base).get("/notes?lang=en")
    assert r.status_code in (401, 503), r.text[:300]
    assert str(blocked) not in r.text and "not-a-folder" not in r.text
    local = TestClient(create_app(blocked, figures_on=False), base_url=ORIGIN)
    assert "not-a-folder" in local.get("/notes?lang=en").text


def test_a_visitor_without_a_session_never_sees_the_servers_address() -> None:
    """PostgreSQL that cannot be reached, on a network server: no address, no user name."""
    import socket

    from fastapi.testclient import TestClient

    from attnlab.web.app import create_app

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"postgresql://ann:pw@127.0.0.1:{port}/course"
    app = create_app(None, figures_on=False, db=url, hosts=["lesson.example"])
    r = TestClient(app, base_url="http://lesson.example").get("/notes?lang=en")
    assert r.status_code == 503, r.text[:300]
    assert f":{port}" not in r.text and "ann:" not in r.text and "127.0.0.1" not in r.text
