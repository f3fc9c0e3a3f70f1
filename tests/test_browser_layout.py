"""Page layout in a real Chromium (fixtures of ``test_browser``): a learner's long word or URL
wraps inside its note box instead of widening the page, on a desktop and on a phone."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from store_support import serve_in_thread

from attnlab.progress.store import ProgressStore

pytestmark = pytest.mark.browser
SIZES = {"desktop": {"width": 1280, "height": 900}, "phone": {"width": 390, "height": 844}}
LONG_WORD = "supercalifragilistic" * 4  # 80 letters: a search may ask for it
LONG_URL = "https://example.org/" + "attention/" * 20 + "?q=" + "x" * 80


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A server whose learner wrote two notes on §4, each one unbreakable run of letters."""
    from attnlab.web.app import create_app

    data = tmp_path_factory.mktemp("progress")
    with ProgressStore.open(data) as store:
        store.add_note(4, f"see {LONG_URL}")
        store.add_note(4, LONG_WORD)
    with serve_in_thread(create_app(data, figures_on=False)) as url:
        yield url


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize(
    "path", ["/notes?lang=en", "/section/4?lang=en", f"/search?lang=en&q={LONG_WORD}"]
)
def test_long_words_in_notes_wrap(browser, server, size: str, path: str) -> None:  # type: ignore[no-untyped-def]
    context = browser.new_context(viewport=SIZES[size], base_url=server)
    page = context.new_page()
    page.set_default_timeout(20_000)
    try:
        page.goto(path)
        assert page.locator(f"text={LONG_WORD[:40]}").count() >= 1, "the note is not shown"
        wide, view = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
        assert wide <= view, f"{path} is {wide} px wide in a {view} px window"
    finally:
        context.close()


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("touch", [False, True], ids=["mouse", "touch"])
def test_scroll_hint_says_scroll_to_a_mouse_and_swipe_to_a_finger(  # type: ignore[no-untyped-def]
    browser,
    server,
    lang: str,
    touch: bool,
) -> None:
    from attnlab.web.ui_text import UI

    context = browser.new_context(
        viewport=SIZES["phone"], base_url=server, has_touch=touch, is_mobile=touch
    )
    page = context.new_page()
    page.set_default_timeout(20_000)
    try:
        page.goto(f"/lesson?lang={lang}")
        assert page.evaluate("matchMedia('(pointer: coarse)').matches") is touch
        page.wait_for_selector(".overflows", state="attached")
        shown = page.evaluate(
            "getComputedStyle(document.querySelector('.overflows'), '::after').content"
        )
        want = UI[lang]["swipe_hint" if touch else "scroll_hint"]
        assert shown == f'"{want}"', shown
        swiping = "滑动" in shown or "swipe" in shown
        assert swiping is touch, f"{shown} to a {'finger' if touch else 'mouse'}"
    finally:
        context.close()
