"""How a verdict reads: each kind has its own mark, words and colour (not colour alone); the
mistakes it matches are listed with the section that teaches each, joined the language's way."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from web_support import post_form

from attnlab.grading import answers, reasons
from attnlab.mistakes import catalogue
from attnlab.web.explorer import contrast

CSS = Path(__file__).parents[1] / "src" / "attnlab" / "web" / "static" / "style.css"
#: A wrong-kind verdict's data matching two catalogue mistakes taught in different sections.
TWO = {"kind": "wrong", "mistakes": ["no_mask", "token_ids_as_x"], "expected": 1, "given": 1}


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_each_mistake_names_the_section_that_teaches_it(lang: str) -> None:
    line = reasons.say(TWO, lang, "0.5")
    sep, reread = {"zh": ("；", "（重读第 {} 节）"), "en": ("; ", " (reread section {})")}[lang]
    named = [catalogue.get(name) for name in TWO["mistakes"]]
    assert {m.section for m in named} == {10, 1}  # the case seen: a mask mistake and §1's
    wanted = sep.join(m.title[lang] + reread.format(m.section) for m in named)
    assert line.endswith(wanted), line
    if lang == "zh":
        assert ";" not in line, line


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_every_kind_of_verdict_has_its_own_mark(lang: str) -> None:
    said = {}
    for ex, text in (("4c", "0.40"), ("4c", "0.123"), ("9c", "1.60"), ("4c", "0.40 0.05"),
                     ("4c", "abc")):  # fmt: skip
        data = answers.submit(ex, text).data()
        said[data["kind"]] = reasons.present(ex, text, data, lang)
    assert set(said) == {"right", "wrong", "imprecise", "count", "unreadable"}, said
    for kind, line in said.items():
        mark = reasons.MARKS[reasons.tone(kind)]
        assert line.startswith(mark + " "), (kind, line)
    assert len({line[0] for line in said.values()}) == 4, said  # imprecise and count: both ↻


@pytest.mark.parametrize(
    ("text", "css_class"),
    [("0.40", "ok"), ("0.123", "bad"), ("0.40 0.05", "again"), ("abc", "unreadable")],
)
def test_the_page_gives_each_kind_a_class_with_a_readable_colour(
    tmp_path: Path, web_client_factory: Any, text: str, css_class: str
) -> None:
    client = web_client_factory(tmp_path)
    assert post_form(client, "/exercise/4c?lang=en", answer=text).status_code == 303
    page = client.get("/section/4?lang=en").text
    shown = re.search(r'<p class="verdict ([^"]*)">(.)', page)
    assert shown is not None and css_class in shown.group(1).split(), shown
    rule = re.search(rf"\.verdict\.{css_class} \{{ color: ([^;]+);", CSS.read_text("utf-8"))
    assert rule is not None, f".verdict.{css_class} has no colour"
    colour = rule.group(1).strip()
    named = re.search(rf"--{colour[6:-1]}: (#[0-9a-f]{{6}})", CSS.read_text("utf-8"))
    hexed = named.group(1) if colour.startswith("var(") and named else colour
    rgb = tuple(int(hexed[i : i + 2], 16) for i in (1, 3, 5))
    for background in ((255, 255, 255), (0xFB, 0xFA, 0xF7)):  # a card, the page
        assert contrast(rgb, background) >= 4.5, (css_class, hexed, background)
