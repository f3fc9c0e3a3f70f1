"""What keeps the web lesson fast under a classroom (issue 16; the latency itself is measured by
``benchmarks/web_load.py``): compressed pages, sections rendered at start-up, figures kept on
disk per package version."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import attnlab
from attnlab.core.example import SECTION_COUNT
from attnlab.text.i18n import LANGS
from attnlab.web import figures
from attnlab.web.app import build_shared


def test_lesson_is_gzipped_when_asked(tmp_path: Path, web_client_factory: Any) -> None:
    client = web_client_factory(tmp_path)
    zipped = client.get("/lesson?lang=en", headers={"Accept-Encoding": "gzip"})
    assert zipped.headers.get("content-encoding") == "gzip"
    assert 'id="s-19"' in zipped.text  # httpx decoded it
    assert zipped.num_bytes_downloaded < len(zipped.content) / 3
    plain = client.get("/lesson?lang=en", headers={"Accept-Encoding": "identity"})
    assert "content-encoding" not in plain.headers
    # Equal but for the fresh id each empty note box gets (so its first autosave is idempotent).
    fresh_ids = re.compile(r'name="note_id" value="[0-9a-f-]{36}"')
    assert fresh_ids.sub("", plain.text) == fresh_ids.sub("", zipped.text)
    raw = client.get("/healthz", headers={"Accept-Encoding": "gzip"})
    assert "content-encoding" not in raw.headers  # tiny answers are not worth compressing


def test_build_shared_renders_every_section_in_every_language(
    tmp_path: Path, web_client_factory: Any
) -> None:
    client = web_client_factory(tmp_path)
    section_body = client.app.state.templates.globals["section_body"]
    build_shared(client.app)
    built = section_body.cache_info().currsize
    assert built >= SECTION_COUNT * len(LANGS)
    # No page renders a section's explanation on a request: build_shared made every one.
    for lang in LANGS:
        assert client.get(f"/lesson?lang={lang}").status_code == 200
        for section_id in range(SECTION_COUNT):
            assert client.get(f"/section/{section_id}?lang={lang}").status_code == 200
    assert section_body.cache_info().currsize == built


@pytest.fixture
def drawn(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[list[tuple[str, str]]]:
    """A fresh figure cache in ``tmp_path`` whose drawings are recorded, not drawn."""
    calls: list[tuple[str, str]] = []

    def fake(name: str, lang: str) -> str:
        calls.append((name, lang))
        return f'<svg aria-label="{name}">{lang} {len(calls)}</svg>'

    monkeypatch.setenv(figures.CACHE_ENV, str(tmp_path))
    monkeypatch.setattr(figures, "_draw", fake)
    _forget()
    yield calls
    _forget()


def _forget() -> None:
    """Forget what this process read or drew (as a new server process would)."""
    figures.cache_dir.cache_clear()
    figures.svg.cache_clear()


def test_figures_are_drawn_once_and_read_from_disk(drawn: list[tuple[str, str]]) -> None:
    first = figures.svg("mask", "en")
    assert drawn == [("mask", "en")]
    kept = figures.cache_dir() / "mask-en.svg"
    assert kept.read_text(encoding="utf-8") == first
    figures.svg.cache_clear()  # a new server process: the figure is read from the disk
    assert figures.svg("mask", "en") == first and drawn == [("mask", "en")]
    assert figures.cache_dir().name.startswith(f"figures-{attnlab.__version__}-")


def test_a_new_version_draws_the_figures_again(
    drawn: list[tuple[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    old = figures.svg("cost", "zh")
    old_dir = figures.cache_dir()
    monkeypatch.setattr(attnlab, "__version__", "99.0.0")
    _forget()
    new = figures.svg("cost", "zh")
    assert figures.cache_dir() != old_dir and new != old
    assert drawn == [("cost", "zh"), ("cost", "zh")]


def test_package_digest_follows_every_file_but_bytecode(tmp_path: Path) -> None:
    (tmp_path / "plots").mkdir()
    (tmp_path / "plots" / "chain.py").write_text("x = 1\n")
    before = figures.package_digest(tmp_path)
    (tmp_path / "plots" / "__pycache__").mkdir()
    (tmp_path / "plots" / "__pycache__" / "chain.cpython-311.pyc").write_bytes(b"\0")
    assert figures.package_digest(tmp_path) == before
    (tmp_path / "plots" / "chain.py").write_text("x = 2\n")
    assert figures.package_digest(tmp_path) != before


def test_unknown_figure_is_refused() -> None:
    with pytest.raises(KeyError, match=r"figure must be one of weights, .*, got 'pie'"):
        figures.svg("pie", "en")


def test_pages_revalidate_with_an_etag_and_change_with_the_learners_state(
    tmp_path: Path,
) -> None:
    from fastapi.testclient import TestClient
    from web_support import ORIGIN, post_form

    from attnlab.web.app import create_app

    client = TestClient(create_app(tmp_path, figures_on=False), base_url=ORIGIN)
    client.get("/healthz")
    for url in ("/section/1", "/lesson", "/glossary", "/notes", "/search?q=mask"):
        first = client.get(url)
        tag = first.headers["etag"]
        assert first.status_code == 200 and "no-cache" in first.headers["cache-control"]
        again = client.get(url, headers={"If-None-Match": tag})
        assert again.status_code == 304 and again.content == b"", url
        assert again.headers["etag"] == tag
        other = client.get(url, headers={"If-None-Match": 'W/"stale"'})
        assert other.status_code == 200 and other.headers["etag"] == tag
    # The learner's own answer changes the page, so the old tag no longer matches.
    tag = client.get("/section/1").headers["etag"]
    post_form(client, "/section/1/answer", answer="each token reads only the past")
    fresh = client.get("/section/1", headers={"If-None-Match": tag})
    assert fresh.status_code == 200 and "each token reads only the past" in fresh.text


@pytest.mark.parametrize("page", ["/lesson", "/section/3", "/explorer", "/notes", "/glossary"])
def test_every_linked_file_is_kept_by_the_browser(
    tmp_path: Path, web_client_factory: Any, page: str
) -> None:
    """Each stylesheet and script a page links is cached for a year under its hashed address;
    asked without its hash it is revalidated by ETag (304), never sent without a cache header."""
    client = web_client_factory(tmp_path)
    html = client.get(f"{page}?lang=en").text
    linked = re.findall(r'<(?:link rel="stylesheet" href|script src)="([^"]+)"', html)
    assert len(linked) >= 4, linked
    for url in linked:
        assert re.search(r"\?v=[0-9a-f]{16}$", url), f"{url}: no content hash in the address"
        answer = client.get(url)
        assert answer.status_code == 200 and answer.content, url
        assert answer.headers["cache-control"] == "public, max-age=31536000, immutable", url
    for url in linked:
        if url.startswith("/static/"):
            bare = client.get(url.split("?")[0])
            assert bare.headers["cache-control"] == "no-cache" and "etag" in bare.headers, url
            again = client.get(url.split("?")[0], headers={"If-None-Match": bare.headers["etag"]})
            assert again.status_code == 304, url
            stale = client.get(url.split("?")[0] + "?v=0000000000000000")
            assert stale.headers["cache-control"] == "no-cache", url
