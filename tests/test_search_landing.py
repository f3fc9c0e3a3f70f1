"""Every search hit opens on its own match: the link names the element holding it
(``open=ID#hit``), and the page it opens has its first mark, ``id="hit"``, inside that element
and inside no closed ``<details>``; in the language the hit was found in (the page's own when
both have it). The count says "50+" when the list is cut, and an empty query shows the form."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from fastapi.testclient import TestClient

from attnlab.content import search
from attnlab.progress.store import ProgressStore

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr"}  # fmt: skip


class MarkPlace(HTMLParser):
    """The elements around the page's ``<mark id="hit">`` (outermost first), and how many marks
    the page has."""

    def __init__(self, page: str) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, dict[str, str | None]]] = []
        self.around: list[tuple[str, dict[str, str | None]]] | None = None
        self.marks = 0
        self.feed(page)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in VOID:
            return
        if tag == "mark":
            self.marks += 1
            if ("id", "hit") in attrs:
                self.around = list(self.stack)
        self.stack.append((tag, dict(attrs)))

    def handle_endtag(self, tag: str) -> None:
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                del self.stack[i:]
                return


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory, web_client_factory) -> Iterator[TestClient]:
    home: Path = tmp_path_factory.mktemp("landing")
    with ProgressStore.open(home) as store:
        store.add_note(12, "my own trick: mask with -inf, never 0")
        store.add_note(12, "second thought on the trick")  # the one in the note box
        store.add_note(3, "记住：Query 负责提问")
    with web_client_factory(home) as opened:
        yield opened


def _hits(client: TestClient, query: str, lang: str) -> list[tuple[str, str]]:
    page = client.get("/search", params={"q": query, "lang": lang})
    assert page.status_code == 200, page.text[:300]
    found = re.findall(r'<li class="hit" data-kind="(\w+)".*?<a href="([^"]+)"', page.text, re.S)
    return [(kind, html.unescape(href)) for kind, href in found]


def _check_landing(client: TestClient, kind: str, href: str) -> None:
    url = urlsplit(href)
    params = parse_qs(url.query)
    assert url.fragment == "hit", href
    opened = params["open"][0]
    expected = {"note": "note-", "check": "check-", "glossary": "term-", "mistake": "mistake-",
                "section": "s-"}[kind]  # fmt: skip
    assert opened.startswith(expected), href
    page = client.get(f"{url.path}?{url.query}")
    assert page.status_code == 200, href
    place = MarkPlace(page.text)
    assert place.around is not None, f"{href}: no mark with id=hit ({place.marks} marks)"
    ids = [attrs.get("id") for _, attrs in place.around]
    assert opened in ids, f"{href}: the first mark is not inside #{opened}: {ids}"
    closed = [a for tag, a in place.around if tag == "details" and "open" not in a]
    assert not closed, f"{href}: the mark is inside a closed <details> {closed}"


@pytest.mark.parametrize(
    ("query", "lang"),
    [("causal mask", "zh"), ("causal mask", "en"), ("掩码", "zh"), ("trick", "en"),
     ("提问", "zh"), ('"causal mask"', "en"), ("mask*", "en"), ("upper triangle", "en"),
     ("softmax", "zh")],
)  # fmt: skip
def test_every_hit_lands_on_a_visible_mark_inside_its_element(
    client: TestClient, query: str, lang: str
) -> None:
    hits = _hits(client, query, lang)
    assert hits, query
    for kind, href in hits[:25]:
        _check_landing(client, kind, href)


def test_each_kind_of_hit_has_its_own_anchor(client: TestClient) -> None:
    kinds = {kind: href for kind, href in reversed(_hits(client, "mask", "en"))}
    kinds.update({k: h for k, h in reversed(_hits(client, "trick", "en"))})
    assert set(kinds) == set(search.KINDS), kinds
    assert len({parse_qs(urlsplit(h).query)["open"][0] for h in kinds.values()}) == len(kinds)
    for kind, href in kinds.items():
        _check_landing(client, kind, href)


def test_both_notes_of_a_section_are_found_where_they_are_shown(client: TestClient) -> None:
    notes = [href for kind, href in _hits(client, "trick", "en") if kind == "note"]
    assert len(notes) == 2
    for href in notes:
        _check_landing(client, "note", href)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_hit_opens_in_the_language_it_was_found_in(client: TestClient, lang: str) -> None:
    """``causal mask`` is in both languages' text of §10: from either page it opens in that
    page's language; ``掩码`` is only in the Chinese text, listed apart on the English page."""
    for _, href in _hits(client, "causal mask", lang)[:5]:
        assert parse_qs(urlsplit(href).query)["lang"] == [lang], href
    page = client.get("/search", params={"q": "掩码", "lang": "en"}).text
    own, _, other = page.partition('id="hits-other"')
    assert other and '<li class="hit"' not in own
    assert all("lang=zh" in h for h in re.findall(r'<a href="([^"]+)" hreflang="zh"', other))


def test_the_check_hit_opens_its_folds_and_others_stay_closed(client: TestClient) -> None:
    opened = client.get("/section/10", params={"lang": "en", "q": "mask", "open": "check-10"})
    plain = client.get("/section/10", params={"lang": "en", "q": "mask"})
    assert '<details class="peek" open>' in opened.text
    assert '<details class="peek">' in plain.text and 'peek" open' not in plain.text


@pytest.mark.parametrize(
    "bad", ["check-10 x", 'check-10"', "../check-10", "check-10" + "0" * 40, "mistake-no_such"]
)
def test_an_open_value_that_names_no_element_is_ignored(client: TestClient, bad: str) -> None:
    page = client.get("/section/10", params={"lang": "en", "q": "mask", "open": bad})
    assert page.status_code == 200
    assert 'peek" open' not in page.text and "found-mistake" not in page.text
    place = MarkPlace(page.text)  # the page's first mark is the anchor
    assert place.around is not None and "check" not in str(place.around[-1])


@pytest.mark.parametrize(("lang", "text"), [("zh", "找到 50+ 条"), ("en", "50+ found")])
def test_the_count_says_50_plus_when_capped(client: TestClient, lang: str, text: str) -> None:
    page = client.get("/search", params={"q": "a", "lang": lang}).text
    count = re.sub(r"<[^>]+>", "", page.split('id="search-count">', 1)[1].split("</p>", 1)[0])
    assert text in count, count
    assert page.count('<li class="hit"') == search.LIMIT
    few = client.get("/search", params={"q": "trick", "lang": lang}).text
    shown = re.sub(r"<[^>]+>", "", few.split('id="search-count">', 1)[1].split("</p>", 1)[0])
    assert "+" not in shown and "2" in shown, shown


@pytest.mark.parametrize("q", ["", "   ", "\x00", "\t\x1b"])
@pytest.mark.parametrize("lang", ["zh", "en"])
def test_an_empty_search_shows_the_form_with_a_hint(client: TestClient, q: str, lang: str) -> None:
    page = client.get("/search", params={"q": q, "lang": lang})
    assert page.status_code == 200
    assert 'class="top-search"' in page.text and f'<html lang="{lang}' in page.text
    hint = {"zh": "请输入要搜索的词", "en": "Type a word to search for"}[lang]
    assert hint in page.text and '<li class="hit"' not in page.text
