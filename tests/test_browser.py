"""The web lesson in a real headless Chromium (Debian's ``chromium``, driven by Playwright).

The session's one browser (``tests/browser_support.py``), a uvicorn server in a thread on a free
loopback port, a temporary progress folder.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch
from store_support import serve_in_thread

from attnlab.core import example
from attnlab.core.pipeline import attention_stages, lesson_stages
from attnlab.text.fmt import num, vec

pytestmark = pytest.mark.browser
# Prompt A, row t=1, column j=0 of the explorer's weights table.
FIRST_WEIGHT = '[data-stage="weights"] table[data-prompt="0"] tbody tr:nth-child(2) td'
SHOTS = Path(os.environ.get("ATTNLAB_SCREENSHOTS", "/tmp"))


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    from attnlab.web.app import create_app

    with serve_in_thread(create_app(tmp_path_factory.mktemp("progress"), figures_on=False)) as url:
        yield url


@pytest.fixture
def page(browser, server):  # type: ignore[no-untyped-def]
    context = browser.new_context(viewport={"width": 1280, "height": 900}, base_url=server)
    pg = context.new_page()
    pg.set_default_timeout(20_000)  # the machine may be busy with other tests
    yield pg
    context.close()


def test_lesson_shows_the_pipelines_numbers(page) -> None:  # type: ignore[no-untyped-def]
    page.goto("/lesson")
    st = lesson_stages()
    rows = page.locator('table[data-table="uniform"] tbody tr')
    assert rows.nth(1).locator("td").nth(0).inner_text() == vec(st.weights[0, -1])
    assert rows.nth(2).locator("td").nth(0).inner_text() == vec(st.weights[1, -1])
    work = page.locator("#s-5 pre.work").inner_text()
    assert f"weights       = {vec(st.weights[1, -1])}" in work
    assert "本周进度：已完成 0 / 20 节" in page.locator("#week-progress").inner_text()
    page.screenshot(path=str(SHOTS / "attnlab-lesson.png"))


def test_explorer_updates_as_you_type(page) -> None:  # type: ignore[no-untyped-def]
    page.goto("/explorer")
    cell = (
        page.locator('[data-stage="weights"] table[data-prompt="0"] tbody tr')
        .nth(1)
        .locator("td")
        .first
    )
    assert cell.inner_text() == num(lesson_stages().weights[0, 1, 0])
    w_q = example.lesson_w_q()
    w_q[1, 0] = 3.0
    expected = num(
        attention_stages(
            example.lesson_x(), w_q, example.lesson_w_k(), example.lesson_w_v()
        ).weights[0, 1, 0]
    )
    page.fill('[data-cell="w_q[1][0]"]', "3")
    page.wait_for_function(
        f"t => document.querySelector('{FIRST_WEIGHT}').textContent === t", arg=expected
    )
    page.screenshot(path=str(SHOTS / "attnlab-explorer.png"), full_page=True)
    page.fill('[data-cell="x[0][1][2]"]', "abc")
    page.wait_for_selector('[data-cell="x[0][1][2]"].invalid')
    assert (
        "X（提示 A）第 2 行第 3 列：需要一个数" in page.locator("#explorer-error").inner_text()
    )  # the page's language, in the learner's words


def _cell_text(page, selector: str, expected: str) -> None:  # type: ignore[no-untyped-def]
    page.wait_for_function(
        "([s, t]) => { const c = document.querySelector(s); return c && c.textContent === t; }",
        arg=[selector, expected],
    )


def test_explorer_heads_labels_and_language_switch(page) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    from attnlab.core.pipeline import multi_head_stages
    from attnlab.web.explorer import preset_data

    page.goto("/explorer?n_head=2&lang=zh")
    data = preset_data("lesson", 2, 4, 2, 2, "zh")
    data["w_o"][0][0], data["w_q"][1][2] = 2.0, 3.0
    t = {k: torch.tensor(data[k], dtype=torch.float64) for k in ("x", "w_q", "w_k", "w_v", "w_o")}
    ref = multi_head_stages(t["x"], t["w_q"], t["w_k"], t["w_v"], 2, t["w_o"])
    page.fill('[data-cell="w_o[0][0]"]', "2")  # the W_O mix follows at once
    out = '[data-stage="projected"] table[data-prompt="0"] tbody tr:nth-child(1) td'
    _cell_text(page, out, num(ref.output[0, 0, 0]))
    page.fill('[data-cell="w_q[1][2]"]', "3")  # head 2's own heatmap changes
    head2 = f'[data-head="2"]{FIRST_WEIGHT}'
    _cell_text(page, head2, num(ref.weights[0, 1, 1, 0]))
    page.fill('[data-token="tok[0][1]"]', "<狗>")  # a label, escaped on every table
    expect(
        page.locator('[data-head="1"][data-stage="weights"] table[data-prompt="0"] tbody th').nth(1)
    ).to_have_text("t=1 <狗>")
    assert page.locator(".legend").first.inner_text().startswith("* 未来位置")
    page.screenshot(path=str(SHOTS / "attnlab-explorer-heads.png"), full_page=True)
    click_and_load(page, "#lang-switch")  # English, with every edit kept
    expect(page.locator('[data-cell="w_o[0][0]"]')).to_have_value("2")
    expect(page.locator('[data-token="tok[0][1]"]')).to_have_value("<狗>")
    expect(page.locator('#size-form select[name="n_head"]')).to_have_value("2")
    _cell_text(page, head2, num(ref.weights[0, 1, 1, 0]))
    assert page.locator(".legend").first.inner_text().startswith("* future position")


def click_and_load(page, selector: str) -> None:  # type: ignore[no-untyped-def]
    """Click a link or submit button and wait until the next page has loaded."""
    with page.expect_navigation():
        page.click(selector)


def test_check_complete_reload_and_switch_language(page) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    page.goto("/section/6")
    page.fill("#answer-6", "Both the weights and the values differ.")
    page.click("#check-6 .answer-form button")  # saved in place (see test_checks_stay_put)
    expect(page.locator("#check-6 .your-answer")).to_contain_text("Both the weights and the values")
    expect(page.locator("#check-6 .model")).to_be_visible()
    page.click("#check-6 .assess button:has-text('我懂了')")
    expect(page.locator("#check-6 .assess button").first).to_have_class(re.compile("chosen"))
    page.click("#check-6 button.mark")  # in place (tests/test_browser_forms.py)
    expect(page.locator("#check-6 button.done")).to_be_visible()
    page.reload()
    expect(page.locator("#check-6 button.done")).to_be_disabled()
    expect(page.locator("#week-progress")).to_contain_text("已完成 1 / 20 节")
    expect(page.locator("#check-6 .assess button").first).to_have_class(re.compile("chosen"))
    click_and_load(page, "#lang-switch")
    expect(page).to_have_url(re.compile(r"/section/6\?lang=en$"))
    expect(page.locator("#week-progress")).to_contain_text("Week progress: 1 of 20 sections")
    page.screenshot(path=str(SHOTS / "attnlab-section-en.png"), full_page=True)
    page.goto("/lesson?lang=en#s-9")  # on the whole lesson, the switch follows the section in view
    expect(page.locator("#lang-switch")).to_have_attribute("href", re.compile(r"#s-9$"))
    click_and_load(page, "#lang-switch")
    expect(page).to_have_url(re.compile(r"/lesson\?lang=zh#s-9$"))


def test_phone_width_has_no_sideways_page_scroll(browser, server) -> None:  # type: ignore[no-untyped-def]
    context = browser.new_context(viewport={"width": 390, "height": 844}, base_url=server)
    pg = context.new_page()
    pg.goto("/section/9")
    assert pg.evaluate("document.scrollingElement.scrollWidth") <= 390
    pg.screenshot(path=str(SHOTS / "attnlab-phone.png"), full_page=True)
    pg.goto("/explorer?n_head=2&lang=en")
    assert pg.evaluate("document.scrollingElement.scrollWidth") <= 390
    pg.screenshot(path=str(SHOTS / "attnlab-explorer-heads-phone.png"), full_page=True)
    context.close()


@pytest.mark.parametrize("name", ["script", "multihead"])
def test_copy_button_copies_exactly_the_tested_listing(browser, server, name: str) -> None:  # type: ignore[no-untyped-def]
    from attnlab.content.listings import SECTIONS, listing

    context = browser.new_context(
        base_url=server, permissions=["clipboard-read", "clipboard-write"]
    )
    pg = context.new_page()
    pg.goto(f"/section/{SECTIONS[name]}?lang=en")
    button = pg.locator(f'figure[data-listing="{name}"] button.copy')
    button.click()
    pg.wait_for_function("b => b.textContent === b.dataset.copied", arg=button.element_handle())
    assert pg.evaluate("navigator.clipboard.readText()") == listing(name, "en")
    context.close()


def test_checks_stay_put_on_the_lesson_page(page) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    from attnlab.content import knowledge
    from attnlab.text.fmt import answer

    ex = knowledge.section(9).exercises[0]
    right = answer(ex.expected, ex.decimals)
    page.goto("/lesson")
    page.locator(f"#exin-{ex.id}").scroll_into_view_if_needed()
    page.fill(f"#exin-{ex.id}", right)
    y = page.evaluate("window.scrollY")
    page.click(f"#ex-{ex.id} button")
    expect(page.locator(f"#ex-{ex.id} .verdict.ok")).to_be_visible()
    assert page.url.endswith("/lesson"), page.url  # no jump to /section/9
    assert abs(page.evaluate("window.scrollY") - y) <= 2
    page.fill("#answer-3", "the mean of the rows")
    page.click("#check-3 .answer-form button")
    expect(page.locator("#check-3 .your-answer")).to_contain_text("the mean of the rows")
    assert page.url.endswith("/lesson"), page.url
    page.click("#check-3 details.revise summary")  # the saved answer, ready to edit
    expect(page.locator("#answer-3")).to_have_value("the mean of the rows")
    page.fill("#answer-3", "each row's mean")
    page.click("#check-3 details.revise button")
    expect(page.locator("#check-3 .your-answer")).to_contain_text("each row's mean")
    page.reload()  # saved: the lesson page shows both again
    expect(page.locator(f"#exin-{ex.id}")).to_have_value(right)
    expect(page.locator(f"#ex-{ex.id} .verdict.ok")).to_be_visible()
    expect(page.locator("#check-3 .your-answer")).to_contain_text("each row's mean")
