"""Every search hit opens on its own match, in the search page's language: the link names the
element holding it (``open=ID#hit``), and the page it opens has its first mark, ``id="hit"``,
inside that element and inside no closed ``<details>``; when the words are only in the other
language's text of it, ``id="hit"`` is on a note at the element's top that says so and links to
the same place in that language. The count says "50+" when the list is cut, and an empty query
shows the form."""

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
    """The elements around the page's ``id="hit"`` element (outermost first), its tag, and how
    many marks the page has."""

    def __init__(self, page: str) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, dict[str, str | None]]] = []
        self.around: list[tuple[str, dict[str, str | None]]] | None = None
        self.tag = ""
        self.marks = 0
        self.feed(page)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in VOID:
            return
        self.marks += tag == "mark"
        if ("id", "hit") in attrs:
            self.around, self.tag = list(self.stack), tag
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
        store.add_note(11, "掩码要放在 softmax 之前")
    with web_client_factory(home) as opened:
        yield opened


def _hits(client: TestClient, query: str, lang: str) -> list[tuple[str, str]]:
    page = client.get("/search", params={"q": query, "lang": lang})
    assert page.status_code == 200, page.text[:300]
    found = re.findall(r'<li class="hit" data-kind="(\w+)".*?<a href="([^"]+)"', page.text, re.S)
    return [(kind, html.unescape(href)) for kind, href in found]


def _check_landing(client: TestClient, kind: str, href: str, lang: str | None = None) -> None:
    """The page ``href`` opens is in the search page's language ``lang`` and its ``id="hit"``
    is a mark inside the element ``open=`` names, or a note at that element's top
    (:func:`_check_note`), in no closed ``<details>``."""
    url = urlsplit(href)
    params = parse_qs(url.query)
    assert url.fragment == "hit", href
    opened = params["open"][0]
    expected = {"note": "note-", "check": "check-", "glossary": "term-", "mistake": "mistake-",
                "section": "s-"}[kind]  # fmt: skip
    assert opened.startswith(expected), href
    if lang is not None:
        assert params["lang"] == [lang], f"{href}: not in the search page's language {lang}"
    page = client.get(f"{url.path}?{url.query}")
    assert page.status_code == 200, href
    assert f'<html lang="{params["lang"][0]}' in page.text, href
    place = MarkPlace(page.text)
    assert place.around is not None, f"{href}: no element with id=hit ({place.marks} marks)"
    ids = [attrs.get("id") for _, attrs in place.around]
    assert opened in ids, f"{href}: #hit is not inside #{opened}: {ids}"
    closed = [a for tag, a in place.around if tag == "details" and "open" not in a]
    assert not closed, f"{href}: #hit is inside a closed <details> {closed}"
    if place.tag != "mark":
        _check_note(client, href, page.text, opened, place)


def _check_note(client: TestClient, href: str, page: str, opened: str, place: MarkPlace) -> None:
    """``#hit`` is the note at the top of the highlighted element ``opened``: it says the words
    are in the other language's text and links to the same place there, which has the mark."""
    lang = parse_qs(urlsplit(href).query)["lang"][0]
    other = "zh" if lang == "en" else "en"
    holder = next(attrs for _, attrs in place.around or [] if attrs.get("id") == opened)
    assert "hit-elsewhere" in (holder.get("class") or ""), f"{href}: #{opened} not highlighted"
    note = re.search(r'<(p|dd) class="hit-note" id="hit">(.*?)</\1>', page, re.S)
    assert note, f"{href}: #hit is a {place.tag}, not the note"
    said = {"en": "only in the Chinese text", "zh": "只出现在这部分的英文文本中"}[lang]
    assert said in note.group(2), note.group(2)
    link = html.unescape(re.search(r'<a href="([^"]+)" hreflang="(\w+)"', note.group(2))[1])
    there = parse_qs(urlsplit(link).query)
    here = parse_qs(urlsplit(href).query)
    assert there["lang"] == [other] and urlsplit(link).fragment == "hit", link
    assert there["open"] == here["open"] and there["q"] == here["q"], (link, href)
    assert urlsplit(link).path == urlsplit(href).path, (link, href)
    far = MarkPlace(client.get(link).text)  # the same place in the other language: marked
    assert far.tag == "mark" and far.around and opened in [a.get("id") for _, a in far.around]


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


@pytest.mark.parametrize(("query", "lang"), [("掩码", "en"), ("mask", "zh")])
def test_a_hit_found_only_in_the_other_language_keeps_the_page_language(
    client: TestClient, query: str, lang: str
) -> None:
    """``掩码`` is only in the Chinese text of the glossary's causal mask and §10's check, ``mask``
    (in these hits) only in the English one: from the other language's page each opens in that
    page's language, on a note at the element's top; the learner's note opens on its mark."""
    hits = _hits(client, query, lang)
    kinds = {kind: href for kind, href in reversed(hits)}
    assert {"glossary", "check", "note"} <= set(kinds), kinds
    notes = 0
    for kind, href in hits:
        if kind in ("glossary", "check", "note"):
            _check_landing(client, kind, href, lang)
            opened = client.get(href.split("#")[0]).text
            notes += 'class="hit-note"' in opened
            if kind == "check":  # the check's folds are open, as for a marked hit
                assert '<details class="recap" open>' in opened, href
    assert notes >= 2, f"no hit of {query!r} opened on the other-language note ({lang})"
    # The note is said only when the other language's text has the words.
    unknown = client.get("/section/10", params={"lang": lang, "q": "zyzzyva", "open": "check-10"})
    assert "hit-note" not in unknown.text and "hit-elsewhere" not in unknown.text


@pytest.mark.parametrize(
    ("lang", "label", "title"),
    [("en", "Found only in the Chinese text (opens here, at the same place)", "Causal mask"),
     ("zh", "只在英文文本中找到（在这里以中文打开，位置相同）", "原始分数（Raw Score）")],
)  # fmt: skip
def test_hits_from_the_other_language_are_labelled_and_titled_in_the_page_language(
    client: TestClient, lang: str, label: str, title: str
) -> None:
    """The group says where its hits open; each title is the one the opened page shows, the
    snippet stays in its own language (``lang=`` on it)."""
    query = {"en": "掩码", "zh": "mask"}[lang]
    page = client.get("/search", params={"q": query, "lang": lang}).text
    other = page.partition('id="hits-other"')[2]
    assert other.split("</h2>", 1)[0] == f">{label}", other[:120]
    other_lang = "zh" if lang == "en" else "en"
    items = re.findall(r'<li class="hit".*?</li>', other, re.S)
    assert items and all(f'<p class="snippet" lang="{other_lang}">' in i for i in items)
    assert all(f"lang={lang}&" in html.unescape(h) for h in re.findall(r'href="([^"]+)"', other))
    titles = [html.unescape(t) for t in re.findall(r'<a href="[^"]+">([^<]+)</a>', other)]
    assert title in titles, titles


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
