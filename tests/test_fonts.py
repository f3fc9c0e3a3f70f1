"""The served web fonts (issue 24): the committed Chinese subset has every character a page can
show, the math font has a MATH table, both are served with a year's cache, system fonts first.

When a test here fails after Chinese text was added, rebuild the subset:
``python tools/build_fonts.py --cjk``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from fontTools.ttLib import TTFont

from attnlab.core.example import SECTION_COUNT
from attnlab.grading import practice
from attnlab.web import fonts
from attnlab.web.fonts import CJK, FACES, FONT_DIR, IMMUTABLE

CJK_FONT = FONT_DIR / FACES["attnlab CJK"]
MATH_FONT = FONT_DIR / FACES["attnlab Math"]
STYLE = Path(fonts.__file__).parent / "static" / "style.css"


def _cmap(path: Path) -> set[str]:
    return {chr(cp) for cp in TTFont(path).getBestCmap()}


def _zh_pages(client: Any) -> dict[str, str]:
    urls = ["/lesson", "/glossary", "/explorer", "/notes", "/search?q=注意力", "/nowhere"]
    urls += [f"/section/{n}" for n in range(SECTION_COUNT)]
    urls += [f"/practice/{n}" for n in practice.SECTIONS]
    return {url: client.get(url, params={"lang": "zh"}).text for url in urls}


def test_subset_has_every_cjk_character_of_the_package() -> None:
    used = fonts.used_chars()
    assert len(used) > 300  # the collector reads the lesson's text, not an empty folder
    missing = used - _cmap(CJK_FONT)
    assert not missing, f"rebuild: python tools/build_fonts.py --cjk (missing {''.join(missing)})"


def test_subset_has_every_cjk_character_of_the_rendered_zh_pages(
    tmp_path: Path, web_client_factory: Any
) -> None:
    pages = _zh_pages(web_client_factory(tmp_path))
    shown = {url: set(CJK.findall(html)) for url, html in pages.items()}
    assert len(shown["/lesson"]) > 300
    have = _cmap(CJK_FONT)
    missing = {url: "".join(sorted(chars - have)) for url, chars in shown.items() if chars - have}
    assert not missing


def test_collector_finds_text_added_to_a_source(tmp_path: Path) -> None:
    (tmp_path / "new.py").write_text('TITLE = "龘 新"\n', encoding="utf-8")
    (tmp_path / "page.html").write_text("<p>（鬱）</p>", encoding="utf-8")
    (tmp_path / "figure.svg").write_text("<text>骉</text>", encoding="utf-8")  # not page text
    assert fonts.used_chars(tmp_path) == {"龘", "新", "（", "鬱", "）"}


def test_fonts_are_the_expected_families_and_the_math_font_has_a_math_table() -> None:
    cjk, math = TTFont(CJK_FONT), TTFont(MATH_FONT)
    assert cjk.flavor == math.flavor == "woff2"
    assert str(cjk["name"].getDebugName(1)).startswith("Noto Sans CJK SC")
    assert "MATH" in math
    # What the lesson's formulas draw: stretchy braces, infinity, sums, roots, arrows.
    assert set("{}()[]∞∑√→⋅−×≤") <= _cmap(MATH_FONT)


def test_fonts_are_served_versioned_with_a_year_of_cache(
    tmp_path: Path, web_client_factory: Any
) -> None:
    client = web_client_factory(tmp_path)
    page = client.get("/section/3?lang=zh").text
    for family, name in FACES.items():
        url = fonts.url(family)
        assert url in page
        answer = client.get(url)
        assert answer.status_code == 200
        assert answer.headers["content-type"] == "font/woff2"
        assert answer.headers["cache-control"] == IMMUTABLE
        assert answer.content == (FONT_DIR / name).read_bytes()
        stale = url.replace(url.split("/")[2], "0" * 16)
        assert client.get(stale).status_code == 404
    assert client.get(f"/fonts/{url.split('/')[2]}/..%2Fstyle.css").status_code == 404
    faces = re.findall(r"@font-face \{[^}]*\}", page)
    assert len(faces) == len(FACES)
    assert all("font-display: swap" in face for face in faces)
    for family in FACES:  # as CSS, not escaped as text
        assert f'font-family: "{family}"; src: local("' in page
        assert f'url("{fonts.url(family)}") format("woff2")' in page


def test_system_fonts_come_before_the_served_files() -> None:
    for face in re.findall(r"@font-face \{[^}]*\}", fonts.face_css()):
        src = re.search(r"src: ([^;]*);", face)
        assert src is not None
        parts = [part.strip() for part in src.group(1).split("),")]
        assert all(part.startswith("local(") for part in parts[:-1]) and len(parts) > 3
        assert parts[-1].startswith('url("/fonts/')
        assert ("Noto Sans CJK SC" in face) == ("attnlab CJK" in face)
    cjk_face = fonts.face_css().split("\n")[0]
    ranges = re.search(r"unicode-range: ([^;]*);", cjk_face)
    assert ranges is not None and "U+4E00-9FFF" in ranges.group(1)
    assert "U+0" not in ranges.group(1)  # Latin text skips the face, to the system's fonts
    css = STYLE.read_text(encoding="utf-8")
    sans = re.search(r"--sans:([^;]*);", css)
    assert sans is not None
    stack = [name.strip().strip('"') for name in sans.group(1).split(",")]
    assert stack[:2] == ["attnlab CJK", "system-ui"]
    for var in ("mono", "serif-math"):
        found = re.search(rf"--{var}:([^;]*);", css)
        assert found is not None and found.group(1).strip().startswith('"attnlab CJK"')
    assert '"attnlab Math"' in css


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_code_css_is_linked_by_hash_and_cached(
    tmp_path: Path, web_client_factory: Any, lang: str
) -> None:
    client = web_client_factory(tmp_path)
    link = re.search(
        r'href="(/assets/code\.css\?v=[0-9a-f]{16})"', client.get(f"/lesson?lang={lang}").text
    )
    assert link is not None
    answer = client.get(link.group(1))
    assert answer.status_code == 200 and ".hl" in answer.text
    assert answer.headers["cache-control"] == IMMUTABLE
    for other in ("/assets/code.css", "/assets/code.css?v=0123456789abcdef"):  # no or old hash
        again = client.get(other)
        assert again.text == answer.text and again.headers["cache-control"] == "no-cache"


def test_formulas_leave_braces_and_arrows_to_the_math_font() -> None:
    from attnlab.web.blocks import mathml

    cases = str(mathml(r"M_{t,j}=\begin{cases}1,&j\le t\\0,&j>t\end{cases},\qquad e^{-\infty}=0"))
    assert '<mo stretchy="true" fence="true" form="prefix">&#x0007B;</mo>' in cases
    assert "<mi>&#x0221E;</mi>" in cases and "<mo>&#x0221E;</mo>" not in cases
    arrow = str(mathml(r"M\ \xrightarrow{\text{broadcast}}\ S"))
    assert '<mover><mo stretchy="true">&#x2192;</mo>' in arrow
    assert "mpadded" not in arrow  # relative widths MathML Core ignores


def test_make_rebuilds_the_committed_subset_byte_for_byte(tmp_path: Path) -> None:
    """``make`` runs ``tools/build_fonts.py --cjk`` at every install: with the pinned fontTools
    and mplfonts it must reproduce the committed file, or a fresh clone's tree would change
    (and the font's address with it)."""
    import importlib.util

    tool = Path(__file__).parents[1] / "tools" / "build_fonts.py"
    spec = importlib.util.spec_from_file_location("build_fonts", tool)
    assert spec is not None and spec.loader is not None
    build_fonts = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build_fonts)
    built = build_fonts.build_cjk(tmp_path / "cjk.woff2")
    assert built.read_bytes() == (FONT_DIR / FACES["attnlab CJK"]).read_bytes()
