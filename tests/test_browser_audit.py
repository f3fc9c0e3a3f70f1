""" "Check my code" in a real Chromium: a correct and a buggy class pasted into section 13's box
and submitted (the second on a phone, where the report scrolls inside its own box), and a
server started with the check off, whose box is disabled with the reason."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from store_support import serve_in_thread
from test_browser import SHOTS

from attnlab.web.ui_text import UI

pytestmark = pytest.mark.browser
PHONE = {"width": 390, "height": 844}
ZOO = Path(__file__).parent / "zoo"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    from attnlab.web.app import create_app

    app = create_app(tmp_path_factory.mktemp("progress"), figures_on=False)
    with serve_in_thread(app) as url:
        yield url


@pytest.fixture(scope="module")
def server_off(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    from attnlab.web.app import create_app

    app = create_app(tmp_path_factory.mktemp("progress"), figures_on=False, audit_off="shared")
    with serve_in_thread(app) as url:
        yield url


def _open(browser, base: str, viewport: dict[str, int] | None = None):  # type: ignore[no-untyped-def]
    context = browser.new_context(
        viewport=viewport or {"width": 1280, "height": 900}, base_url=base
    )
    page = context.new_page()
    page.set_default_timeout(60_000)  # a real audit on a busy machine
    return context, page


def _submit(page, code: str, name: str, kind: str = "auto") -> str:  # type: ignore[no-untyped-def]
    page.fill("#audit-code-13", code)
    page.fill("#audit-name-13", name)
    page.select_option("#audit-kind-13", kind)
    with page.expect_navigation():
        page.click("#audit-form-13 button[type=submit]")
    return str(page.text_content("#audit-report-13"))


def test_a_correct_and_a_buggy_class_get_their_reports(browser, server) -> None:  # type: ignore[no-untyped-def]
    context, page = _open(browser, server)
    try:
        page.goto("/section/13?lang=en")
        good = (ZOO / "good" / "lesson_head.py").read_text(encoding="utf-8")
        text = _submit(page, good, "AttentionHead")
        assert "result: 0 FAIL" in text
        status = page.locator('#audit-13 [role="status"]')
        assert status.inner_text().strip() == UI["en"]["audit_pass"]
        assert page.input_value("#audit-name-13") == "AttentionHead"
    finally:
        context.close()
    context, page = _open(browser, server, PHONE)
    try:
        page.goto("/section/13?lang=zh")
        buggy = (ZOO / "bad" / "no_scale_loop.py").read_text(encoding="utf-8")
        text = _submit(page, buggy, "LoopMHA", "multihead")
        assert re.search(r"^ 4\. .*未通过", text, re.M), text
        status = page.locator('#audit-13 [role="status"]')
        assert status.inner_text().strip() == UI["zh"]["audit_fail"]
        page.screenshot(path=str(SHOTS / "audit_phone_zh.png"))  # lands on the verdict
        widths = page.evaluate(
            """() => {
              const pre = document.querySelector('#audit-report-13');
              return {page: document.documentElement.scrollWidth,
                      view: document.documentElement.clientWidth,
                      pre: pre.scrollWidth, box: pre.clientWidth,
                      right: pre.getBoundingClientRect().right,
                      overflow: getComputedStyle(pre).overflowX};
            }"""
        )
        assert widths["page"] <= widths["view"], widths  # no sideways page scroll
        assert widths["pre"] > widths["box"] and widths["overflow"] == "auto", widths
        assert widths["right"] <= widths["view"] + 0.5, widths
    finally:
        context.close()


def test_with_the_check_off_the_box_is_disabled_with_the_reason(browser, server_off) -> None:  # type: ignore[no-untyped-def]
    context, page = _open(browser, server_off)
    try:
        page.goto("/section/13?lang=en")
        assert page.text_content("#audit-off-13") == UI["en"]["audit_off_shared"]
        for field in ("code", "file", "name", "kind", "init"):
            assert page.is_disabled(f"#audit-{field}-13"), field
        assert page.is_disabled("#audit-form-13 button[type=submit]")
        assert page.locator("#audit-report-13").count() == 0
    finally:
        context.close()
