"""Practice with new numbers in a real Chromium, as a learner reaches it: from a section's
exercises to a dealt exercise, a wrong and a right answer graded in place, the worked solution,
new numbers, the mastery line after three right answers; with JavaScript off, and on a phone.

The right answer is computed here from the dealt exercise's own numbers with plain torch, not by
asking attnlab for it."""

from __future__ import annotations

import math
import re
from urllib.parse import parse_qs, urlparse

import pytest
import torch
from store_support import serve_in_thread
from test_browser import SHOTS, click_and_load

from attnlab.grading import practice

pytestmark = pytest.mark.browser
PHONE = {"width": 390, "height": 844}


def _seed(url: str) -> int:
    return int(parse_qs(urlparse(url).query)["seed"][0])


def _right_row(section: int, seed: int) -> list[float]:
    """The asked row of the dealt exercise, from its x and W matrices alone."""
    p = practice.deal(section, seed)
    x = torch.tensor(p.x, dtype=torch.float64)  # [T, C]
    q, k, v = (x @ torch.tensor(w, dtype=torch.float64) for w in (p.w_q, p.w_k, p.w_v))
    raw = q @ k.T  # [T, T]
    scaled = raw / math.sqrt(k.size(1))
    future = torch.triu(torch.ones_like(raw, dtype=torch.bool), diagonal=1)
    masked = scaled.masked_fill(future, float("-inf"))
    weights = torch.softmax(masked, dim=-1)
    stages = {"raw_scores": raw, "scaled_scores": scaled, "masked_scores": masked,
              "weights": weights, "output": weights @ v}  # fmt: skip
    return stages[p.stage][p.row].tolist()


def _typed(values: list[float]) -> str:
    return " ".join("-inf" if math.isinf(v) else f"{v:.2f}" for v in values)


@pytest.fixture
def server(tmp_path):  # type: ignore[no-untyped-def]
    """A fresh store for each test: the mastery line starts at zero."""
    from attnlab.web.app import create_app

    with serve_in_thread(create_app(tmp_path, figures_on=False)) as url:
        yield url


@pytest.fixture(params=["js", "no-js"])
def page(request, browser, server):  # type: ignore[no-untyped-def]
    context = browser.new_context(
        viewport=PHONE, base_url=server, java_script_enabled=request.param == "js"
    )
    pg = context.new_page()
    pg.set_default_timeout(20_000)
    yield pg
    context.close()


def submit(page, selector: str) -> None:  # type: ignore[no-untyped-def]
    """Press a practice form's button or the new-numbers link: in place with JavaScript (done
    when the live region reads the result out), else a page load."""
    if not page.evaluate("document.documentElement.classList.contains('js')"):
        click_and_load(page, selector)
        return
    page.evaluate("document.getElementById('announce').textContent = ''")
    page.click(selector)
    page.wait_for_function("() => document.getElementById('announce').textContent !== ''")


def _no_sideways_scroll(page) -> None:  # type: ignore[no-untyped-def]
    """Neither the page nor the exercise's text needs a sideways scroll: the question is read
    whole on a phone."""
    wide = page.evaluate("document.documentElement.scrollWidth")
    assert wide <= PHONE["width"], f"the page scrolls sideways: {wide} px wide"
    hidden = page.evaluate(
        "[...document.querySelectorAll('pre')].filter(p => p.scrollWidth > p.clientWidth)"
        ".map(p => p.className)"
    )
    assert not hidden, f"text cut off at the right of {hidden}"


@pytest.mark.parametrize("section", [5, 11])
def test_a_learner_practises_from_the_section_to_mastery(page, section: int) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    page.goto(f"/section/{section}?lang=en")
    click_and_load(page, ".practice-link a")
    assert re.search(rf"/practice/{section}\?", page.url), page.url
    seed = _seed(page.url)
    right = _right_row(section, seed)
    expect(page.locator("h1")).to_contain_text("Practise with new numbers")
    # The page never shows the answer before it is asked for.
    assert _typed(right) not in page.inner_text("main")
    _no_sideways_scroll(page)

    wrong = [v + 0.5 if not math.isinf(v) else v for v in right]
    page.fill("#practice-answer", _typed(wrong))
    submit(page, "#verdict button")
    assert _seed(page.url) == seed  # still the same exercise
    expect(page.locator("#verdict .verdict.bad")).to_be_visible()
    expect(page.locator("#practice-answer")).to_have_value(_typed(wrong))

    page.fill("#practice-answer", _typed(right))
    submit(page, "#verdict button")
    expect(page.locator("#verdict .verdict.ok")).to_be_visible()
    expect(page.locator(".practice-run")).to_contain_text("1 of 3")

    submit(page, "#solution button")
    solution = page.inner_text(".practice-solution")
    assert f"{right[-1]:.2f}".replace("-0.00", "0.00") in solution.replace("-0.00", "0.00")
    expect(page.locator(".practice-run")).to_contain_text("0 of 3")  # the solution starts again
    page.goto(f"/section/{section}?lang=en")
    expect(page.locator(".practice-link .practice-state")).to_contain_text("0 of 3 right in a row")
    page.go_back()
    _no_sideways_scroll(page)
    page.screenshot(path=str(SHOTS / f"practice-{section}-phone.png"), full_page=True)

    # Three fresh exercises answered right in a row, without the solution: mastered.
    for _ in range(3):
        submit(page, f"a[href='/practice/{section}?lang=en']")
        fresh = _seed(page.url)
        assert fresh != seed
        seed = fresh
        page.fill("#practice-answer", _typed(_right_row(section, seed)))
        submit(page, "#verdict button")
        expect(page.locator("#verdict .verdict.ok")).to_be_visible()
    expect(page.locator(".practice-run")).to_contain_text("mastered")
    # The progress: the section's link says so, and the saved verdicts are in /api/progress.
    page.goto(f"/section/{section}?lang=en")
    expect(page.locator(".practice-link .practice-state")).to_contain_text("✓ mastered")
    page.goto("/lesson?lang=zh")
    state = page.locator(f"article[data-section='{section}'] .practice-state")
    expect(state).to_contain_text("已掌握")
    saved = page.evaluate("fetch('/api/progress').then(r => r.json())")
    assert saved["practice"][str(section)] == {"run": 3, "mastered": True}, saved
