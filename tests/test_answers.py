"""Verdicts are kept as data and worded in the viewer's language, wherever the answer was given.

One answer service (:mod:`attnlab.grading.answers`) grades for the web, the quiz and the notebook;
the store keeps the verdict's kind and mistake names, never a sentence, so an answer given on
the Chinese page reads in English on the English one, and a store from before (a sentence in the
``diagnosis`` column) is worded from its answer instead.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from store_backends import app_args, store_args
from typer.testing import CliRunner
from web_support import post_form

from attnlab.cli.main import app
from attnlab.content import knowledge
from attnlab.grading import answers, reasons
from attnlab.progress.db import connect, migrate
from attnlab.progress.store import ProgressStore

CJK = re.compile(r"[\u4e00-\u9fff]")


def _verdicts(html: str) -> list[str]:
    return re.findall(r'<p class="verdict[^"]*">(.*?)</p>', html, re.S)


def _post(client: Any, exercise: str, text: str, lang: str) -> None:
    r = post_form(client, f"/exercise/{exercise}?lang={lang}", answer=text)
    assert r.status_code == 303, r.text


@pytest.mark.parametrize(
    ("text", "kind"),
    [("0.123", "wrong"), ("0", "wrong"), ("abc", "unreadable"), ("0.40 0.05", "count")],
)
def test_a_verdict_given_in_zh_reads_in_en(
    store_location: Path | str, web_client_factory: Any, text: str, kind: str
) -> None:
    data_dir, db = app_args(store_location)
    client = web_client_factory(data_dir, db=db)
    _post(client, "4c", text, "zh")
    with ProgressStore(store_location) as store:
        (attempt,) = store.attempts("4c")
    data = json.loads(attempt["diagnosis"])
    assert data["kind"] == kind and not CJK.search(attempt["diagnosis"]), attempt
    zh = _verdicts(client.get("/section/4?lang=zh").text)
    en = _verdicts(client.get("/section/4?lang=en").text)
    assert zh and en, "no verdict shown"
    assert all(CJK.search(v) for v in zh), zh
    assert not any(CJK.search(v) for v in en), en
    mark = reasons.MARKS[reasons.tone(kind)]  # every verdict that is not right says so, its way
    assert all(v.startswith(mark) for v in zh + en), (zh, en)


def test_the_quiz_and_the_web_keep_the_same_data(new_location, web_client_factory: Any) -> None:  # type: ignore[no-untyped-def]
    """One policy: every answer is kept; only right and wrong count as a try."""
    second = knowledge.exercise("4d").expected
    lines = ["", "abc", "0.123", "0.40", f"{second:.2f}", "", "u"]  # "": skip the practice
    quiz_at, web_at = new_location(), new_location()
    argv = ["--lang", "en", "quiz", "--section", "4", *store_args(quiz_at)]
    result = CliRunner().invoke(app, argv, input="".join(f"{line}\n" for line in lines))
    assert result.exit_code == 0, result.output
    assert "⚠ Could not read it" in result.output, result.output
    with ProgressStore(quiz_at) as store:
        quizzed = [(a["answer"], a["correct"], a["diagnosis"]) for a in store.attempts("4c")]
    data_dir, db = app_args(web_at)
    client = web_client_factory(data_dir, db=db)
    for text in ("abc", "0.123", "0.40"):
        _post(client, "4c", text, "zh")
    with ProgressStore(web_at) as store:
        posted = [(a["answer"], a["correct"], a["diagnosis"]) for a in store.attempts("4c")]
    assert quizzed == posted, (quizzed, posted)
    assert [c for _, c, _ in posted] == [None, False, True]


def test_a_sentence_kept_by_an_older_store_is_worded_again(
    tmp_path: Path, web_client_factory: Any
) -> None:
    path = tmp_path / "progress.sqlite3"
    db = connect(path)  # as version 3 left it, a sentence kept: later migrations run on open
    assert migrate(db, path, upto=3) == [1, 2, 3]
    db.execute(
        "INSERT INTO attempts (profile, exercise, answer, correct, created_at, diagnosis) "
        "VALUES ('default', '4c', '0.123', 0, '2026-11-29T10:00:00.000000+00:00', "
        "'这正是这个错误会算出的数')"
    )
    db.close()
    with ProgressStore.open(tmp_path) as store:
        (attempt,) = store.attempts("4c")
    assert attempt["diagnosis"] is None, attempt
    en = _verdicts(web_client_factory(tmp_path).get("/section/4?lang=en").text)
    assert en and not any(CJK.search(v) for v in en), en


def test_present_words_every_kind_in_both_languages() -> None:
    for text in ("0.40", "0.123", "0", "abc", "0.40 0.05", "0.4000001", "0.566"):
        data = answers.submit("4c", text).data()
        zh, en = (reasons.present("4c", text, data, lang) for lang in ("zh", "en"))
        assert CJK.search(zh) and not CJK.search(en), (text, zh, en)
        assert zh[0] in "✓✗↻⚠" and en[0] == zh[0], (zh, en)
        assert json.loads(json.dumps(data)) == data
