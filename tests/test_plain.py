"""The plain-text renderer of content blocks (:mod:`attnlab.content.plain`): every section in both
languages as a terminal shows it, and the two lesson scripts printing exactly those sections."""

from __future__ import annotations

import re

import pytest

from attnlab.cli.walk import WALK_SECTIONS, render_lesson
from attnlab.cli.walk_grad import GRAD_SECTIONS, SELF, render_experiment
from attnlab.content import plain, sections
from attnlab.content.blocks import Block, figure, flow, heading, math, note, pre, table
from attnlab.content.plain_math import formula_lines, to_text
from attnlab.core import example
from attnlab.text.fmt import width

LANGS = ("zh", "en")


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("section_id", example.SECTION_IDS)
def test_every_section_renders_without_latex_left(section_id: int, lang: str) -> None:
    view = sections.section(section_id, lang)
    for b in view.blocks:
        lines = plain.block_lines(b, lang)
        assert lines, f"section {section_id}: a {b.kind} block printed nothing"
        if b.kind == "math":
            text = "\n".join(lines)
            assert not re.search(r"\\[a-zA-Z]|[{}]", text.replace("{ ", "").replace(" }", "")), (
                f"section {section_id}: LaTeX left in {text!r} (from {b.text!r})"
            )


@pytest.mark.parametrize("lang", LANGS)
def test_prose_wraps_to_the_width_in_columns(lang: str) -> None:
    for view in sections.all_sections(lang):
        for b in view.blocks:
            if b.kind in ("p", "note"):
                for line in plain.block_lines(b, lang):
                    assert width(line) <= plain.WIDTH, f"section {view.id}: {line!r}"


def test_wrap_breaks_chinese_between_characters_and_keeps_punctuation() -> None:
    lines = plain.wrap("注意力" * 10 + "，结束。", cols=10)
    assert all(width(line) <= 10 for line in lines), lines
    assert "".join(lines) == "注意力" * 10 + "，结束。"
    assert not any(line.startswith(("，", "。")) for line in lines), lines
    assert plain.wrap("one two  three", cols=7) == ["one two", "three"]


def test_formulas_read_as_plain_text() -> None:
    assert to_text(r"\frac{QK^\top}{\sqrt{d_k}}") == "QKᵀ/√d_k"
    assert to_text(r"\alpha_{t,j}=\frac{\exp(\hat{s}_{t,j})}{\sum_{r}\exp(\hat{s}_{t,r})}") == (
        "α_(t,j)=exp(s\u0302_(t,j))/(Σ_r exp(s\u0302_(t,r)))"  # ŝ: s and a combining hat
    )
    assert to_text(r"M_{t,j}=\begin{cases}1,&j\le t\\0,&j>t\end{cases}") == (
        "M_(t,j)={ 1 if j ≤ t; 0 if j>t }"
    )
    assert formula_lines(r"X=XW_Q,\qquad W=\begin{bmatrix}1&-0.5\\0&\infty\end{bmatrix}") == [
        "X = XW_Q",
        "W = [ 1  -0.5 ]",
        "    [ 0     ∞ ]",
    ]


def test_each_kind_of_block() -> None:
    blocks: list[Block] = [
        heading("Steps"),
        flow(["X → Q", "Q → S"]),
        note("Mask first."),
        pre("a = 1\n\nb = 2"),
        math(r"T^2"),
        table(["T", "elements"], [("T=2", "16"), ("T=1000", "4,000,000")], "Cost"),
        figure("chain_a", "en", "The chain"),
    ]
    assert plain.render(blocks, "en").splitlines() == [
        "-- Steps",
        "",
        "  1. X → Q",
        "  2. Q → S",
        "",
        "Note: Mask first.",
        "",
        "  a = 1",
        "",
        "  b = 2",
        "",
        "  T²",
        "",
        "Cost",
        "T        elements",
        "------  ---------",
        "T=2            16",
        "T=1000  4,000,000",
        "",
        "Figure: The chain",
        "  attnlab plot chain --prompt A --lang en",
    ]
    assert plain.figure_command("weights", "zh") == "attnlab plot weights"
    with pytest.raises(ValueError, match=r"block kind must be one of .*, got 'video'"):
        plain.block_lines(Block("video"), "en")


def test_listing_and_code_blocks() -> None:
    view = sections.section(12, "en")
    listing = next(b for b in view.blocks if b.kind == "listing")
    assert plain.block_lines(listing, "en")[1] == "  attnlab code script --lang en"
    code = next(b for b in sections.section(16, "zh").blocks if b.kind == "code")
    lines = plain.block_lines(code, "zh")
    assert lines[1].startswith("    def forward(") and code.data["path"] in lines[0]


@pytest.mark.parametrize("lang", LANGS)
def test_the_scripts_print_the_pages_sections(lang: str) -> None:
    lesson, grad = render_lesson(lang), render_experiment(lang)
    for n in WALK_SECTIONS:
        assert plain.render_section(n, lang) in lesson, f"§{n} differs from the page's blocks"
    for n in GRAD_SECTIONS:
        assert plain.render_section(n, lang, SELF) in grad, f"§{n} differs from the page's blocks"
    assert "attnlab grad" not in grad and "attnlab grad" in plain.render_section(16, lang)
