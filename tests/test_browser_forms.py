"""Every form keeps the learner's place, in a real headless Chromium: "Mark section complete",
bookmarks, the note's Save button and the practice forms post in place; the focus lands on
what changed and the page's live region (#announce) reads out the same words; an answer of only
spaces is refused next to its input after one request; a lost session cookie keeps the typed
answer, with JavaScript (a fresh token, press again) and without (the form offered again).
The check's answer, exercise and self-assessment are tests/test_browser_focus.py's."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from test_browser import server  # noqa: F401 (fixtures)

from attnlab.content import knowledge
from attnlab.grading import practice
from attnlab.text.fmt import answer
from attnlab.web.ui_text import UI

pytestmark = pytest.mark.browser
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}
EXERCISES = [s for s in knowledge.sections() if s.exercises]


def _wrong(ex: Any) -> str:
    """An answer to exercise ``ex`` off by one in each number (a wrong answer, not a hint)."""
    values = ex.expected if isinstance(ex.expected, list) else [ex.expected]
    return answer([v + 1 for v in values], ex.decimals)


def _context(browser: Any, server: str, size: dict[str, int], js: bool = True) -> Any:  # noqa: F811
    context = browser.new_context(viewport=size, base_url=server, java_script_enabled=js)
    context.set_default_timeout(20_000)  # the machine may be busy with other tests
    return context


@pytest.fixture(params=["desktop", "phone"])
def page(request, browser, server) -> Iterator[Any]:  # type: ignore[no-untyped-def]  # noqa: F811
    context = _context(browser, server, DESKTOP if request.param == "desktop" else PHONE)
    yield _watched(context.new_page())
    context.close()


def _watched(page: Any) -> Any:
    """``page`` counting its loads (``window`` survives only an in-place change) and its POSTs."""
    page.posts = []
    page.on("request", lambda r: page.posts.append(r.url) if r.method == "POST" else None)
    return page


def _stayed(page: Any) -> None:
    page.evaluate("window.stayed = true")


def _still_here(page: Any) -> bool:
    return bool(page.evaluate("window.stayed === true"))


def _announced(page: Any) -> str:
    page.wait_for_function("() => document.getElementById('announce').textContent !== ''")
    return " ".join(str(page.locator("#announce").text_content()).split())


def _text(locator: Any) -> str:
    return " ".join(locator.inner_text().split())


def _lang(page: Any) -> str:
    return "en" if page.evaluate("document.documentElement.lang") == "en" else "zh"


@pytest.mark.parametrize("where", ["lesson", "section"])
def test_mark_complete_stays_in_place(page, where: str) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    sid = {"lesson": 14, "section": 16}[where] + (page.viewport_size["width"] < 500)
    page.goto(f"/lesson#complete-{sid}" if where == "lesson" else f"/section/{sid}#complete-{sid}")
    bar = page.locator("header .progress")
    before = int(bar.get_attribute("aria-valuenow"))
    _stayed(page)
    navigated: list[str] = []
    page.on("framenavigated", lambda frame: navigated.append(frame.url))
    button = page.locator(f"#complete-{sid} button.mark")
    button.scroll_into_view_if_needed()
    y = page.evaluate("window.scrollY")
    button.click()
    done = page.locator(f"#complete-{sid} button.done")
    expect(done).to_be_focused()
    expect(bar).to_have_attribute("aria-valuenow", str(before + 1))
    assert _announced(page).startswith(_text(done))
    assert _text(page.locator("#week-progress")) in _announced(page)
    assert _still_here(page) and navigated == [], navigated  # no page load
    assert abs(page.evaluate("window.scrollY") - y) <= 4
    article = page.locator(f"article[data-section='{sid}']")
    expect(article).to_have_class(re.compile("is-done"))
    expect(article.locator(".section-head .badge")).to_be_visible()
    if where == "lesson":
        expect(page.locator(f".toc a[href='#s-{sid}']").locator("..")).to_have_class("done")
    page.keyboard.press("Enter")  # on the completed button: nothing is posted again
    page.wait_for_timeout(300)
    assert len(page.posts) == 1, page.posts


def test_a_bookmark_toggles_in_place(page) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    sid = 3 + (page.viewport_size["width"] < 500)
    page.goto(f"/section/{sid}?lang=en")
    _stayed(page)
    button = page.locator(f"#bookmark-{sid} button")
    button.click()
    expect(button).to_have_attribute("aria-pressed", "true")
    expect(button).to_be_focused()
    assert _announced(page) == _text(button) == f"★ {UI['en']['bookmarked']}"
    button.click()
    expect(button).to_have_attribute("aria-pressed", "false")
    expect(button).to_have_text(f"☆ {UI['en']['bookmark']}")
    assert _still_here(page)
    page.reload()  # the server's state, not the button's
    expect(page.locator(f"#bookmark-{sid} button")).to_have_attribute("aria-pressed", "false")


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_note_save_button_saves_in_place(browser, server, lang: str) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    from playwright.sync_api import expect

    context = _context(browser, server, DESKTOP)
    page = _watched(context.new_page())
    sid = {"zh": 7, "en": 8}[lang]
    page.goto(f"/section/{sid}?lang={lang}")
    _stayed(page)
    box = page.locator(f"#note-{sid}")
    box.fill("a note I mean to keep")
    page.locator(f"#notes-{sid} button[type=submit]").click()
    expect(box).to_be_focused()
    status = page.locator(f"#notes-{sid} .note-status")
    expect(status).to_have_text(UI[lang]["note_saved"])
    assert _announced(page) == UI[lang]["note_saved"]
    box.fill("")  # an emptied note is deleted
    page.evaluate("document.getElementById('announce').textContent = ''")
    page.locator(f"#notes-{sid} button[type=submit]").click()
    assert _announced(page) == UI[lang]["note_deleted"] == _text(status)
    expect(box).to_be_focused()
    assert _still_here(page)
    page.goto(f"/notes?lang={lang}")
    expect(page.locator(f"#notes-{sid}")).to_have_count(0)
    context.close()


def test_practice_answers_solution_and_new_numbers_in_place(page) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    page.goto("/practice/5?lang=en&seed=7")
    _stayed(page)
    dealt = practice.deal(5, 7)
    page.fill("#practice-answer", answer(dealt.expected(), dealt.decimals))
    page.click("#verdict button")
    verdict = page.locator("#verdict .verdict")
    expect(verdict).to_be_focused()
    assert _announced(page) == _text(verdict)
    page.evaluate("document.getElementById('announce').textContent = ''")
    page.click("#solution button")
    solution = page.locator(".practice-solution")
    expect(solution).to_be_focused()
    assert _announced(page) == _text(solution)
    page.evaluate("document.getElementById('announce').textContent = ''")
    page.click("a.practice-new")
    expect(page).not_to_have_url(re.compile(r"seed=7\b"))
    text = page.locator(".practice-text")
    expect(text).to_be_focused()
    assert _announced(page) == _text(text)
    assert _still_here(page)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_spaces_are_refused_by_the_input_after_one_post(browser, server, lang: str) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    from playwright.sync_api import expect

    context = _context(browser, server, PHONE if lang == "en" else DESKTOP)
    page = _watched(context.new_page())
    ex = EXERCISES[1].exercises[0]
    page.goto(f"/section/{ex.section}?lang={lang}")
    _stayed(page)
    field = page.locator(f"#exin-{ex.id}")
    field.fill("   ")
    field.press("Enter")
    line = page.locator(f"#ex-{ex.id} .form-error")
    expect(line).to_be_visible()
    assert _text(line).startswith(UI[lang]["field_answer"])
    expect(field).to_be_focused()
    expect(field).to_have_attribute("aria-invalid", "true")
    assert _announced(page) == _text(line)
    page.wait_for_timeout(500)
    assert len(page.posts) == 1, page.posts  # posted once, never again as a plain form
    assert _still_here(page)
    context.close()


def test_a_lost_session_keeps_the_typed_answer_with_javascript(browser, server) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    from playwright.sync_api import expect

    context = _context(browser, server, DESKTOP)
    page = _watched(context.new_page())
    ex = EXERCISES[2].exercises[0]
    typed = _wrong(ex)
    page.goto(f"/section/{ex.section}?lang=en")
    _stayed(page)
    field = page.locator(f"#exin-{ex.id}")
    field.fill(typed)
    context.clear_cookies()  # the learner cleared the cookies, or they expired
    field.press("Enter")
    line = page.locator(f"#ex-{ex.id} .form-error")
    expect(line).to_have_text(UI["en"]["session_lost_js"])
    expect(field).to_have_value(typed)
    expect(field).to_be_focused()
    field.press("Enter")  # press again: sent with the fresh token
    expect(page.locator(f"#ex-{ex.id} .verdict")).to_be_visible()
    expect(page.locator(f"#ex-{ex.id} .form-error")).to_have_count(0)
    assert len(page.posts) == 2 and _still_here(page)
    context.close()


def test_a_lost_session_keeps_the_typed_answer_without_javascript(browser, server) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    from playwright.sync_api import expect

    context = _context(browser, server, PHONE, js=False)
    page = context.new_page()
    ex = EXERCISES[3].exercises[0]
    typed = _wrong(ex)
    page.goto(f"/lesson?lang=zh#ex-{ex.id}")
    page.fill(f"#exin-{ex.id}", typed)
    context.clear_cookies()
    with page.expect_navigation():
        page.press(f"#exin-{ex.id}", "Enter")
    expect(page.locator("#error-message")).to_have_text(UI["zh"]["session_lost"])
    expect(page.locator("header .top-nav")).to_be_visible()
    expect(page.locator("#again-answer")).to_have_value(typed)
    with page.expect_navigation():
        page.click("#form-again button")
    assert page.url.endswith(f"/lesson?lang=zh#ex-{ex.id}"), page.url
    expect(page.locator(f"#ex-{ex.id} .verdict")).to_be_visible()
    context.close()


@pytest.mark.parametrize("status", ["understood", "review"])
def test_a_self_assessment_is_announced(browser, server, status: str) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    from playwright.sync_api import expect

    context = _context(browser, server, PHONE)
    page = _watched(context.new_page())
    sid = {"understood": 10, "review": 12}[status]
    page.goto(f"/section/{sid}?lang=zh")
    page.fill(f"#answer-{sid}", "my own words")
    page.click(f"#check-{sid} .answer-form button")
    _stayed(page)
    page.evaluate("document.getElementById('announce').textContent = ''")
    page.click(f"#assess-{sid} button:has-text('{UI['zh'][status]}')")
    chosen = page.locator(f"#assess-{sid} button.chosen")
    expect(chosen).to_be_focused()
    assert _announced(page) == _text(chosen) == UI["zh"][status]
    assert _still_here(page)
    context.close()


@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_my_notes_edits_and_deletes_in_place(browser, server, size: str) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    from playwright.sync_api import expect

    context = _context(browser, server, DESKTOP if size == "desktop" else PHONE)
    page = _watched(context.new_page())
    sid = {"desktop": 2, "phone": 3}[size]
    page.goto(f"/section/{sid}?lang=en")
    page.fill(f"#note-{sid}", f"a note on section {sid}")
    page.locator(f"#notes-{sid} button[type=submit]").click()
    expect(page.locator(f"#notes-{sid} .note-status")).to_have_text(UI["en"]["note_saved"])
    page.goto("/notes?lang=en")
    _stayed(page)
    group = page.locator(f"#notes-{sid}")
    group.locator("summary").click()
    box = group.locator("textarea")
    box.fill(f"an edited note on section {sid}")
    group.locator(".note-form button[type=submit]").click()
    expect(box).to_be_focused()
    assert _announced(page) == UI["en"]["note_saved"]
    expect(group.locator(".note-item .note-text")).to_have_text(f"an edited note on section {sid}")
    page.evaluate("document.getElementById('announce').textContent = ''")
    group.locator(".note-delete button").click()
    expect(page.locator(f"#notes-{sid}")).to_have_count(0)  # its only note: the group goes
    expect(page.locator("#notes")).to_be_focused()
    assert _announced(page) == UI["en"]["note_deleted"]
    assert _still_here(page)
    page.reload()
    expect(page.locator(f"#notes-{sid}")).to_have_count(0)
    context.close()


@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_the_new_form_states_pass_axe(browser, server, size: str) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    """The refusal line by an input, "My notes" with a note open for editing, and the error
    page offering the form again: 0 critical and 0 serious axe violations."""
    from test_browser_axe import RUN, TAGS, _axe, blocking

    script = _axe()
    viewport = DESKTOP if size == "desktop" else PHONE
    context = browser.new_context(viewport=viewport, base_url=server, bypass_csp=True)
    page = context.new_page()
    page.set_default_timeout(60_000)
    problems: dict[str, list[str]] = {}

    def check(name: str) -> None:
        page.add_script_tag(path=str(script))
        results = page.evaluate(RUN, TAGS)
        assert results["passes"], f"axe ran no rule on {name}"
        if found := blocking(results):
            problems[name] = found

    ex = EXERCISES[4].exercises[0]
    page.goto(f"/section/{ex.section}?lang=zh")
    page.fill(f"#exin-{ex.id}", "  ")
    page.press(f"#exin-{ex.id}", "Enter")
    page.wait_for_selector(f"#ex-{ex.id} .form-error")
    page.fill(f"#note-{ex.section}", "a note for the list")
    page.locator(f"#notes-{ex.section} button[type=submit]").click()
    page.wait_for_selector(f"#notes-{ex.section} .note-status:has-text('已保存')")
    check("refusal line")
    page.goto("/notes?lang=zh")
    page.locator(f"#notes-{ex.section} summary").click()
    check("my notes")
    page.goto(f"/section/{ex.section}?lang=zh")
    page.fill(f"#exin-{ex.id}", "1")
    context.clear_cookies()
    with page.expect_navigation():  # the plain post, as without JavaScript
        page.evaluate(f"document.getElementById('ex-{ex.id}').submit()")
    page.wait_for_selector("#form-again")
    check("the form offered again")
    context.close()
    assert not problems, problems
