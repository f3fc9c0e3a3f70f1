"""Chinese pages on a machine without a CJK font (issue 24): Chromium sees only DejaVu through
fontconfig, and its own per-node font report (CDP ``CSS.getPlatformFontsForNode``) must show
every Chinese character drawn by the served subset, none left to DejaVu as empty boxes.

Skipped loudly without Chromium, a failure under ATTNLAB_REQUIRE_BROWSER=1 (see test_browser).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_support import CHROMIUM_ARGS, chromium_path
from store_support import serve_in_thread

from attnlab.web.fonts import CJK

pytestmark = pytest.mark.browser
DEJAVU = Path("/usr/share/fonts/truetype/dejavu")
#: The served subset's family, as the font file names itself (not the CSS name).
SERVED = "Noto Sans CJK SC"
PAGES = ("/lesson?lang=zh", "/section/10?lang=zh", "/glossary?lang=zh")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    from attnlab.web.app import create_app

    with serve_in_thread(create_app(tmp_path_factory.mktemp("progress"), figures_on=False)) as url:
        yield url


@pytest.fixture(scope="module")
def system_browser(browser: Any) -> Any:
    """Chromium with the machine's own fonts: the session's browser."""
    return browser


@pytest.fixture(scope="module")
def dejavu_only_browser(playwright: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Chromium whose fontconfig lists DejaVu Sans, Serif and Mono and nothing else."""
    core = [font for font in sorted(DEJAVU.glob("DejaVu*.ttf")) if "Math" not in font.name]
    if not core:
        pytest.fail(f"no DejaVu fonts in {DEJAVU}: the test needs them as the only system fonts")
    tmp = tmp_path_factory.mktemp("fontconfig")
    (tmp / "fonts").mkdir()
    for font in core:  # DejaVu Sans, Serif and Mono: no CJK font and no math font
        (tmp / "fonts" / font.name).symlink_to(font)
    conf = tmp / "fonts.conf"
    conf.write_text(
        '<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n'
        f"<fontconfig><dir>{tmp / 'fonts'}</dir><cachedir>{tmp / 'cache'}</cachedir>"
        "</fontconfig>\n",
        encoding="utf-8",
    )
    env = {**os.environ, "FONTCONFIG_FILE": str(conf)}
    browser = playwright.chromium.launch(
        executable_path=chromium_path(), args=CHROMIUM_ARGS, env=env
    )
    yield browser
    browser.close()


def _cjk_elements(node: dict[str, Any]) -> Iterator[tuple[int, str]]:
    """(node id, Chinese characters of its own text) for each element with Chinese text."""
    own = "".join(
        child.get("nodeValue", "") for child in node.get("children", []) if child["nodeType"] == 3
    )
    chars = "".join(CJK.findall(own.replace("\u3000", "")))
    if chars and node.get("nodeName") not in ("SCRIPT", "STYLE", "TITLE", "META"):
        yield node["nodeId"], chars
    for child in node.get("children", []):
        yield from _cjk_elements(child)
    if "contentDocument" in node:
        yield from _cjk_elements(node["contentDocument"])


@pytest.mark.parametrize("url", PAGES)
def test_every_chinese_character_is_drawn_by_the_served_font(
    dejavu_only_browser: Any, server: str, url: str
) -> None:
    context = dejavu_only_browser.new_context(
        viewport={"width": 1280, "height": 900}, base_url=server
    )
    page = context.new_page()
    page.set_default_timeout(30_000)
    page.goto(url)
    page.evaluate("document.fonts.ready")
    page.evaluate("Promise.all([...document.fonts].map(f => f.status === 'loading' && f.loaded))")
    cdp = context.new_cdp_session(page)
    cdp.send("DOM.enable")
    cdp.send("CSS.enable")
    root = cdp.send("DOM.getDocument", {"depth": -1, "pierce": True})["root"]
    checked, wrong = 0, []
    for node_id, chars in _cjk_elements(root):
        used = cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node_id})["fonts"]
        if not used:
            continue  # not rendered (a closed <details>, a hidden menu)
        checked += 1
        served = sum(f["glyphCount"] for f in used if f["familyName"].startswith(SERVED))
        families = {f["familyName"] for f in used}
        unknown = {name for name in families if not name.startswith((SERVED, "DejaVu"))}
        if served < len(chars) or unknown:
            wrong.append((chars[:20], used))
    context.close()
    assert checked > 20, f"only {checked} elements with Chinese text were rendered on {url}"
    assert not wrong, wrong[:5]


def test_formulas_are_drawn_with_the_math_font(dejavu_only_browser: Any, server: str) -> None:
    """§10 without any system math font: the cases brace spans its rows, and the label over the
    broadcast arrow stays clear of the term after it."""
    context = dejavu_only_browser.new_context(
        viewport={"width": 1280, "height": 900}, base_url=server
    )
    page = context.new_page()
    page.goto("/section/10?lang=en")
    page.evaluate("document.fonts.ready")
    brace = page.locator('mo[fence="true"]', has_text="{").first
    rows = page.locator("mtable.cases").first
    brace_box, rows_box = brace.bounding_box(), rows.bounding_box()
    cdp = context.new_cdp_session(page)
    cdp.send("DOM.enable")
    cdp.send("CSS.enable")
    root = cdp.send("DOM.getDocument", {"depth": -1})["root"]
    found = cdp.send("DOM.querySelector", {"nodeId": root["nodeId"], "selector": "mo[fence]"})
    used = cdp.send("CSS.getPlatformFontsForNode", {"nodeId": found["nodeId"]})["fonts"]
    assert [(f["familyName"], f["isCustomFont"]) for f in used] == [("Noto Sans Math", True)]
    assert brace_box is not None and rows_box is not None
    assert brace_box["height"] >= 0.9 * rows_box["height"], (brace_box, rows_box)
    label = page.locator("mover", has_text="broadcast").first
    after = label.locator("xpath=following-sibling::*[2]")  # the space, then "Scores"
    label_box, after_box = label.bounding_box(), after.bounding_box()
    assert label_box is not None and after_box is not None
    assert label_box["x"] + label_box["width"] <= after_box["x"] + 0.5, (label_box, after_box)
    context.close()


def test_a_system_cjk_font_is_used_before_the_served_one(system_browser: Any, server: str) -> None:
    """With a CJK font installed (CI installs fonts-noto-cjk), Chinese is drawn by it and the
    served subset is never fetched."""
    listed = subprocess.run(
        ["fc-list", ":lang=zh", "family"], capture_output=True, text=True, check=False
    ).stdout
    if "Noto Sans CJK SC" not in listed:
        pytest.skip("!!! no system Noto Sans CJK SC: apt-get install fonts-noto-cjk !!!")
    context = system_browser.new_context(viewport={"width": 1280, "height": 900}, base_url=server)
    page = context.new_page()
    fetched: list[str] = []
    page.on("request", lambda request: fetched.append(request.url))
    page.goto("/section/3?lang=zh")
    page.evaluate("document.fonts.ready")
    cdp = context.new_cdp_session(page)
    cdp.send("DOM.enable")
    cdp.send("CSS.enable")
    root = cdp.send("DOM.getDocument", {"depth": -1})["root"]
    prose = cdp.send("DOM.querySelector", {"nodeId": root["nodeId"], "selector": "main p"})
    used = cdp.send("CSS.getPlatformFontsForNode", {"nodeId": prose["nodeId"]})["fonts"]
    context.close()
    assert not [url for url in fetched if "attnlab-cjk" in url]
    assert any(f["familyName"].startswith(SERVED) and not f["isCustomFont"] for f in used), used
