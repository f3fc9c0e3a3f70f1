"""The teacher's report page in a real headless Chromium: the key typed into the form opens it,
axe-core finds no critical or serious violation (desktop and phone, both languages), and on a
phone nothing scrolls the page sideways. The other class pages a visitor meets (a used or unknown
invitation link, a wrong teacher key, a class-only server without a session) pass axe too. A
class used as learners and a teacher use it (join, answer, Mark complete, the report) works on
SQLite and on PostgreSQL.
Skipped loudly without Chromium or axe-core, unless ATTNLAB_REQUIRE_BROWSER=1."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from class_support import EXERCISE, make_class, no_scale_answer
from store_support import serve_in_thread
from test_browser_axe import RUN, SIZES, TAGS, _axe, blocking
from test_phone import LAYOUT_REPORT, SCROLLERS, SLACK

from attnlab.grading import answers, practice
from attnlab.progress.store import ProgressStore
from attnlab.web.ui_text import UI

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def teacher_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """A server whose class has three learners, two of them with a wrong answer and two with
    practice (one mastered); and the key."""
    from attnlab.web.app import create_app

    home = tmp_path_factory.mktemp("class")
    _, key, _ = make_class(home, ["Ada Lovelace", "张三", "Bo"])
    wrong = answers.submit(EXERCISE, no_scale_answer())
    for n, profile in enumerate(("c1-1", "c1-2", "c1-3")):
        with ProgressStore.open(home, profile) as store:
            store.mark_complete(n)
            if n < 2:
                store.record_attempt(EXERCISE, wrong.text, False, json.dumps(wrong.data()))
            for seed in range(1, 4 - 2 * n):  # practice: Ada masters section 5, 张三 tries once
                dealt = practice.deal(5, seed)
                typed = practice.answer_text(dealt.expected()) if n == 0 else "9 9 9"
                verdict = dealt.grade(typed)
                data = json.dumps(practice.attempt_data(dealt, verdict))
                store.record_attempt(practice.attempt_id(5), typed, verdict.correct, data)
    with serve_in_thread(create_app(home, figures_on=False)) as url:
        yield url, key


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_report_page_is_accessible_and_fits(  # type: ignore[no-untyped-def]
    browser,
    teacher_server: tuple[str, str],
    lang: str,
    size: str,
) -> None:
    script = _axe()
    url, key = teacher_server
    context = browser.new_context(viewport=SIZES[size], base_url=url, bypass_csp=True)
    page = context.new_page()
    page.set_default_timeout(60_000)
    try:
        page.goto(f"/teacher?lang={lang}")
        page.fill("#teacher-key", key)
        page.click("form.teacher-key button")
        page.wait_for_selector("#by-learner")
        assert page.locator("[data-mistake=no_scale]").count() == 1
        assert page.locator("#practice-5").count() == 1, "the practice block is checked too"
        assert page.locator(".teacher-mastered").count() == 1
        page.add_script_tag(path=str(script))
        results = page.evaluate(RUN, TAGS)
        layout = page.evaluate(LAYOUT_REPORT, {"SCROLLERS": list(SCROLLERS), "SLACK": SLACK,
                               "HINTS": {"zh-CN": UI["zh"]["scroll_hint"],
                                         "en": UI["en"]["scroll_hint"]}})  # fmt: skip
    finally:
        context.close()
    assert results["passes"], "axe ran its rules"
    assert not blocking(results), blocking(results)
    if size == "phone":
        assert not layout["problems"], layout["problems"]


#: One learner per (language, size) of the accessibility tests: each uses up its own link.
JOINERS = [f"{lang}-{size}" for lang in ("zh", "en") for size in SIZES]


@pytest.fixture(scope="module")
def class_only_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, list]]:
    """A class-only server and one invitation link per name of :data:`JOINERS`."""
    from attnlab.web.app import create_app

    home = tmp_path_factory.mktemp("class-only")
    _, _, links = make_class(home, JOINERS)
    app = create_app(home, figures_on=False, class_only=True)
    with serve_in_thread(app) as url:
        yield url, links


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_class_refusal_pages_are_accessible(  # type: ignore[no-untyped-def]
    browser,
    teacher_server: tuple[str, str],
    class_only_server: tuple[str, list[str]],
    lang: str,
    size: str,
) -> None:
    """The refusals, and the pages of joining: a link's button, a signed-in page with its
    sign-out button, the signed-out page."""
    from playwright.sync_api import expect

    script = _axe()
    url, _ = teacher_server
    only, links = class_only_server
    context = browser.new_context(viewport=SIZES[size], bypass_csp=True)
    page = context.new_page()
    page.set_default_timeout(60_000)
    problems: dict[str, list[str]] = {}

    def axe(name: str) -> None:
        page.add_script_tag(path=str(script))
        if found := blocking(page.evaluate(RUN, TAGS)):
            problems[name] = found

    def check(name: str, words: str) -> None:
        shown = " ".join(page.locator("#error-message").inner_text().split())
        assert shown == words, (name, shown)
        axe(name)

    try:
        page.goto(f"{url}/join/no-such-link?lang={lang}")
        check("join", UI[lang]["join_bad"])
        page.goto(f"{url}/teacher?lang={lang}")
        page.fill("#teacher-key", "not-the-key")
        page.click("form.teacher-key button")
        page.wait_for_selector("#error-message")
        check("wrong key", page.locator("#error-message").inner_text().strip())
        assert page.locator("#teacher-key").count() == 1  # the form is asked again
        assert page.goto(f"{only}/lesson?lang={lang}").status == 401
        check("class only", UI[lang]["class_only"])
        page.goto(f"{only}{links[JOINERS.index(f'{lang}-{size}')]}?lang={lang}")
        axe("join")
        page.locator("form.join button").click()
        page.goto(f"{only}/section/0?lang={lang}")
        expect(page.locator(".sign-out button")).to_have_text(UI[lang]["sign_out"])
        axe("signed in")
        page.locator(".sign-out button").click()
        expect(page.locator("h1")).to_have_text(UI[lang]["signed_out_title"])
        axe("signed out")
    finally:
        context.close()
    assert not problems, problems


def test_a_class_works_in_chromium_on_either_store(  # type: ignore[no-untyped-def]
    browser,
    tmp_path,
    db_env,
) -> None:
    """On SQLite and on PostgreSQL (``db_env``), as learners and a teacher use it: Ada joins by
    her link, answers the exercise without the scaling and marks the section complete in place;
    Bo, joined on his own device, sees none of it; the teacher's report names Ada's mistake."""
    from playwright.sync_api import expect

    from attnlab.web.app import create_app

    _, key, links = make_class(tmp_path, ["Ada", "Bo"])
    app = create_app(tmp_path, figures_on=False, class_only=True)
    with serve_in_thread(app) as url:
        ada, bo, teacher = (browser.new_context(base_url=url) for _ in range(3))
        try:
            page = ada.new_page()
            page.set_default_timeout(60_000)
            page.goto(links[0])
            page.locator("form.join button").click()  # the link's page: its button joins
            expect(page.locator(".sign-out button")).to_be_visible()  # joined: signed in
            page.goto(f"/section/4?lang=en#ex-{EXERCISE}")
            page.fill(f"#exin-{EXERCISE}", no_scale_answer())
            page.press(f"#exin-{EXERCISE}", "Enter")
            expect(page.locator(f"#ex-{EXERCISE} .verdict")).to_contain_text("✗")
            page.locator("#complete-4 button.mark").click()
            expect(page.locator("#complete-4 button.done")).to_be_focused()

            other = bo.new_page()
            other.set_default_timeout(60_000)
            other.goto(links[1])
            other.locator("form.join button").click()
            expect(other.locator(".sign-out button")).to_be_visible()
            other.goto(f"/section/4?lang=en#ex-{EXERCISE}")
            expect(other.locator("#complete-4 button.mark")).to_be_visible()
            assert other.locator(f"#ex-{EXERCISE} .verdict").count() == 0

            report = teacher.new_page()
            report.set_default_timeout(60_000)
            report.goto("/teacher?lang=en")
            report.fill("#teacher-key", key)
            report.click("form.teacher-key button")
            report.wait_for_selector("#by-learner")
            assert report.locator("[data-mistake=no_scale]").count() == 1
            shown = report.locator("main").inner_text()
            assert "Ada" in shown and "Bo" in shown, shown[:300]
            on_disk = list(tmp_path.glob("*.sqlite3"))
            assert on_disk if db_env is None else not on_disk, on_disk  # the store named ran it
        finally:
            for context in (ada, bo, teacher):
                context.close()
