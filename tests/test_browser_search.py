"""A search hit opened in a real headless Chromium lands on a visible mark inside the element
that holds the match: the note (the one in the note box too), the knowledge check (its folds
opened, with the first mark in its question and others in its folds), the catalogued mistake
and the glossary term, in both languages, on the desktop and on the phone, and without
JavaScript. A hit found only in the other language's text opens in the search page's language,
on the outlined element's note (``#hit``), in view."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from store_support import serve_in_thread
from test_browser_axe import RUN, SIZES, TAGS, _axe, blocking

from attnlab.progress.store import ProgressStore

pytestmark = pytest.mark.browser
#: The element each kind of hit must land in (its mark's closest ancestor of this selector).
HOLDER = {"note": ".note-item", "check": "section.check", "glossary": ".term",
          "mistake": ".found-mistake", "section": "article.section"}  # fmt: skip
#: A query finding each kind of hit, per language (the notes are written by the fixture).
QUERIES = {
    ("zh", "note"): "提问", ("zh", "check"): "掩码", ("zh", "glossary"): "掩码",
    ("zh", "mistake"): "掩码", ("en", "note"): "zyzzyva", ("en", "check"): "mask",
    ("en", "glossary"): "causal mask", ("en", "mistake"): '"causal mask"',
}  # fmt: skip
#: Where the page's #hit mark is and whether it can be seen: inside the viewport, rendered
#: (offsetParent), not covered (the element at its centre is the mark), and every mark inside
#: the same holder rendered too (no mark left in a closed <details>).
PLACE = """(holder) => {
  const m = document.getElementById('hit');
  if (!m) return {found: false};
  const r = m.getBoundingClientRect();
  const at = document.elementFromPoint((r.left + r.right) / 2, (r.top + r.bottom) / 2);
  const box = m.closest(holder);
  return {found: true, tag: m.tagName, inHolder: box !== null, rendered: m.offsetParent !== null,
          inView: r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight && r.right <= innerWidth
                  && r.height > 0,
          covered: !(at === m || m.contains(at)),
          hidden: box ? [...box.querySelectorAll('mark')].filter(x => x.offsetParent === null)
                          .length : -1,
          rect: [r.left, r.top, r.right, r.bottom], lang: document.documentElement.lang};
}"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    from attnlab.web.app import create_app

    home = tmp_path_factory.mktemp("progress")
    with ProgressStore.open(home) as store:
        store.add_note(12, "my own trick: mask with -inf, never 0")
        store.add_note(12, "a later note on zyzzyva rows")  # the one in the note box
        store.add_note(3, "记住：Query 负责提问")
    with serve_in_thread(create_app(home, figures_on=False)) as url:
        yield url


@pytest.fixture(
    params=[(1280, 900, True), (390, 844, True), (1280, 900, False)],
    ids=["desktop", "phone", "desktop-no-js"],
)
def page(browser, server, request):  # type: ignore[no-untyped-def]
    width, height, js = request.param
    context = browser.new_context(
        viewport={"width": width, "height": height}, base_url=server, java_script_enabled=js
    )
    pg = context.new_page()
    pg.set_default_timeout(20_000)  # the machine may be busy with other tests
    yield pg
    context.close()


@pytest.mark.parametrize(("lang", "kind"), sorted(QUERIES))
def test_a_hit_opens_on_a_visible_mark_in_its_element(page, lang: str, kind: str) -> None:  # type: ignore[no-untyped-def]
    page.goto(f"/search?lang={lang}")
    page.fill("#search-page-box", QUERIES[lang, kind])
    with page.expect_navigation():
        page.press("#search-page-box", "Enter")
    link = page.locator(f'li.hit[data-kind="{kind}"] a').first
    assert link.count() == 1, f"no {kind} hit for {QUERIES[lang, kind]!r} ({lang})"
    with page.expect_navigation():
        link.click()
    page.wait_for_load_state("load")
    where = page.evaluate(PLACE, HOLDER[kind])
    assert where["found"] and where["tag"] == "MARK", (page.url, where)
    assert where["inHolder"], f"{page.url}: the mark is not in its {HOLDER[kind]}: {where}"
    assert where["rendered"] and where["inView"], f"{page.url}: mark not visible: {where}"
    assert not where["covered"], f"{page.url}: the mark is covered (sticky header?): {where}"
    assert where["hidden"] == 0, f"{page.url}: marks left in a closed fold: {where}"
    assert where["lang"].startswith(lang), (page.url, where["lang"])


