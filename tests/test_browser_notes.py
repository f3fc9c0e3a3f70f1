"""Notes and search in a real Chromium: the note box saves as you type and when the tab closes,
Ctrl+K reaches the search box, and a hit opens its section with the words marked. Screenshots of
the note box, My notes and search, on a desktop (1280×800) and a phone (390×844)."""

from __future__ import annotations

import pytest
from test_browser import SHOTS, click_and_load, server  # noqa: F401 (fixtures)

pytestmark = pytest.mark.browser
SIZES = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}


@pytest.fixture
def page(browser, server):  # type: ignore[no-untyped-def]  # noqa: F811
    context = browser.new_context(viewport=SIZES["desktop"], base_url=server)
    pg = context.new_page()
    pg.set_default_timeout(20_000)
    yield pg
    context.close()


def test_note_autosaves_and_survives_a_closed_tab(page) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    page.goto("/section/6?lang=en")
    page.fill("#note-6", "weights times values: a mix of the rows of V")
    expect(page.locator("#notes-6 .note-status")).to_have_text("Saved")
    page.reload()
    expect(page.locator("#note-6")).to_have_value("weights times values: a mix of the rows of V")
    other = page.context.new_page()
    other.goto("/section/9?lang=en")
    other.locator("#note-9").press_sequentially("axes: B, T, C")
    other.close(run_before_unload=True)  # before the autosave's pause: pagehide must save it
    # The keepalive request may land after /notes was read: reload until it shows (bounded).
    for _ in range(20):
        page.goto("/notes?lang=en")
        if page.locator("#notes-9 .note-item").count():
            break
        page.wait_for_timeout(500)
    expect(page.locator("#notes-9 .note-item")).to_contain_text("axes: B, T, C")


def test_ctrl_k_searches_and_the_hit_is_marked(page) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    page.goto("/lesson?lang=zh")
    page.keyboard.press("Control+k")
    expect(page.locator("#search-box")).to_be_focused()
    page.keyboard.type("缩放")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    first = page.locator("li.hit").first
    expect(first.locator("a")).to_contain_text("8.")
    click_and_load(page, "li.hit >> nth=0 >> a")
    expect(page.locator("mark#hit")).to_have_text("缩放")
    assert page.url.endswith("#hit")


@pytest.mark.parametrize("size", SIZES)
def test_screenshots_of_notes_and_search(browser, server, size: str) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    from playwright.sync_api import expect

    context = browser.new_context(viewport=SIZES[size], base_url=server)
    pg = context.new_page()
    pg.set_default_timeout(20_000)
    pg.goto("/section/5?lang=en")  # English: this machine's Chromium may have no CJK font
    pg.fill("#note-5", "Each row sums to 1: the softmax runs along the last axis (dim=-1).")
    expect(pg.locator("#notes-5 .note-status")).to_have_text("Saved")
    if pg.locator("#s-5 .bookmark-toggle").get_attribute("aria-pressed") == "false":
        pg.click("#s-5 .bookmark-toggle")  # in place; the other size may have set it already
        expect(pg.locator("#s-5 .bookmark-toggle")).to_have_attribute("aria-pressed", "true")
    pg.evaluate("window.scrollTo(0, 0)")
    pg.screenshot(path=str(SHOTS / f"attnlab-bookmark-{size}.png"))
    pg.locator("#notes-5").scroll_into_view_if_needed()
    pg.screenshot(path=str(SHOTS / f"attnlab-notes-box-{size}.png"))
    pg.goto("/notes?lang=en")
    expect(pg.locator(".bookmark-list")).to_contain_text("5.")
    pg.screenshot(path=str(SHOTS / f"attnlab-my-notes-{size}.png"))
    pg.goto("/search?lang=en&q=softmax")
    expect(pg.locator("li.hit").first).to_be_visible()
    pg.screenshot(path=str(SHOTS / f"attnlab-search-{size}.png"))
    pg.goto("/section/5?lang=en&q=softmax#hit")
    pg.screenshot(path=str(SHOTS / f"attnlab-search-hit-{size}.png"))
    width = pg.evaluate("document.documentElement.scrollWidth")
    assert width <= SIZES[size]["width"], f"the page scrolls sideways: {width}px"
    context.close()
