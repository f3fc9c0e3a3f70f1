"""The query syntax: quoted phrases, hyphenated words, full-width letters and digits, a prefix
``*``, and any other text searched for as it is; the same pattern finds documents and marks them;
no input makes the index fail."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tiers import examples

from attnlab.content import search, search_query
from attnlab.content.search_query import Term
from attnlab.progress.store import ProgressStore


@pytest.mark.parametrize(
    ("query", "terms"),
    [
        ("causal mask", [Term(("causal",)), Term(("mask",))]),
        ('"causal mask"', [Term(("causal", "mask"))]),
        ("causal-mask", [Term(("causal", "mask"))]),
        ('"causal   mask" W_O', [Term(("causal", "mask")), Term(("W_O",))]),
        ("mask*", [Term(("mask",), prefix=True)]),
        ("\uff37\uff2f", [Term(("WO",))]),  # full-width W and O
        ("\uff44_\uff4b", [Term(("d_k",))]),
        ('"unclosed phrase', [Term(("unclosed", "phrase"))]),
        ("-inf", [Term(("inf",))]),
        ("*", [Term(("*",))]),  # nothing but syntax: searched for as text
        ('""', [Term(('""',))]),
        ("（注意", [Term(("（注意",))]),  # full-width punctuation stays as typed
        ("mask mask", [Term(("mask",))]),
    ],
)
def test_a_query_is_read_as_terms(query: str, terms: list[Term]) -> None:
    assert search_query.parse(query) == terms


@pytest.mark.parametrize(
    ("query", "text", "marked"),
    [
        ('"causal mask"', "a causal mask here", ["causal mask"]),
        ('"causal mask"', "the causal_mask tensor", ["causal_mask"]),
        ("causal-mask", "Causal  Mask", ["Causal  Mask"]),
        ("causal-mask", "causal‑mask (non-breaking)", ["causal‑mask"]),
        ("mask*", "masked and mask", ["masked", "mask"]),
        ("mask", "masked", ["mask"]),
        ("\uff37\uff2f", "the W_O and WO", ["WO"]),
    ],
)
def test_the_pattern_marks_what_the_query_finds(query: str, text: str, marked: list[str]) -> None:
    terms = search_query.parse(query)
    assert search_query.matches(terms, text)
    assert [m.group(0) for m in search_query.pattern(terms).finditer(text)] == marked


def test_a_phrase_needs_its_words_together() -> None:
    terms = search_query.parse('"causal mask"')
    assert not search_query.matches(terms, "a mask that is causal")
    assert search_query.matches(search_query.parse("causal mask"), "a mask that is causal")


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProgressStore]:
    with ProgressStore.open(tmp_path_factory.mktemp("query")) as opened:
        yield opened


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize(
    ("query", "like"),
    [('"causal mask"', "causal mask"), ("causal-mask", "causal mask"),
     ("\uff37_\uff2f", "W_O"), ("mask*", "mask")],
)  # fmt: skip
def test_the_syntax_finds_what_the_plain_words_find(
    store: ProgressStore, query: str, like: str, lang: str
) -> None:
    found = {(h.kind, h.key) for h in search.search(store, query, lang)}
    plain = {(h.kind, h.key) for h in search.search(store, like, lang)}
    assert found and found <= plain, (query, sorted(plain - found))
    assert ("section", "s10" if "mask" in like else "s15") in found


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_hits_in_the_pages_language_come_first(store: ProgressStore, lang: str) -> None:
    for query in ("causal mask", "mask", "softmax"):
        langs = [h.lang for h in search.search(store, query, lang)]
        assert lang in langs and langs == sorted(langs, key=lambda x: x != lang), (query, langs)
    other = search.search(store, "掩码" if lang == "en" else "upper triangle", lang)
    assert other and all(h.lang != lang for h in other)


def test_a_quoted_phrase_finds_only_the_phrase(store: ProgressStore) -> None:
    loose = search.search(store, "mask causal", "en")
    phrase = search.search(store, '"mask causal"', "en")
    assert loose and not phrase


ANY_TEXT = st.text(
    alphabet=st.one_of(st.sampled_from('"*-^:()[]{}+~%_\\\' \x00\x1b\ufeffａＷ０'),
                       st.characters()),  # lone surrogates too
    min_size=0,
    max_size=40,
)  # fmt: skip


@settings(
    deadline=None,
    max_examples=examples(150),
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(query=ANY_TEXT)
def test_any_text_is_a_search_or_a_clear_refusal(store: ProgressStore, query: str) -> None:
    try:
        hits = search.search(store, query, "en")
    except ValueError as exc:
        assert re.match(r"search: expected", str(exc)), exc
        surrogate = any(0xD800 <= ord(c) <= 0xDFFF for c in query)
        assert search_query.is_blank(query) or len(query) > search.MAX_QUERY or surrogate
    else:
        assert all(h.kind in search.KINDS for h in hits)


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory, web_client_factory) -> Iterator[TestClient]:
    home: Path = tmp_path_factory.mktemp("query-web")
    with web_client_factory(home) as opened:
        yield opened


@settings(
    deadline=None,
    max_examples=examples(60),
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(query=st.text(alphabet=st.characters(codec="utf-8"), max_size=110))
def test_the_search_page_never_fails(client: TestClient, query: str) -> None:
    page = client.get("/search", params={"q": query, "lang": "zh"})
    assert page.status_code in (200, 422), page.text[:300]
    assert 'class="top-search"' in page.text  # the site's header, never a bare error
    if page.status_code == 422:
        assert len(query) > search.MAX_QUERY
