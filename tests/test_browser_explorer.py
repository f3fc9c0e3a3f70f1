"""The explorer in a real Chromium (fixtures of ``test_browser``): a cell that cannot be read is
caught by the page itself (no request, nothing in the console), its error sits under its grid,
and the last results stay, marked stale; the n_head menu follows the C chosen."""

from __future__ import annotations

import pytest
from test_browser import server  # noqa: F401 (fixtures)

pytestmark = pytest.mark.browser


@pytest.fixture
def page(browser, server):  # type: ignore[no-untyped-def]  # noqa: F811
    context = browser.new_context(viewport={"width": 1280, "height": 900}, base_url=server)
    pg = context.new_page()
    pg.set_default_timeout(20_000)
    yield pg
    context.close()


def test_an_unreadable_cell_sends_nothing_and_keeps_the_results(page) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    posts: list[str] = []
    console: list[str] = []
    page.on("request", lambda r: posts.append(r.url) if "/api/explorer" in r.url else None)
    page.on("console", lambda m: console.append(m.text) if m.type in ("error", "warning") else None)
    page.goto("/explorer?lang=en")
    weights = page.locator('[data-stage="weights"]').first
    expect(weights).to_be_visible()
    page.fill('[data-cell="w_q[1][0]"]', "")
    error = page.locator("#explorer-error")
    expect(error).to_have_text("W_Q row 2, column 1: a number is needed, this cell is empty")
    inside = "e => !!e.closest('.grid-block').querySelector('table[data-matrix=\"w_q\"]')"
    assert error.evaluate(inside), "the error is not under W_Q"
    expect(page.locator('[data-cell="w_q[1][0]"]')).to_have_attribute("aria-invalid", "true")
    expect(page.locator("#stages")).to_have_class("stages stale")
    expect(page.locator("#stale-note")).to_be_visible()
    expect(weights).to_be_visible()  # the last good results stay
    page.fill('[data-cell="w_q[1][0]"]', "1e999")
    expect(error).to_contain_text("W_Q row 2, column 1: a finite number is needed")
    page.wait_for_timeout(400)  # past the page's pause before it posts
    assert posts == [], posts
    page.fill('[data-cell="w_q[1][0]"]', "3")
    expect(page.locator("#stages")).to_have_class("stages")
    expect(error).to_be_hidden()
    expect(page.locator("#stale-note")).to_be_hidden()
    assert len(posts) == 1 and console == [], (posts, console)


def test_n_head_menu_follows_c(page) -> None:  # type: ignore[no-untyped-def]
    page.goto("/explorer?lang=en&C=4&n_head=2")
    page.select_option('#size-form select[name="C"]', "3")
    offered = page.eval_on_selector_all(
        '#size-form select[name="n_head"] option',
        "os => os.filter(o => !o.disabled).map(o => +o.value)",
    )
    assert offered == [1, 3], offered
    assert page.locator('#size-form select[name="n_head"]').input_value() == "1"
