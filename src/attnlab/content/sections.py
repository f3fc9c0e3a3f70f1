"""The 20 sections of the web lesson, assembled: our explanation blocks plus the knowledge check.

Titles, summaries, questions, model answers and graded exercises come from
:mod:`attnlab.content.knowledge`; the explanation blocks come from the ``sections_*`` modules. A
built
section depends only on the language, so it is cached: the numbers are the pipeline's, fixed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from attnlab.content import (
    knowledge,
    sections_axes,
    sections_close,
    sections_compute,
    sections_learn,
    sections_mask,
    sections_read,
)
from attnlab.content.blocks import Block
from attnlab.content.numbers import LessonNumbers, lesson_numbers
from attnlab.core import example
from attnlab.text.i18n import pick

Builder = Callable[[LessonNumbers, str, list[list[str]]], list[Block]]

#: Section id → explanation builder, in the lesson's order (0 = core goal).
BUILDERS: dict[int, Builder] = dict(
    enumerate(
        [
            sections_read.core_goal,
            sections_read.uniform_mean,
            sections_read.query_key_value,
            sections_read.three_roles,
            sections_compute.projections,
            sections_compute.softmax_rows,
            sections_compute.weighted_values,
            sections_compute.full_chain,
            sections_axes.scaling,
            sections_axes.axes,
            sections_mask.why_mask,
            sections_mask.neg_inf,
            sections_mask.reproduce,
            sections_mask.head_module,
            sections_learn.self_attention,
            sections_learn.multi_head,
            sections_learn.logits,
            sections_close.cost,
            sections_close.checklist,
            sections_close.week8,
        ]
    )
)


@dataclass(frozen=True)
class SectionView:
    """Everything a section shows that does not depend on the learner's progress."""

    id: int
    label: str  # "核心目标" / "Core goal" or the section number
    check: knowledge.Section
    blocks: tuple[Block, ...]

    @property
    def title(self) -> str:
        """The section's title."""
        return self.check.title

    @property
    def anchor(self) -> str:
        """The HTML id of the section on the full lesson page."""
        return f"s-{self.id}"


def parse_section_id(raw: object) -> int:
    """A section id 0-19 from a path or form value; ``ValueError`` naming what was found."""
    text = str(raw).strip()
    if not (text.isascii() and text.isdigit()) or int(text) not in BUILDERS:
        shown = text[:20] + ("…" if len(text) > 20 else "")
        last = example.SECTION_COUNT - 1
        raise ValueError(f"section must be an integer 0-{last} (0 = core goal), got {shown!r}")
    return int(text)


def label(section_id: int, lang: str) -> str:
    """How the section is numbered on the page."""
    if section_id == 0:
        return pick(lang, "核心目标", "Core goal")
    return f"{section_id}."


@cache
def section(section_id: int, lang: str) -> SectionView:
    """Section ``section_id`` in ``lang``, built from the pipeline's numbers (cached)."""
    tokens = example.prompt_tokens(lang)
    blocks = tuple(BUILDERS[section_id](lesson_numbers(), lang, tokens))
    return SectionView(
        section_id, label(section_id, lang), knowledge.section(section_id, lang), blocks
    )


def all_sections(lang: str) -> list[SectionView]:
    """The 20 sections in page order."""
    return [section(i, lang) for i in example.SECTION_IDS]
