"""Every form of the web lesson without JavaScript: its Post/Redirect/Get returns to the form
posted (an id the page carries), on /section/N and on /lesson; a form refused for a lost session
or for an empty answer comes back on the error page (site header, page language) with what was
typed; a cross-origin POST is still refused and offered nothing."""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

import pytest
from web_support import CSRF_COOKIE, ORIGIN, post_form

from attnlab.content import knowledge
from attnlab.progress.notes import new_note_id
from attnlab.web.ui_text import UI

EX = knowledge.section(9).exercises[0]
SECTION = EX.section
#: (form's address, its fields, the id its redirect anchors) for each form of a section.
FORMS = [
    (f"/section/{SECTION}/answer", {"answer": "the mean of the rows"}, f"check-{SECTION}"),
    (f"/section/{SECTION}/assess", {"status": "review"}, f"assess-{SECTION}"),
    (f"/section/{SECTION}/complete", {}, f"complete-{SECTION}"),
    (f"/exercise/{EX.id}", {"answer": "1"}, f"ex-{EX.id}"),
    (f"/section/{SECTION}/note", {"note_id": new_note_id(), "text": "mine"}, f"notes-{SECTION}"),
    (f"/section/{SECTION}/bookmark", {}, f"bookmark-{SECTION}"),
]


@pytest.fixture
def client(tmp_path: Path, web_client_factory: Any) -> Any:
    return web_client_factory(tmp_path)


def _message(page: str) -> str:
    found = re.search(r'id="error-message">(.*?)</p>', page, re.S)
    assert found, "no error line on the page"
    return html.unescape(found.group(1))


def _again(page: str) -> str:
    found = re.search(r'<form[^>]*id="form-again">(.*?)</form>', page, re.S)
    assert found, "the posted form is not offered again"
    return found.group(0)


@pytest.mark.parametrize("back", ["section", "lesson"])
@pytest.mark.parametrize(("url", "data", "anchor"), FORMS)
def test_each_form_returns_to_itself(
    client, url: str, data: dict[str, str], anchor: str, back: str
) -> None:  # type: ignore[no-untyped-def]
    post_form(client, FORMS[0][0], FORMS[0][1])  # an answer first: then it can be assessed
    r = post_form(client, f"{url}?lang=en", {**data, "back": back})
    page = "/lesson?lang=en" if back == "lesson" else f"/section/{SECTION}?lang=en"
    assert (r.status_code, r.headers["location"]) == (303, f"{page}#{anchor}")
    assert f'id="{anchor}"' in client.get(r.headers["location"]).text  # the anchor is there


@pytest.mark.parametrize(("kind", "anchor"), [("answer", "verdict"), ("solution", "solution")])
def test_the_practice_forms_return_to_themselves(client, kind: str, anchor: str) -> None:  # type: ignore[no-untyped-def]
    r = post_form(client, f"/practice/5/{kind}?lang=en", seed="3", answer="9 9 9")
    assert (r.status_code, r.headers["location"]) == (303, f"/practice/5?lang=en&seed=3#{anchor}")
    assert f'id="{anchor}"' in client.get(r.headers["location"]).text


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_lost_session_offers_the_typed_answer_again(client, tmp_path: Path, lang: str) -> None:  # type: ignore[no-untyped-def]
    typed = "我的答案 <b>& more</b>"
    stale = client.cookies[CSRF_COOKIE]
    client.cookies.clear()  # the learner cleared the cookies (or they expired)
    r = client.post(
        f"/exercise/{EX.id}?lang={lang}",
        data={"csrf_token": stale, "answer": typed, "back": "lesson"},
        headers={"Origin": ORIGIN},
    )
    assert r.status_code == 403
    assert _message(r.text) == UI[lang]["session_lost"]
    assert (
        'class="top-nav"' in r.text
        and f'<html lang="{"zh-CN" if lang == "zh" else "en"}"' in r.text
    )
    form = _again(r.text)
    assert html.escape(typed, quote=False) in form and typed not in form  # escaped, kept
    fresh = client.cookies[CSRF_COOKIE]
    assert fresh != stale and f'name="csrf_token" value="{fresh}"' in form
    fields = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)">', form))
    fields["answer"] = html.unescape(
        re.search(r"<textarea[^>]*>(.*?)</textarea>", form, re.S).group(1)
    )  # type: ignore[union-attr]
    action = html.unescape(re.search(r'action="([^"]+)"', form).group(1))  # type: ignore[union-attr]
    sent = client.post(action, data=fields, headers={"Origin": ORIGIN}, follow_redirects=False)
    assert (sent.status_code, sent.headers["location"]) == (303, f"/lesson?lang={lang}#ex-{EX.id}")


def test_a_cross_site_post_is_refused_and_offered_nothing(client) -> None:  # type: ignore[no-untyped-def]
    client.cookies.clear()
    r = client.post(
        f"/exercise/{EX.id}?lang=en",
        data={"csrf_token": "x" * 43, "answer": "typed elsewhere"},
        headers={"Origin": "http://evil.example"},
    )
    assert r.status_code == 403 and 'id="form-again"' not in r.text
    assert "typed elsewhere" not in r.text


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("typed", ["", "   \t "])
@pytest.mark.parametrize(
    "url", [f"/exercise/{EX.id}", f"/section/{SECTION}/answer", "/practice/5/answer"]
)
def test_an_empty_answer_is_refused_in_the_page_language_with_the_form(
    client, url: str, typed: str, lang: str
) -> None:  # type: ignore[no-untyped-def]
    r = post_form(client, f"{url}?lang={lang}", answer=typed, seed="3", back="section")
    assert r.status_code == 422
    assert 'class="top-nav"' in r.text  # the site's header
    line = _message(r.text)
    assert line.startswith(UI[lang]["field_answer"])  # "回答" on the Chinese page
    assert "missing" not in line and "not sent" not in line  # it was sent, empty
    assert 'name="answer"' in _again(r.text)


def test_my_notes_edits_and_deletes_a_note_and_returns_to_it(client) -> None:  # type: ignore[no-untyped-def]
    first, second = new_note_id(), new_note_id()
    for note_id, text in ((first, "first thought"), (second, "second thought")):
        post_form(client, "/section/4/note?lang=en", note_id=note_id, text=text)
    page = client.get("/notes?lang=en").text
    assert f'id="mynote-form-{first}"' in page and f'id="mynote-delete-{first}"' in page
    r = post_form(client, "/section/4/note?lang=en", note_id=first, text="edited", back="notes")
    assert (r.status_code, r.headers["location"]) == (303, f"/notes?lang=en#mynote-{first}")
    page = client.get(r.headers["location"]).text
    assert f'id="mynote-{first}"' in page and "edited" in page and "first thought" not in page
    r = post_form(client, "/section/4/note?lang=en", note_id=first, text="", back="notes")
    assert (r.status_code, r.headers["location"]) == (303, "/notes?lang=en#notes")
    page = client.get(r.headers["location"]).text
    assert 'id="notes"' in page and f"mynote-{first}" not in page and "second thought" in page
