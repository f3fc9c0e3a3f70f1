"""Search: Chinese words of 1-4 characters, English case-insensitively (W_O, d_k, softmax), the
learner's notes, empty results, the teaching section ranked first, the JSON shape, the index
rebuilt only when the lesson changes, and the web page with its marks."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from attnlab.cli.main import app
from attnlab.content import search, sections
from attnlab.progress.store import ProgressStore


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("search")
    with ProgressStore.open(folder) as store:
        store.add_note(12, "my own trick: mask with -inf, never 0")
        store.add_note(3, "记住：Query 负责提问")
    return folder


@pytest.fixture(scope="module")
def store(home: Path):  # type: ignore[no-untyped-def]
    with ProgressStore.open(home) as opened:
        yield opened


def _sections(store: ProgressStore, query: str, lang: str = "zh") -> list[int | None]:
    return [h.section for h in search.search(store, query, lang) if h.kind == "section"]


@pytest.mark.parametrize(
    ("query", "teaching"),
    [("掩", 10), ("掩码", 10), ("缩放", 8), ("多头", 15), ("梯度", 7), ("自注意", 14),
     ("因果掩码", 10), ("softmax", 5), ("SoftMax", 5), ("w_o", 15), ("W_O", 15), ("d_k", 8),
     ("causal mask", 10), ("raw score", 4), ("Multi-head", 15)],
)  # fmt: skip
def test_the_section_that_teaches_a_term_comes_first(
    store: ProgressStore, query: str, teaching: int
) -> None:
    for lang in ("zh", "en"):
        found = _sections(store, query, lang)
        assert found and found[0] == teaching, f"{query!r} ({lang}): sections in order {found}"


def test_a_term_in_a_title_or_glossary_outranks_a_mention(store: ProgressStore) -> None:
    found = _sections(store, "softmax", "en")
    assert len(found) > 3 and found.index(5) < found.index(18), found  # 18 mentions it often


def test_every_kind_is_found_in_both_languages(store: ProgressStore) -> None:
    kinds = {h.kind for h in search.search(store, "掩码", "zh")}
    assert {"section", "check", "glossary", "mistake"} <= kinds
    english = search.search(store, "upper triangle", "en")
    assert english and all(h.lang == "en" for h in english)
    mistake = next(h for h in search.search(store, "triu", "en") if h.kind == "mistake")
    assert mistake.section == 10 and "triu" in mistake.snippet


def test_notes_are_found_first(store: ProgressStore) -> None:
    hits = search.search(store, "TRICK", "en")
    assert (hits[0].kind, hits[0].section) == ("note", 12)
    assert hits[0].title == f"Note · 12. {sections.section(12, 'en').title}"
    assert "my own trick" in hits[0].snippet
    assert [h.kind for h in search.search(store, "提问", "zh")][:1] == ["note"]


def test_nothing_found_is_an_empty_list(store: ProgressStore) -> None:
    assert search.search(store, "zebra crossing", "en") == []
    assert search.search(store, "鲸", "zh") == []
    for query in ("zebra OR mask", "NEAR(a b)", "%", "a\\b"):  # FTS5 and LIKE syntax is text
        assert search.search(store, query, "en") == [], query
    # Quotes and a trailing * are the query's own syntax; OR is a word to find, like any other.
    assert search.search(store, '"mask" OR *', "en") == search.search(store, "mask or", "en")


@pytest.mark.parametrize("query", ["", "   ", "x" * 101])
def test_an_empty_or_over_long_query_is_refused(store: ProgressStore, query: str) -> None:
    with pytest.raises(ValueError, match=r"search: expected (some text \(1-100|at most 100)"):
        search.search(store, query, "en")


def test_the_index_is_rebuilt_only_when_the_lesson_changes(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = home / "progress.sqlite3"

    def stored() -> tuple[str, int]:
        with sqlite3.connect(db) as raw:
            digest = raw.execute("SELECT value FROM search_meta").fetchone()[0]
            return digest, raw.execute("SELECT COUNT(*) FROM search_docs").fetchone()[0]

    with ProgressStore.open(home) as store:
        search.search(store, "mask", "en")
        before = stored()
        assert before == (search.digest(), len(search.corpus()))
        with sqlite3.connect(db) as raw:  # a marker row: a rebuild would delete it
            raw.execute(
                "INSERT INTO search_docs (key, title, body, terms) VALUES ('x', '', '', '')"
            )
        search.search(store, "scaling", "en")
        assert stored()[1] == len(search.corpus()) + 1
        monkeypatch.setattr(search, "digest", lambda: "a newer lesson")
        search.search(store, "mask", "en")
        assert stored() == ("a newer lesson", len(search.corpus()))


def test_a_store_that_cannot_be_written_is_searched_from_memory(tmp_path: Path) -> None:
    with ProgressStore.open(tmp_path) as store:
        store.add_note(1, "mean of the rows")
    with ProgressStore.open(tmp_path) as store:
        store.read_only = ("made read-only by the test", "测试设为只读")  # as for a 0444 file
        hits = search.search(store, "mean of the", "en")
        assert (hits[0].kind, hits[0].snippet) == ("note", "mean of the rows")
        assert any(h.kind == "section" for h in hits)  # the lesson too, from the memory index
        assert _sections(store, "缩放")[0] == 8
    with sqlite3.connect(tmp_path / "progress.sqlite3") as raw:  # the file was not written
        assert raw.execute("SELECT COUNT(*) FROM search_meta").fetchone()[0] == 0


def _cli(home: Path, *args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(app, ["search", *args, "--data-dir", str(home), "--lang", "en"])


def test_cli_json_is_always_a_list_of_hits(home: Path) -> None:
    hits = json.loads(_cli(home, "掩码", "--json").stdout)
    assert hits and all(set(h) == {"section", "kind", "title", "snippet"} for h in hits)
    assert all(h["kind"] in search.KINDS for h in hits)
    assert all(h["section"] is None or 0 <= h["section"] <= 19 for h in hits)
    assert json.loads(_cli(home, "zebra crossing", "--json").stdout) == []
    text = _cli(home, "W_O").stdout
    assert text.startswith("[Section §15] 15. ")


@pytest.mark.parametrize("query", ["", "x" * 101])
def test_cli_bad_query_is_one_line_exit_2(home: Path, query: str) -> None:
    result = _cli(home, query, "--json")
    assert result.exit_code == 2
    assert re.fullmatch(
        r"attnlab: error: search: expected (some text \(1-100 characters\), found none|at most "
        r"100 characters, found 101)\n",
        result.stderr,
    )


def test_web_search_page_and_marks(web_client_factory, home: Path) -> None:  # type: ignore[no-untyped-def]
    client = web_client_factory(home)
    page = client.get("/search", params={"q": "d_k", "lang": "en"})
    assert page.status_code == 200
    first = re.search(r'<li class="hit" data-kind="(\w+)">.*?<a href="([^"]+)"', page.text, re.S)
    assert first is not None
    assert "/section/8?lang=en&amp;q=d_k&amp;open=s-8#hit" in page.text
    opened = client.get("/section/8", params={"q": "D_K", "lang": "en"})
    assert '<mark id="hit">d_k</mark>' in opened.text
    assert opened.text.count("<mark") >= 2
    assert "<mark" not in opened.text.split("<main", 1)[0]  # only the page's content is marked
    blank = client.get("/search", params={"q": " ", "lang": "en"})  # the form, with a hint
    assert blank.status_code == 200 and "Type a word to search for" in blank.text
    empty = client.get("/search", params={"q": "zebra", "lang": "en"})
    assert "Nothing found for “zebra”." in empty.text
    assert client.get("/search").status_code == 200  # the form alone


def test_snippets_carry_no_latex(tmp_path: Path) -> None:
    """A hit's snippet is readable text: formulas' LaTeX is not indexed (it leaked
    ``\\end{bmatrix}`` into the snippet of 掩码)."""
    with ProgressStore.open(tmp_path) as store:
        for query in ("掩码", "softmax", "W_Q"):
            for hit in search.search(store, query, "zh"):
                assert "\\end{" not in hit.snippet and "\\begin{" not in hit.snippet, hit


@pytest.mark.parametrize("control", ["\x00", "\x1b", "\x7f", "\x85", "\t"])
def test_a_control_character_in_a_query_is_a_blank(store: ProgressStore, control: str) -> None:
    assert search.check_query(f"{control}causal{control}mask{control}") == ["causal", "mask"]
    assert search.search(store, f"{control}causal mask", "en") == search.search(
        store, "causal mask", "en"
    )
    with pytest.raises(
        ValueError, match=r"search: expected some text \(1-100 characters\), found none"
    ):
        search.search(store, control * 3, "en")


def test_web_search_with_nul_is_a_search_not_a_broken_database(web_client_factory, home) -> None:  # type: ignore[no-untyped-def]
    client = web_client_factory(home)
    plain = client.get("/search", params={"q": "mask", "lang": "en"})
    for q in ("\x00mask", "mask\x00", "\x00\x00mask\x1b"):
        r = client.get("/search", params={"q": q, "lang": "en"})
        assert r.status_code == 200 and "cannot be used" not in r.text, r.text[:300]
        hits = re.findall(r'<li class="hit"', r.text)
        assert len(hits) == len(re.findall(r'<li class="hit"', plain.text)) > 0
    alone = client.get("/search", params={"q": "\x00", "lang": "en"})  # a blank query
    assert alone.status_code == 200 and "cannot be used" not in alone.text
    assert "Type a word to search for" in alone.text and '<li class="hit"' not in alone.text
