"""Keyboard and screen-reader use of the checks in a real headless Chromium: after an answer is
posted in place the focus lands on what it changed (the verdict, the saved answer, the chosen
button; the input again when the verdict asks for another answer) and the page's live region
reads it out. The explorer's size menus do not reload the page while the arrow keys move."""

from __future__ import annotations

import pytest
from test_browser import page, server  # noqa: F401 (fixtures)

from attnlab.content import knowledge
from attnlab.text.fmt import answer

pytestmark = pytest.mark.browser
#: A section with graded exercises and its first exercise.
SECTION = next(s for s in knowledge.sections() if s.exercises)
EXERCISE = SECTION.exercises[0]
#: As many numbers as asked for, each off by one: a wrong answer, not a request for another.
WRONG = answer([v + 1 for v in EXERCISE.expected], EXERCISE.decimals)
FOCUSED = "() => { const a = document.activeElement; return [a.tagName, a.className, a.id]; }"


def _announced(page) -> str:  # type: ignore[no-untyped-def]  # noqa: F811
    page.wait_for_function("() => document.getElementById('announce').textContent !== ''")
    return str(page.locator("#announce").text_content())


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_an_exercise_verdict_takes_the_focus_and_is_announced(page, lang: str) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    from playwright.sync_api import expect

    page.goto(f"/section/{SECTION.id}?lang={lang}")
    assert page.locator("#announce").get_attribute("aria-live") == "polite"
    page.fill(f"#exin-{EXERCISE.id}", WRONG)
    page.press(f"#exin-{EXERCISE.id}", "Enter")
    verdict = page.locator(f"#ex-{EXERCISE.id} .verdict.bad")
    expect(verdict).to_be_focused()
    assert " ".join(_announced(page).split()) == " ".join(verdict.inner_text().split())
    page.keyboard.press("Tab")  # the next stop follows the verdict, not the page's top
    assert page.evaluate("window.scrollY") > 0
    assert page.evaluate("document.activeElement !== document.body")


def test_a_verdict_asking_again_returns_the_focus_to_the_input(page) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    from playwright.sync_api import expect

    page.goto(f"/section/{SECTION.id}?lang=en")
    page.fill(f"#exin-{EXERCISE.id}", "12345")  # one number where several are asked for
    page.click(f"#ex-{EXERCISE.id} button")
    verdict = page.locator(f"#ex-{EXERCISE.id} .verdict.hint")
    expect(verdict).to_be_visible()
    expect(page.locator(f"#exin-{EXERCISE.id}")).to_be_focused()
    assert " ".join(_announced(page).split()) == " ".join(verdict.inner_text().split())


def test_a_saved_answer_and_a_self_assessment_take_the_focus(page) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    from playwright.sync_api import expect

    page.goto(f"/section/{SECTION.id}?lang=en")
    page.fill(f"#answer-{SECTION.id}", "my answer in my words")
    page.click(f"#check-{SECTION.id} .answer-form button")
    mine = page.locator(f"#check-{SECTION.id} .your-answer")
    expect(mine).to_be_focused()
    assert "my answer in my words" in _announced(page)
    page.click(f"#check-{SECTION.id} .assess button >> nth=0")
    expect(page.locator(f"#check-{SECTION.id} .assess button.chosen")).to_be_focused()


def test_the_size_menus_wait_for_the_resize_button(page) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    from playwright.sync_api import expect

    page.goto("/explorer?lang=en")
    page.evaluate("window.stayed = true")
    page.select_option('#size-form select[name="T"]', "2")  # as an arrow key would
    page.wait_for_timeout(500)
    assert page.evaluate("window.stayed === true")  # no reload
    with page.expect_navigation():
        page.click("#size-form button[type=submit]")
    expect(page.locator('#size-form select[name="T"]')).to_have_value("2")


@pytest.mark.parametrize(("given", "read"), [("zh", "en"), ("en", "zh")])
def test_a_verdict_given_in_one_language_reads_in_the_other(page, given: str, read: str) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    import re

    from playwright.sync_api import expect

    cjk = re.compile(r"[\u4e00-\u9fff]")
    page.goto(f"/section/{SECTION.id}?lang={given}")
    page.fill(f"#exin-{EXERCISE.id}", WRONG)
    page.press(f"#exin-{EXERCISE.id}", "Enter")
    verdict = page.locator(f"#ex-{EXERCISE.id} .verdict.bad")
    expect(verdict).to_be_focused()
    first = verdict.inner_text()
    assert bool(cjk.search(first)) == (given == "zh"), first
    page.click("#lang-switch")  # the same saved verdict, worded again in the other language
    page.wait_for_url(re.compile(rf"lang={read}"))
    again = page.locator(f"#ex-{EXERCISE.id} .verdict.bad").inner_text()
    assert again != first and again.split()[0] == first.split()[0]  # the same mark (✗)
    reason = again.split("·", 1)[-1]
    assert bool(cjk.search(reason)) == (read == "zh"), again
