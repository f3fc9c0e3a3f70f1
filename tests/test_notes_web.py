"""The note box and bookmark toggle of every section without JavaScript (form POSTs with the
session token), the JSON answer autosave gets, the notes shown in their section and on "My
notes", and the refusals (4xx, one line, nothing written)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from web_support import ORIGIN, fetch_headers, post_form

from attnlab.progress.store import ProgressStore


def _box_id(html: str, section: int) -> str:
    form = html[html.index(f'action="/section/{section}/note') :]
    return re.search(r'name="note_id" value="([0-9a-f-]{36})"', form).group(1)


def _notes(home: Path, db: str | None = None) -> list[tuple[int, str]]:
    with ProgressStore.open(home, db=db) as store:
        return [(n.section, n.text) for n in store.notes()]


def test_note_box_without_javascript(web_client_factory, tmp_path: Path, db_url) -> None:  # type: ignore[no-untyped-def]
    client = web_client_factory(tmp_path, db=db_url)
    page = client.get("/section/5?lang=en").text
    assert 'id="note-5"' in page and "Your note on this section" in page
    note_id = _box_id(page, 5)
    saved = post_form(client, "/section/5/note?lang=en", note_id=note_id, text="rows sum to 1")
    assert (saved.status_code, saved.headers["location"]) == (303, "/section/5?lang=en#notes-5")
    again = client.get("/section/5?lang=en").text
    assert _box_id(again, 5) == note_id  # the box keeps editing the same note
    assert ">rows sum to 1</textarea>" in again
    post_form(client, "/section/5/note?lang=en", note_id=note_id, text="rows sum to one")
    assert _notes(tmp_path, db_url) == [(5, "rows sum to one")]
    box_7 = _box_id(client.get("/lesson?lang=en").text, 7)
    lesson = post_form(
        client, "/section/7/note?lang=en", note_id=box_7, text="from the lesson", back="lesson"
    )
    assert lesson.headers["location"] == "/lesson?lang=en#notes-7"
    post_form(client, "/section/5/note?lang=en", note_id=note_id, text="  ")  # emptied: deleted
    assert _notes(tmp_path, db_url) == [(7, "from the lesson")]


def test_autosave_answers_json_and_notes_show_everywhere(
    web_client_factory, tmp_path: Path, db_url
) -> None:  # type: ignore[no-untyped-def]
    client = web_client_factory(tmp_path, db=db_url)
    with ProgressStore.open(tmp_path, db=db_url) as store:
        store.add_note(10, "written in the terminal")
    page = client.get("/lesson?lang=zh").text
    box = _box_id(page, 10)
    answer = client.post(
        "/section/10/note?lang=zh",
        data={"note_id": box, "text": "掩码：未来的权重恰好是 0"},
        headers=fetch_headers(client, {"Accept": "application/json"}),
    )
    assert answer.status_code == 200 and answer.json()["id"] == box
    assert _notes(tmp_path, db_url) == [(10, "掩码：未来的权重恰好是 0")]  # the same note, edited
    mine = client.get("/notes?lang=zh").text
    assert "掩码：未来的权重恰好是 0" in mine and 'href="/section/10?lang=zh#notes-10"' in mine
    assert "还没有书签" in mine


def test_bookmark_toggle_and_my_notes(web_client_factory, tmp_path: Path, db_url) -> None:  # type: ignore[no-untyped-def]
    client = web_client_factory(tmp_path, db=db_url)
    assert "☆ Bookmark" in client.get("/section/8?lang=en").text
    done = post_form(client, "/section/8/bookmark?lang=en", back="lesson")
    assert done.headers["location"] == "/lesson?lang=en#bookmark-8"
    assert 'aria-pressed="true">★ Bookmarked' in client.get("/section/8?lang=en").text
    mine = client.get("/notes?lang=en").text
    assert '<a href="/section/8?lang=en">★ 8. ' in mine and "No notes yet" in mine
    post_form(client, "/section/8/bookmark?lang=en")
    assert "No bookmarks yet" in client.get("/notes?lang=en").text


@pytest.mark.parametrize(
    ("url", "fields", "status", "message"),
    [
        ("/section/20/note", {"note_id": "0" * 8, "text": "x"}, 404,
         "expected an integer 0-19"),
        ("/section/5/note", {"note_id": "42", "text": "x"}, 422, "note id: expected a lowercase"),
        ("/section/5/note", {"note_id": "0b7e2a52-52e4-4a3e-9d2e-4a2b8f0c1d11", "text": "x" * 2001},
         422, "note: expected at most 2000 characters, found 2001"),
        ("/section/5/bookmark", {"back": "elsewhere"}, 422, "back must be one of section, lesson"),
    ],
)  # fmt: skip
def test_bad_forms_are_refused_and_nothing_is_written(  # type: ignore[no-untyped-def]
    web_client_factory, tmp_path: Path, db_url, url: str, fields: dict, status: int, message: str
) -> None:
    client = web_client_factory(tmp_path, db=db_url)
    refused = post_form(client, url + "?lang=en", **fields)
    assert refused.status_code == status
    assert message in re.search(r'id="error-message">([^<]*)<', refused.text).group(1)
    with ProgressStore.open(tmp_path, db=db_url) as store:
        assert (store.notes(), store.bookmarks()) == ([], ())


def test_a_note_needs_the_session_token(web_client_factory, tmp_path: Path, db_url) -> None:  # type: ignore[no-untyped-def]
    client = web_client_factory(tmp_path, db=db_url)
    box = _box_id(client.get("/section/5").text, 5)
    forged = client.post(
        "/section/5/note", data={"note_id": box, "text": "x"}, headers={"Origin": ORIGIN}
    )
    assert forged.status_code == 403
    assert _notes(tmp_path, db_url) == []
