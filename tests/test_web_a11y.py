"""What the web lesson's HTML and CSS give keyboard and screen-reader users (WCAG 2.1 AA), read
without a browser: a name for every explorer cell, the progress bar and each ``<nav>``, one
``<h1>`` per page, a skip link to ``<main>``, and text colours at a contrast of 4.5:1 or more.
tests/test_browser_axe.py checks the rendered pages with axe-core."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from test_web import make_client
from web_support import PAGE_TYPES

from attnlab.web.blocks import code_css
from attnlab.web.explorer import contrast, heat
from attnlab.web.ui_text import UI

PAGES = PAGE_TYPES
#: The background of highlighted code (``.hl pre`` in style.css).
CODE_BACKGROUND = "#fbfcfd"


class Tags(HTMLParser):
    """Every start tag of a page with its attributes, in order."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def all(self, tag: str) -> list[dict[str, str | None]]:
        return [a for t, a in self.tags if t == tag]


def rgb(hex_colour: str) -> tuple[int, int, int]:
    h = hex_colour.lstrip("#")
    h = "".join(c * 2 for c in h) if len(h) == 3 else h
    return int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16)


@pytest.fixture
def client(tmp_path: Path):  # type: ignore[no-untyped-def]
    return make_client(tmp_path)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_every_page_has_one_h1_named_navs_and_a_skip_link(client, lang: str) -> None:  # type: ignore[no-untyped-def]
    for path in PAGES:
        html = client.get(f"{path}{'&' if '?' in path else '?'}lang={lang}").text
        tags = Tags(html)
        assert len(tags.all("h1")) == 1, path
        assert all(nav.get("aria-label") for nav in tags.all("nav")), path
        skip = tags.tags[0] if tags.tags[0][0] == "a" else tags.all("a")[0]
        assert skip["href"] == "#main" and UI[lang]["skip_to_content"] in html, path
        assert [m.get("id") for m in tags.all("main")] == ["main"], path
        bars = [d for d in tags.all("div") if d.get("role") == "progressbar"]
        for bar in bars:  # named by the visible progress line
            assert bar.get("aria-labelledby") == "week-progress", path
            assert 'id="week-progress"' in html


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_every_explorer_cell_is_named_by_its_matrix_row_and_column(client, lang: str) -> None:  # type: ignore[no-untyped-def]
    tags = Tags(client.get(f"/explorer?n_head=2&lang={lang}").text)
    cells = [a for a in tags.all("input") if a.get("data-cell")]
    assert len(cells) > 40
    names = {}
    for cell in cells:
        m = re.fullmatch(r"(\w+)((?:\[\d+\])+)", str(cell["data-cell"]))
        assert m, cell
        *_, r, c = (int(i) for i in re.findall(r"\d+", m.group(2)))
        label = str(cell.get("aria-label"))
        assert f"{r}" in label and f"{c}" in label, label
        names[cell["data-cell"]] = label
    assert len(set(names.values())) == len(names)  # no two cells share a name
    assert names["w_q[1][2]"] == UI[lang]["cell_label"].format(m="W_Q", r=1, c=2)
    assert names["w_o[0][1]"] == UI[lang]["cell_label"].format(m="W_O", r=0, c=1)


def test_heatmap_text_contrasts_at_least_4_5_to_1() -> None:
    for step in range(1001):
        style = heat(step / 1000)
        bg = re.search(r"background:rgb\((\d+),(\d+),(\d+)\)", style)
        ink = re.search(r"color:(#[0-9a-f]+)", style)
        assert bg and ink, style
        assert contrast(tuple(int(v) for v in bg.groups()), rgb(ink.group(1))) >= 4.5, style


def test_contrast_is_wcag_s_ratio() -> None:
    assert contrast((0, 0, 0), (255, 255, 255)) == pytest.approx(21)
    assert contrast(rgb("#777777"), rgb("#ffffff")) == pytest.approx(4.48, abs=0.01)


def test_every_code_colour_contrasts_at_least_4_5_to_1() -> None:
    colours = re.findall(r"(?<![-\w])color:\s*(#[0-9a-fA-F]{3,6})", code_css())
    assert colours
    low = {c: contrast(rgb(c), rgb(CODE_BACKGROUND)) for c in colours}
    assert min(low.values()) >= 4.5, {c: r for c, r in low.items() if r < 4.5}
    css = (Path(__file__).parents[1] / "src/attnlab/web/static/style.css").read_text("utf-8")
    hl_pre = re.search(r"\.hl pre \{[^}]*background: (#[0-9a-f]+);", css)
    assert hl_pre and hl_pre.group(1) == CODE_BACKGROUND
