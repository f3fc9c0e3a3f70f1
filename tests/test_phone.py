"""Every page on a 390×844 phone screen, in both languages, in a real headless Chromium: nothing
scrolls the page sideways, nothing is cut off, wide boxes scroll inside themselves with a hint,
and figures are drawn large enough to read.

Pages are found by crawling every same-site link from ``/`` (so pages added later are covered),
plus the 20 section pages and a 404 page. One browser, one context per language, one tab.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from store_support import serve_in_thread

from attnlab.web.ui_text import UI

pytestmark = pytest.mark.browser
PHONE = {"width": 390, "height": 844}
SHOTS = Path(os.environ.get("ATTNLAB_SCREENSHOTS", "/tmp"))
SEEDS = ["/", "/lesson", "/explorer", "/glossary", "/no-such-page"] + [
    f"/section/{i}" for i in range(20)
]
#: Screenshots for a person to look at (in $ATTNLAB_SCREENSHOTS): page, and the box to show.
SHOWN = (("/lesson", ".math.overflows"), ("/section/15", "figure.code"), ("/explorer", "#stages"))
SCROLLERS = ("auto", "scroll")
#: phone.js shows the scroll hint on a box hiding more than this many px (a few px stay visible
#: in the padding).
SLACK = 8

#: The in-page check, run after each load with the constants below.
LAYOUT_REPORT = (Path(__file__).parent / "phone_layout.js").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def server_with_figures(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The web lesson with its figures (they decide how wide a phone page gets)."""

    from attnlab.figures import effects
    from attnlab.web.app import create_app

    small = effects.scale_data(d_values=(1, 4, 16), tokens=8, samples=16)
    patch = pytest.MonkeyPatch()
    # The figures' size is what matters here, not section 8's full measurement (seconds of
    # sampling, checked in test_plots.py).
    patch.setattr(effects, "scale_data", lambda: small)
    app = create_app(tmp_path_factory.mktemp("progress"), figures_on=True)
    with serve_in_thread(app) as url:
        yield url
    patch.undo()


def same_site_page(url: str, base: str, lang: str) -> str | None:
    """``/path?lang=..`` for a link to an HTML page of this site in ``lang``, else None."""
    parts = urlsplit(url)
    if f"{parts.scheme}://{parts.netloc}" != base or parts.path.startswith(("/static", "/api")):
        return None
    if parts.path.startswith("/assets"):
        return None
    if parse_qs(parts.query).get("lang", [lang]) != [lang]:
        return None  # the other language's context visits it
    return f"{parts.path}?lang={lang}"


def crawl(page, base: str, lang: str) -> dict[str, dict]:  # type: ignore[no-untyped-def]
    """Visit the seeds and every same-site link they lead to: each page's layout report."""
    constants = {"SCROLLERS": list(SCROLLERS), "SLACK": SLACK, "HINTS": {
        "zh-CN": UI["zh"]["scroll_hint"], "en": UI["en"]["scroll_hint"]}}  # fmt: skip
    todo, seen, reports = [f"{p}?lang={lang}" for p in SEEDS], set(), {}
    while todo:
        path = todo.pop(0)
        if path in seen:
            continue
        seen.add(path)
        page.goto(path)
        report = page.evaluate(LAYOUT_REPORT, constants)
        reports[path] = report
        for url in report["links"]:
            found = same_site_page(url, base, lang)
            if found and found not in seen:
                todo.append(found)
    return reports


def test_every_page_fits_a_phone(browser, server_with_figures) -> None:  # type: ignore[no-untyped-def]
    problems, reports = {}, {}
    for lang in ("zh", "en"):
        context = browser.new_context(viewport=PHONE, base_url=server_with_figures)
        page = context.new_page()
        page.set_default_timeout(30_000)  # the first lesson page draws the figures
        try:
            found = crawl(page, server_with_figures, lang)
            for path, box in SHOWN:
                page.goto(f"{path}?lang={lang}")
                page.locator(box).first.scroll_into_view_if_needed()
                shot = f"attnlab-phone-{lang}-{path.strip('/').replace('/', '-')}.png"
                page.screenshot(path=str(SHOTS / shot))
        finally:
            context.close()
        problems.update({p: r["problems"] for p, r in found.items() if r["problems"]})
        assert {f"{p}?lang={lang}" for p in SEEDS} <= set(found)
        assert len(found) > len(SEEDS)  # the crawl found more than the seeds (/continue, ...)
        reports.update(found)
    assert not problems, problems
    # The checks saw something: the whole lesson has its figures and some wide boxes.
    for lang in ("zh", "en"):
        assert reports[f"/lesson?lang={lang}"]["figures"] >= 5
        assert reports[f"/lesson?lang={lang}"]["hints"] > 0
