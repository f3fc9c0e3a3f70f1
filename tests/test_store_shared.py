"""One progress file shared by the web server, terminal commands and several stores in one
process: every confirmed write stays visible to every reader, and the file stays whole.

The bug these tests pin: a check that opened the database with Python's ``open()`` and closed
it dropped every POSIX lock SQLite held on it in that process, so another process believed it
was the last user, checkpointed and deleted the ``-wal`` under the server, and later writes were
lost (https://sqlite.org/howtocorrupt.html, section 2.2).
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from store_support import cli, post, server
from typer.testing import CliRunner

from attnlab.cli.main import app
from attnlab.progress.store import ProgressStore

pytestmark = pytest.mark.process

DB = "progress.sqlite3"


def _answers(data_dir: Path) -> Counter[tuple[str, str]]:
    with ProgressStore.open(data_dir) as store:
        return Counter((a["exercise"], a["answer"]) for a in store.attempts())


READER = """
import json, sqlite3, sys

c = sqlite3.connect(sys.argv[1], isolation_level=None)
if sys.argv[2]:
    c.execute("INSERT INTO attempts (profile, exercise, answer, created_at) VALUES "
              "('default', 'check-2', ?, '2999-01-01T00:00:00+00:00')", (sys.argv[2],))
rows = c.execute("SELECT exercise, answer FROM attempts ORDER BY created_at, id")
print(json.dumps([list(r) for r in rows]))
c.close()
"""


def _reader_process(data_dir: Path, write: str = "") -> list[list[str]]:
    """Another process opens the file with SQLite, optionally answers check 2, reads, closes.

    Plain sqlite3 (no attnlab import, so it starts at once): what matters is that it is the
    last SQLite connection of its process, which is when SQLite checkpoints and deletes a WAL
    that no other process holds a lock on.
    """
    done = subprocess.run(
        [sys.executable, "-c", READER, str(data_dir / DB), write],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    return json.loads(done.stdout)


def test_two_stores_in_one_process_keep_the_wal_for_other_processes(tmp_path: Path) -> None:
    first = ProgressStore.open(tmp_path)
    first.record_attempt("check-1", "one", None)
    second = ProgressStore.open(tmp_path)  # used to drop the first one's locks on the file
    assert _reader_process(tmp_path) == [["check-1", "one"]]
    assert (tmp_path / f"{DB}-wal").exists(), "another process deleted the WAL in use here"
    first.record_attempt("check-1", "two", None)
    second.record_attempt("check-1", "three", None)
    seen = _reader_process(tmp_path, write="four")
    assert seen == [["check-1", a] for a in ("one", "two", "three")] + [["check-2", "four"]]
    assert [a["answer"] for a in first.attempts()] == ["one", "two", "three", "four"]
    first.close()
    second.close()
    assert _answers(tmp_path) == Counter(
        {("check-1", "one"): 1, ("check-1", "two"): 1, ("check-1", "three"): 1,
         ("check-2", "four"): 1}
    )  # fmt: skip


class Expected:
    """What the learner has been told is saved, and the checks every reader must pass."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.answers: Counter[tuple[str, str]] = Counter()
        self.completed: set[int] = set()
        self.assessments: dict[int, str] = {}
        self.graded = 0

    def web(self, client: httpx.Client, url: str, **form: str) -> None:
        r = post(client, url, **form)
        assert r.status_code == 303, f"{url}: {r.status_code} {r.text[:200]}"
        if url.endswith("/answer"):
            self.answers[(f"check-{url.split('/')[2]}", form["answer"])] += 1
        elif url.endswith("/complete"):
            self.completed.add(int(url.split("/")[2]))
        elif url.endswith("/assess"):
            self.assessments[int(url.split("/")[2])] = form["status"]
        else:
            self.answers[(url.split("/")[2], form["answer"])] += 1
            self.graded += 1

    def check_server(self, client: httpx.Client) -> None:
        # Several requests at once, as a browser loads a page: the server opens a store per thread.
        with ThreadPoolExecutor(max_workers=4) as pool:
            views = list(pool.map(lambda _: client.get("/api/progress").json(), range(8)))
        for view in views:
            assert set(view["completed"]) == self.completed, view
            assert {int(k): v for k, v in view["assessments"].items()} == self.assessments
            assert view["attempts"] == self.graded, view

    def check_pages(self, client: httpx.Client) -> None:
        for exercise, answer in self.answers:
            if exercise.startswith("check-"):
                page = client.get(f"/section/{exercise[6:]}?lang=en").text
                assert answer in page, f"{exercise}: the server does not show {answer!r}"

    def check_store(self) -> None:
        assert _answers(self.data_dir) == self.answers
        with ProgressStore.open(self.data_dir) as store:
            s = store.summary()
        assert set(s.completed) == self.completed and s.assessments == self.assessments

    def check_export(self, out: Path) -> None:
        # In this process, a terminal of its own next to the server.
        r = CliRunner().invoke(app, ["progress", "export", str(out), "--data-dir", str(out.parent)])
        assert r.exit_code == 0, r.output
        data = json.loads(out.read_text(encoding="utf-8"))
        assert Counter((a["exercise"], a["answer"]) for a in data["attempts"]) == self.answers
        assert {c["section"] for c in data["completed"]} == self.completed
        assert {a["section"]: a["status"] for a in data["assessments"]} == self.assessments

    def wal_kept(self) -> None:
        assert (self.data_dir / f"{DB}-wal").exists(), "the WAL was deleted under the server"


@pytest.mark.slow
def test_server_and_terminal_commands_lose_nothing(tmp_path: Path) -> None:
    want = Expected(tmp_path)
    with server(tmp_path) as web:
        want.check_server(web)
        want.web(web, "/section/1/answer", answer="web one: each token reads the past")
        want.web(web, "/section/1/complete", back="section")
        want.web(web, "/section/1/assess", status="understood")
        want.web(web, "/exercise/9c", answer="1.599")
        want.check_server(web)
        want.check_store()

        summary = cli(tmp_path, "progress")
        assert summary.returncode == 0 and "Week progress: 1 of 20" in summary.stdout, summary
        want.wal_kept()
        want.web(web, "/section/4/answer", answer="web two: written after attnlab progress")
        want.web(web, "/section/4/complete", back="lesson")
        want.web(web, "/exercise/9c", answer="0.5")
        want.check_server(web)
        want.check_export(tmp_path / "first.json")
        want.wal_kept()

        quiz = cli(tmp_path, "quiz", "--section", "0", stdin="quiz answer\nu\n")
        assert quiz.returncode == 0, quiz.stderr
        want.answers[("check-0", "quiz answer")] += 1
        want.completed.add(0)
        want.assessments[0] = "understood"
        want.wal_kept()
        want.check_server(web)

        first, second = ProgressStore.open(tmp_path), ProgressStore.open(tmp_path)
        first.record_attempt("check-3", "in-process one", None)
        second.set_assessment(3, "review")
        want.answers[("check-3", "in-process one")] += 1
        want.assessments[3] = "review"
        want.web(web, "/section/5/answer", answer="web three: after two stores opened")
        want.check_server(web)
        want.check_export(tmp_path / "second.json")
        want.wal_kept()
        first.close()
        second.close()
        want.web(web, "/section/6/answer", answer="web four: after they closed")
        want.check_server(web)
        want.check_pages(web)
        want.check_store()

    want.check_store()
    want.check_export(tmp_path / "after.json")
    conn = sqlite3.connect(tmp_path / DB)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()
