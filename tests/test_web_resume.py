"""The contents list shows which sections are done and which the learner marked "review again",
in symbols and in words for a screen reader; "continue" says why it picks its section."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from attnlab.progress.store import ProgressStore
from attnlab.web.ui_text import UI


def _toc_item(html: str, section: int) -> str:
    found = re.search(rf'<li class="([^"]*)"><a href="#s-{section}">(.*?)</a></li>', html, re.S)
    assert found is not None, f"§{section} is not in the contents list"
    return found.group(0)


def _continue_link(html: str) -> str:
    found = re.search(r'<a class="continue" id="continue"[^>]*>(.*?)</a>', html, re.S)
    assert found is not None, "no continue link"
    return found.group(1)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_review_again_shows_in_the_contents_and_continue_says_why(
    tmp_path: Path, web_client_factory: Any, lang: str
) -> None:
    client = web_client_factory(tmp_path)
    with ProgressStore.open(tmp_path) as store:
        for done in (0, 1, 2, 3, 4):
            store.mark_complete(done)
        store.set_assessment(3, "review")  # completed, then marked "review again"
    ui = UI[lang]
    html = client.get(f"/lesson?lang={lang}").text
    review, done, todo = _toc_item(html, 3), _toc_item(html, 2), _toc_item(html, 5)
    assert 'class="review"' in review and "↻" in review and ui["toc_review"] in review, review
    assert 'class="done"' in done and "✓" in done and ui["toc_done"] in done, done
    assert 'class=""' in todo and "↻" not in todo and "✓" not in todo, todo
    assert (
        client.get(f"/continue?lang={lang}", follow_redirects=False).headers["location"]
        == f"/section/3?lang={lang}"
    )
    assert ui["continue_review"].format(n=3) in _continue_link(html), _continue_link(html)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_continue_names_the_next_section_not_completed(
    tmp_path: Path, web_client_factory: Any, lang: str
) -> None:
    client = web_client_factory(tmp_path)
    with ProgressStore.open(tmp_path) as store:
        store.mark_complete(0)
    link = _continue_link(client.get(f"/section/7?lang={lang}").text)
    assert (
        client.get(f"/continue?lang={lang}", follow_redirects=False).headers["location"]
        == f"/section/1?lang={lang}"
    )
    assert UI[lang]["continue_next"].format(n=1) in link, link
