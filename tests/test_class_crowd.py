"""30 learners of one class join a real ``attnlab serve --class-only`` at once and write:
every confirmed write (a completion, a note, an answer) is in that learner's progress and in
``attnlab class report --json``, and no learner sees another's note."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from class_support import EXERCISE, make_class, no_scale_answer
from store_support import DEADLINE_S, cli, post, server

from attnlab.content import knowledge
from attnlab.core.example import SECTION_COUNT
from attnlab.text.fmt import answer as right_answer

#: On SQLite and on PostgreSQL (tests/store_backends.py).
pytestmark = [pytest.mark.process, pytest.mark.usefixtures("db_env")]

LEARNERS = 30


def _note(i: int) -> str:
    return f"crowd-note-{i:03d}-end"


def _learner(base: str, i: int, link: str, answer: str) -> dict[str, Any]:
    """Join, then complete a section, save a note and answer the exercise; what was confirmed."""
    with httpx.Client(base_url=base, timeout=DEADLINE_S, headers={"Origin": base}) as client:
        page = client.get(link)  # the link's page: its button starts the session
        assert page.status_code == 200, f"learner {i} could not open the link: {page.status_code}"
        r = post(client, link)
        assert r.status_code == 303, f"learner {i} could not join: {r.status_code}"
        sid = i % SECTION_COUNT
        note_id = f"0a0a0a0a-0000-4000-8000-{i:012d}"
        done = {
            "section": post(client, f"/section/{sid}/complete", back="section").status_code,
            "note": post(client, f"/section/{sid}/note", note_id=note_id,
                         text=_note(i)).status_code,
            "answer": post(client, f"/exercise/{EXERCISE}", answer=answer).status_code,
        }  # fmt: skip
        progress = client.get("/api/progress").json()
        notes = client.get("/notes?lang=en").text
    return {"i": i, "sid": sid, "done": done, "progress": progress, "notes": notes}


@pytest.mark.slow
def test_thirty_learners_join_two_workers_at_once(tmp_path: Path) -> None:
    cid, _, links = make_class(tmp_path, [f"L{i:02d}" for i in range(LEARNERS)])
    ex = knowledge.exercise(EXERCISE, "en")
    right, wrong = right_answer(ex.expected, ex.decimals), no_scale_answer()
    with server(tmp_path, "--class-only", workers=2) as client:  # two processes, one store
        base = str(client.base_url).rstrip("/")
        assert client.get("/lesson").status_code == 401, "no link, no lesson"
        with ThreadPoolExecutor(LEARNERS) as pool:
            results = list(pool.map(
                lambda i: _learner(base, i, links[i], wrong if i % 3 == 0 else right),
                range(LEARNERS),
            ))  # fmt: skip
    report = cli(tmp_path, "class", "report", "--class", str(cid), "--json")
    assert report.returncode == 0, report.stderr
    people = {p["name"]: p for p in json.loads(report.stdout)["learners"]}
    seen_by_others = 0
    for r in results:
        i, me = r["i"], people[f"L{r['i']:02d}"]
        confirmed = {k for k, status in r["done"].items() if status == 303}
        assert confirmed == {"section", "note", "answer"}, f"learner {i}: {r['done']}"
        assert r["progress"]["profile"] == me["profile"] and r["sid"] in r["progress"]["completed"]
        assert me["completed"] == [r["sid"]]
        assert me["exercises"][EXERCISE]["correct"] is (i % 3 != 0)
        assert _note(i) in r["notes"], f"learner {i} lost their note"
        seen_by_others += sum(_note(j) in r["notes"] for j in range(LEARNERS) if j != i)
    assert seen_by_others == 0