#: Hits found only in the other language's text, per search page language: (query, kind).
ELSEWHERE = {"en": ("掩码", "glossary"), "zh": ("mask", "check")}
#: Where the page's #hit is, whether it can be seen, and the element it is the note of.
NOTE_PLACE = """() => {
  const n = document.getElementById('hit');
  if (!n) return {found: false};
  const r = n.getBoundingClientRect();
  const at = document.elementFromPoint((r.left + r.right) / 2, (r.top + r.bottom) / 2);
  const box = n.closest('.hit-elsewhere');
  return {found: true, note: n.classList.contains('hit-note'), box: box ? box.id : null,
          inView: r.top >= 0 && r.bottom <= innerHeight && r.height > 0
                  && r.left >= 0 && r.right <= innerWidth,
          covered: !(at === n || n.contains(at)),
          outline: box ? getComputedStyle(box).outlineStyle : '',
          rect: [r.left, r.top, r.right, r.bottom], lang: document.documentElement.lang};
}"""


@pytest.mark.parametrize("lang", sorted(ELSEWHERE))
def test_a_hit_found_only_in_the_other_language_opens_in_the_page_language(page, lang: str) -> None:  # type: ignore[no-untyped-def]
    query, kind = ELSEWHERE[lang]
    page.goto(f"/search?lang={lang}")
    page.fill("#search-page-box", query)
    with page.expect_navigation():
        page.press("#search-page-box", "Enter")
    link = page.locator(f'ol[aria-labelledby="hits-other"] li.hit[data-kind="{kind}"] a').first
    assert link.count() == 1, f"no other-language {kind} hit for {query!r} ({lang})"
    with page.expect_navigation():
        link.click()
    page.wait_for_load_state("load")
    where = page.evaluate(NOTE_PLACE)
    assert where["found"] and where["lang"].startswith(lang), (page.url, where)
    assert where["note"] and where["box"] == page.url.split("open=")[1].split("#")[0], where
    assert where["inView"] and not where["covered"], f"{page.url}: #hit not visible: {where}"
    assert where["outline"] == "dashed", where


#: What a search opens that no other page shows: the hits found only in the other language, a
#: check with its folds opened, a catalogued mistake, a section's taught terms, a marked term.
LANDINGS = [
    "/search?q=掩码", "/search?q=upper%20triangle", "/section/10?q=mask&open=check-10",
    "/section/10?q=mask&open=mistake-no_mask", "/section/10?q=causal%20mask&open=s-10",
    "/glossary?q=mask&open=term-causal-mask", "/glossary?q=掩码&open=term-causal-mask",
    "/section/10?q=掩码&open=check-10", "/section/10?q=掩码&open=s-10",
]  # fmt: skip


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_pages_a_hit_opens_pass_axe(browser, server, lang: str, size: str) -> None:  # type: ignore[no-untyped-def]
    script = _axe()
    context = browser.new_context(viewport=SIZES[size], base_url=server, bypass_csp=True)
    page = context.new_page()
    page.set_default_timeout(60_000)
    problems: dict[str, list[str]] = {}
    try:
        for path in LANDINGS:
            page.goto(f"{path}&lang={lang}")
            page.add_script_tag(path=str(script))
            if found_here := blocking(page.evaluate(RUN, TAGS)):
                problems[path] = found_here
    finally:
        context.close()
    assert not problems, "\n".join(f"{u}:\n  " + "\n  ".join(p) for u, p in problems.items())
