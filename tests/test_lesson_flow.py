"""The knowledge checks on /lesson and /section/N without JavaScript: saved answers and verdicts
are shown on both pages, and a form returns to itself on the page it was on (/lesson#<its id> or
/section/N#...). The in-place posting with JavaScript is tests/test_browser.py's."""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

import pytest
from web_support import post_form

from attnlab.content import knowledge
from attnlab.text.fmt import answer

EX = knowledge.section(9).exercises[0]
RIGHT = answer(EX.expected, EX.decimals)


@pytest.fixture
def client(tmp_path: Path, web_client_factory: Any) -> Any:
    return web_client_factory(tmp_path)


def post(client: Any, url: str, data: dict[str, str]) -> Any:
    return post_form(client, url, data)


def check_html(page: str, section: int) -> str:
    """The ``<section class="check">`` of ``section`` in a page."""
    found = re.search(rf'<section class="check" id="check-{section}">(.*?)</section>', page, re.S)
    assert found, f"no check-{section} on the page"
    return html.unescape(found.group(1))


FORMS = [
    ("/section/3/answer", {"answer": "the mean of the rows"}, 3, "check-3"),
    ("/section/3/assess", {"status": "review"}, 3, "assess-3"),
    ("/section/3/complete", {}, 3, "complete-3"),
    (f"/exercise/{EX.id}", {"answer": RIGHT}, EX.section, f"ex-{EX.id}"),
]


@pytest.mark.parametrize(("url", "data", "section", "anchor"), FORMS)
def test_a_form_on_the_lesson_returns_to_the_lesson(client, url, data, section, anchor) -> None:
    r = post(client, f"{url}?lang=en", {**data, "back": "lesson"})  # to the form posted
    assert (r.status_code, r.headers["location"]) == (303, f"/lesson?lang=en#{anchor}")
    r = post(client, f"{url}?lang=en", data)  # from /section/N: stays there
    assert (r.status_code, r.headers["location"]) == (303, f"/section/{section}?lang=en#{anchor}")


def test_the_lesson_shows_saved_answers_and_verdicts(client) -> None:
    post(client, "/section/3/answer", {"answer": "the mean of the rows", "back": "lesson"})
    post(client, f"/exercise/{EX.id}", {"answer": RIGHT, "back": "lesson"})
    post(client, "/exercise/4c", {"answer": "0.50", "back": "lesson"})
    page = client.get("/lesson?lang=en").text
    three, nine, four = (check_html(page, s) for s in (3, EX.section, 4))
    assert "You wrote" in three and "the mean of the rows" in three
    assert f'value="{RIGHT}"' in nine and "✓ Right" in nine
    assert 'value="0.50"' in four and "✗ Not yet" in four
    assert 'name="back" value="lesson"' in three  # its forms come back here
    textarea = re.search(r'<textarea id="answer-3"[^>]*>(.*?)</textarea>', three, re.S)
    assert textarea and textarea.group(1) == "the mean of the rows"  # prefilled to edit


def test_one_check_alone(client) -> None:
    post(client, "/section/3/answer", {"answer": "the mean of the rows"})
    r = client.get("/section/3/check?page=lesson&lang=en")
    assert r.status_code == 200
    alone = check_html(r.text, 3)
    assert "the mean of the rows" in alone and 'name="back" value="lesson"' in alone
    assert 'name="back" value="section"' in check_html(client.get("/section/3/check").text, 3)
    assert client.get("/section/99/check").status_code == 404
    assert client.get("/section/3/check?page=elsewhere").status_code == 422
