"""The knowledge checks of Week 7's 20 sections, and the glossary, in Chinese and English.

The content is package data (``attnlab/data/sections.toml`` and ``glossary.toml``). Text may embed
computed numbers as ``{{key|decimals}}`` and every graded exercise names its answer by a key; both
are resolved by :mod:`attnlab.lesson.numbers` when the text is read, so no number is typed into the
content. Section 0 is the page's "core goal" section; 1-19 follow the page.

Example::

    >>> s = section(9, "en")
    >>> s.exercises[0].key
    'column_sums[0,0]'
    >>> exercise("9c", "en").key
    'column_sums[0,0]'
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from attnlab.lesson import numbers
from attnlab.text import fmt
from attnlab.text.i18n import LANGS

TEXT_FIELDS: tuple[str, ...] = ("title", "summary", "question", "answer", "mistake")
_PLACEHOLDER = re.compile(r"\{\{([^}|]+)(?:\|(\d+))?\}\}")
DEFAULT_DECIMALS = 3


@dataclass(frozen=True)
class Confusable:
    """A number near an exercise's answer that a learner may give instead (the loss before the
    step for the loss after it): the lesson number's key, and what it is in one language."""

    key: str
    what: str


@dataclass(frozen=True)
class Exercise:
    """An auto-graded exercise: its prompt, the key of the value that answers it, the decimals
    it asks for (enough to tell the answer from every mistake and nearby number:
    ``tests/test_verdict_edges.py`` checks each against
    :func:`attnlab.grading.keys.separating_decimals`), and the nearby numbers it names."""

    id: str
    section: int
    prompt: str
    key: str
    decimals: int
    confusables: tuple[Confusable, ...] = ()
    #: What to compute, said after a first wrong try (never the number).
    hint: str = ""
    #: The worked step with the lesson's numbers, shown after a second wrong try.
    step: str = ""
    #: How the answer is written: ``"（保留 3 位小数）"``/``" (give 3 decimals)"``, ``""``
    #: where the question already says it wants integers.
    how: str = ""

    @property
    def expected(self) -> numbers.Value:
        """The answer, computed now by the pipeline."""
        return numbers.get(self.key)

    @property
    def expected_values(self) -> list[float]:
        """The answer's numbers, flattened in reading order."""
        return numbers.tensor(self.key).double().flatten().tolist()


@dataclass(frozen=True)
class Section:
    """One section's knowledge check in one language (numbers already filled in)."""

    id: int
    slug: str
    title: str
    summary: str
    question: str
    answer: str
    mistake: str
    exercises: tuple[Exercise, ...]


@dataclass(frozen=True)
class Term:
    """A glossary entry: its name and definition in one language, and the section that
    introduces it."""

    id: str
    section: int
    name: str
    definition: str


@cache
def _load(name: str) -> dict[str, Any]:
    text = resources.files("attnlab").joinpath("data", name).read_text(encoding="utf-8")
    return tomllib.loads(text)


def render(text: str) -> str:
    """Replace each ``{{key|decimals}}`` in ``text`` with the value the pipeline computes."""

    def one(match: re.Match[str]) -> str:
        decimals = int(match[2]) if match[2] is not None else DEFAULT_DECIMALS
        return fmt.answer(numbers.get(match[1]), decimals)

    return _PLACEHOLDER.sub(one, text)


def _check_lang(lang: str) -> None:
    if lang not in LANGS:
        raise ValueError(f"lang must be one of {', '.join(LANGS)}, got {lang!r}")


def _exercises(raw: dict[str, Any], lang: str) -> tuple[Exercise, ...]:
    found = []
    for e in raw.get("exercise", []):
        confusables = tuple(Confusable(c["key"], c[lang]) for c in e.get("confusable", []))
        decimals = e.get("decimals", DEFAULT_DECIMALS)
        prompt = render(e[lang])
        found.append(Exercise(e["id"], raw["id"], prompt, e["answer"], decimals, confusables,
                              render(e["hint"][lang]), render(e["step"][lang]),
                              _how(decimals, prompt, lang)))  # fmt: skip
    return tuple(found)


def _how(decimals: int, prompt: str, lang: str) -> str:
    """How many decimals an exercise wants, as its label says it (nothing when its question
    already asks for integers)."""
    if decimals == 0 and ("整数" in prompt or "integer" in prompt):
        return ""
    if decimals == 0:
        return "（整数）" if lang == "zh" else " (whole numbers)"
    unit = "decimal" if decimals == 1 else "decimals"
    return f"（保留 {decimals} 位小数）" if lang == "zh" else f" (give {decimals} {unit})"


def _section(raw: dict[str, Any], lang: str) -> Section:
    text = {f: render(raw[lang][f]) for f in TEXT_FIELDS}
    return Section(raw["id"], raw["slug"], exercises=_exercises(raw, lang), **text)


def sections(lang: str = "zh") -> list[Section]:
    """All 20 sections in page order, in ``lang``."""
    return list(_all_sections(lang))


@cache
def _all_sections(lang: str) -> tuple[Section, ...]:
    # Filled in once per language: the numbers come from the fixed lesson example.
    _check_lang(lang)
    return tuple(_section(raw, lang) for raw in _load("sections.toml")["section"])


def section(section_id: int, lang: str = "zh") -> Section:
    """One section by id (0 = core goal, 1-19); ``KeyError`` for an unknown id."""
    for one_section in _all_sections(lang):
        if one_section.id == section_id:
            return one_section
    raise KeyError(f"section must be one of 0-19 (0 = core goal), got {section_id!r}")


def exercise(exercise_id: str, lang: str = "zh") -> Exercise:
    """One graded exercise by id, e.g. ``"9c"``; ``KeyError`` for an unknown id."""
    for one_section in _all_sections(lang):
        for ex in one_section.exercises:
            if ex.id == exercise_id:
                return ex
    raise KeyError(f"no exercise called {exercise_id!r}; known: {', '.join(exercise_ids())}")


def exercise_ids() -> tuple[str, ...]:
    """Ids of every graded exercise, in page order."""
    raws = _load("sections.toml")["section"]
    return tuple(e["id"] for raw in raws for e in raw.get("exercise", []))


def glossary(lang: str = "zh") -> list[Term]:
    """The week's terms in ``lang``, in the order they are listed."""
    _check_lang(lang)
    return [
        Term(t["id"], t["section"], t[lang]["name"], render(t[lang]["definition"]))
        for t in _load("glossary.toml")["term"]
    ]
