"""Every page type checked by axe-core (WCAG 2.1 A and AA rules) in a real headless Chromium, in
both languages, on a 1280×900 desktop and a 390×844 phone, plus axe's best practices (landmarks,
heading order, empty headers): no violation of any impact, moderate and minor included.

axe-core is the pinned npm release of ``axe_support`` (``$ATTNLAB_AXE``, fetched by ``.ci/run``).
Without it the test is skipped LOUDLY, unless ATTNLAB_REQUIRE_BROWSER=1, where it fails.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from axe_support import found
from store_support import serve_in_thread
from web_support import PAGE_TYPES

from attnlab.content import knowledge

pytestmark = pytest.mark.browser
SIZES = {"desktop": {"width": 1280, "height": 900}, "phone": {"width": 390, "height": 844}}
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]
BLOCKING = ("critical", "serious", "moderate", "minor")
#: A section with graded exercises: one is answered wrong first, so its verdict is checked too.
EXERCISE_SECTION = next(s.id for s in knowledge.sections() if s.exercises)
#: §18 has titled blocks: below a section page's <h1> they must be <h2> (heading order).
TITLED_SECTION = 18
PAGES = [*PAGE_TYPES[:2], f"/section/{EXERCISE_SECTION}", f"/section/{TITLED_SECTION}",
         *PAGE_TYPES[2:]]  # fmt: skip
SIZE_OF = "els => els.map(e => [e.getBoundingClientRect().width, e.getBoundingClientRect().height])"
#: Every rule of ``TAGS``; the details are gathered for violations only (``resultTypes``): the
#: passes are still listed, with one example node each, and the run takes half the time.
RUN = ("tags => axe.run(document, {runOnly: {type: 'tag', values: tags}, "
       "resultTypes: ['violations']})")  # fmt: skip


def _axe() -> Path:
    import os

    path = found()
    if path is None or not path.is_file():
        where = path or "ATTNLAB_AXE unset"
        why = f"axe-core not found ({where}; run python3 tests/axe_support.py)"
        if os.environ.get("ATTNLAB_REQUIRE_BROWSER") == "1":
            pytest.fail(f"ATTNLAB_REQUIRE_BROWSER=1 but {why}")
        pytest.skip(f"!!! AXE TESTS SKIPPED: {why} !!!")
    return path


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    from attnlab.web.app import create_app

    with serve_in_thread(create_app(tmp_path_factory.mktemp("progress"), figures_on=False)) as url:
        yield url


def blocking(results: dict) -> list[str]:
    """One line per violation of an impact in ``BLOCKING``: rule id, impact, the elements."""
    return [
        f"{v['id']} ({v['impact']}): {[n['target'] for n in v['nodes']][:6]}"
        for v in results["violations"]
        if v["impact"] in BLOCKING
    ]


def _answer_wrong(page, lang: str) -> None:  # type: ignore[no-untyped-def]
    """Answer the section's first exercise wrong, so the page shows a verdict."""
    ex = knowledge.section(EXERCISE_SECTION).exercises[0]
    page.goto(f"/section/{EXERCISE_SECTION}?lang={lang}")
    page.fill(f"#exin-{ex.id}", "12345")
    page.click(f"#ex-{ex.id} button")
    page.wait_for_selector(f"#ex-{ex.id} .verdict")


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("lang", ["zh", "en"])
def test_no_axe_violations(browser, server, lang: str, size: str) -> None:  # type: ignore[no-untyped-def]
    script = _axe()
    context = browser.new_context(viewport=SIZES[size], base_url=server, bypass_csp=True)
    page = context.new_page()
    page.set_default_timeout(60_000)  # axe over the whole lesson takes a while on a busy machine
    problems: dict[str, list[str]] = {}
    try:
        _answer_wrong(page, lang)
        checked = 0
        for path in PAGES:
            url = f"{path}{'&' if '?' in path else '?'}lang={lang}"
            page.goto(url)
            page.add_script_tag(path=str(script))
            results = page.evaluate(RUN, TAGS)
            checked += len(results["passes"])
            if found_here := blocking(results):
                problems[url] = found_here
    finally:
        context.close()
    assert checked > 0  # axe ran its rules
    assert not problems, "\n".join(f"{u}:\n  " + "\n  ".join(p) for u, p in problems.items())


def test_blocking_lists_moderate_and_minor_too() -> None:
    results = {"violations": [
        {"id": "label", "impact": "critical", "nodes": [{"target": ["#a"]}]},
        {"id": "region", "impact": "moderate", "nodes": [{"target": ["#b"]}]},
        {"id": "empty-table-header", "impact": "minor", "nodes": [{"target": ["#c"]}]},
    ]}  # fmt: skip
    assert blocking(results) == [
        "label (critical): [['#a']]",
        "region (moderate): [['#b']]",
        "empty-table-header (minor): [['#c']]",
    ]


def test_glossary_section_links_are_24px_tap_targets_on_a_phone(browser, server) -> None:  # type: ignore[no-untyped-def]
    context = browser.new_context(viewport=SIZES["phone"], base_url=server)
    page = context.new_page()
    try:
        page.goto("/glossary?lang=zh")
        boxes = page.eval_on_selector_all(
            "a.from",
            SIZE_OF,
        )
    finally:
        context.close()
    assert boxes
    assert [b for b in boxes if b[0] < 24 or b[1] < 24] == []
