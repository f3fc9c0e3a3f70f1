"""The marks a search hit puts on the page it opens are made on the page's text, never on its
HTML: for queries that are also pieces of character references and tags ("3" and "39" of
``&#39;``, "lt", "amp", "quot", "#"), every section in both languages still parses to the same
text and the same elements, with each ``<mark>`` holding the query's characters."""

from __future__ import annotations

import re
from collections.abc import Iterator
from html.parser import HTMLParser

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from attnlab.content import search
from attnlab.core.example import SECTION_COUNT
from attnlab.web.routes_search import UNMARKED

QUERIES = ("3", "39", "lt", "gt", "amp", "quot", "#")


class Parsed(HTMLParser):
    """The text and the elements (marks aside) of an HTML page's ``<main>``, the text inside
    each ``<mark>``, and the pieces of text outside :data:`UNMARKED` elements."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.text: list[str] = []
        self.elements: list[tuple[str, str, tuple[tuple[str, str | None], ...]]] = []
        self.marks: list[str] = []
        self.markable: list[str] = []
        self._open_marks = self._unmarked = 0
        start, end = html.index("<main"), html.rindex("</main>")
        self.feed(html[start:end])
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "mark":
            self._open_marks += 1
            self.marks.append("")
            return
        self._unmarked += tag in UNMARKED
        if ("name", "note_id") in attrs:  # a new note's id is drawn afresh for every page
            attrs = [("name", "note_id")]
        self.elements.append(("start", tag, tuple(attrs)))

    def handle_endtag(self, tag: str) -> None:
        if tag == "mark":
            self._open_marks -= 1
            return
        self._unmarked -= tag in UNMARKED
        self.elements.append(("end", tag, ()))

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self._open_marks:
            self.marks[-1] += data
        elif not self._unmarked:
            self.markable.append(data)

    def count(self, query: str) -> int:
        """How often ``query`` occurs (case-insensitively) in the text that may be marked."""
        return sum(len(re.findall(re.escape(query), t, re.IGNORECASE)) for t in self.markable)


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory, web_client_factory) -> Iterator[TestClient]:
    # One event loop serves all its requests (as uvicorn's does), not a new one per request.
    with web_client_factory(tmp_path_factory.mktemp("highlight")) as client:
        yield client


def _marked(client: TestClient, url: str, query: str, lang: str) -> tuple[Parsed, Parsed]:
    plain = client.get(url, params={"lang": lang})
    marked = client.get(url, params={"lang": lang, "q": query})
    assert plain.status_code == marked.status_code == 200, marked.text[:300]
    return Parsed(plain.text), Parsed(marked.text)


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("query", QUERIES)
def test_marks_never_split_a_character_reference_or_a_tag(client, query: str, lang: str) -> None:
    for section in range(SECTION_COUNT):
        plain, marked = _marked(client, f"/section/{section}", query, lang)
        where = f"/section/{section}?lang={lang}&q={query}"
        assert "".join(marked.text) == "".join(plain.text), f"{where}: the text changed"
        assert marked.elements == plain.elements, f"{where}: an element or attribute changed"
        assert all(m.lower() == query for m in marked.marks), (where, marked.marks[:5])
        # Every occurrence in the text is marked, and nothing else.
        assert len(marked.marks) == plain.count(query), (where, len(marked.marks))


def test_the_hits_on_the_search_page_are_marked_the_same_way(client: TestClient) -> None:
    """The search page lists different hits for each query, so its marked page is compared
    with itself, marks removed: a mark inside a reference or a tag changes how it parses."""
    for query in QUERIES:
        page = client.get("/search", params={"lang": "en", "q": query}).text
        marked, unmarked = Parsed(page), Parsed(re.sub(r"</?mark[^>]*>", "", page))
        assert "".join(marked.text) == "".join(unmarked.text), query
        assert marked.elements == unmarked.elements, query
        assert all(m.lower() == query for m in marked.marks), marked.marks[:5]
        expected = unmarked.count(query) if 'class="hit"' in page else 0  # no hits: no marks
        assert len(marked.marks) == expected, (query, len(marked.marks))


def test_a_mark_is_made_where_the_page_shows_an_escaped_character(client: TestClient) -> None:
    """``&gt;`` and ``&#39;`` are text to the learner: searching for ``>`` or ``'`` marks them."""
    for section, query, shown in ((12, ">", "&gt;"), (0, "'", "&#39;")):
        page = client.get(f"/section/{section}", params={"lang": "en", "q": query}).text
        assert f"<mark>{shown}</mark>" in page or f'<mark id="hit">{shown}</mark>' in page, query


def test_the_parser_sees_a_broken_reference() -> None:
    """The check above can fail: a mark inside ``&#39;`` changes the parsed text."""
    whole, split = (
        Parsed(f"<main><p>it{ref}s</p></main>") for ref in ("&#39;", "&#<mark>39</mark>;")
    )
    assert "".join(whole.text) == "it's" and "".join(split.text) != "it's"


#: Queries made of the pieces of character references, tags and attributes.
ENTITY_PIECES = st.text(alphabet="&#;39xltgquoampsQ<>'\"= /", min_size=1, max_size=6)


@settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query=ENTITY_PIECES.filter(str.strip), lang=st.sampled_from(["zh", "en"]))
def test_any_query_of_reference_and_tag_pieces_leaves_the_page_intact(client, query, lang):
    for section in (0, 8, 12):  # apostrophes, formulas and code, "->" in code
        plain, marked = _marked(client, f"/section/{section}", query, lang)
        assert "".join(marked.text) == "".join(plain.text), (section, query)
        assert marked.elements == plain.elements, (section, query)
        # What is marked is what the query finds (quotes are its syntax, not text to find).
        found = search.marks(query)
        assert all(found.fullmatch(m) for m in marked.marks), marked.marks
