"""The one grader of typed numbers: ``attnlab check``, the quiz and the web exercises use it.

The tolerance follows the learner's own rounding, number by number: ``0.599`` is read as
"0.599 ± 0.0005" and ``0.4`` beside it as "0.4 ± 0.05", plus a small float slack. An exercise
states how many decimals it asks for; an answer right as far as it goes but with fewer decimals
is ``"imprecise"``, unless the digits left out are zeros (``0.8`` for ``0.800``).

A wrong answer about a stage of the lesson (an :class:`Address`) is matched against the
mistakes catalogue through :func:`attnlab.debug.diagnosis.diagnose`, with the same tolerances.
Prompts are batch rows (:func:`attnlab.example.prompt_index`), heads are numbered from 1
(:func:`attnlab.example.head_index`), rows from 0 as ``trace`` labels them.

Example::

    >>> from attnlab.learn.answer_parse import parse_numbers
    >>> v = grade(parse_numbers("0.599 0.4"), [0.5987, 0.4013])
    >>> v.kind, [round(t, 4) for t in v.tolerance]
    ('right', [0.0005, 0.05])
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal

from attnlab import example
from attnlab.debug import diagnosis
from attnlab.debug.catalogue import CHECK_STAGES, Mistake
from attnlab.errors import InputError
from attnlab.i18n import pick
from attnlab.learn.answer_parse import Typed
from attnlab.lesson import numbers
from attnlab.lesson.steps import MistakeInput
from attnlab.show.document import to_json

#: right; wrong; right as far as it goes but too few decimals; not as many numbers as asked.
Kind = Literal["right", "wrong", "imprecise", "count"]
# Float slack on top of the learner's rounding, relative to the value.
_REL_SLACK = 1e-9
#: The one stage where −∞ is an answer (a masked score); elsewhere an infinity is refused.
MASKED_STAGE = "masked_scores"


@dataclass(frozen=True)
class Address:
    """Which numbers of a stage an answer is about.

    ``prompt`` is the batch row (:func:`attnlab.example.prompt_index` reads ``"A"``/``"1"``),
    ``head`` is numbered from 1 (ignored for a single head), ``row`` is the query position
    ``t`` from 0 (None: the whole table), ``column`` one number of the row (None: all of it).
    """

    stage: str
    prompt: int = 0
    head: int = 1
    row: int | None = None
    column: int | None = None

    def to_json(self) -> dict[str, Any]:
        """``{"stage", "prompt": "A", "head": 1, "row", "column"}``, heads from 1."""
        name = example.prompt_names(self.prompt + 1)[self.prompt]
        return {"stage": self.stage, "prompt": name, "head": self.head, "row": self.row,
                "column": self.column}  # fmt: skip

    def label(self) -> str:
        """``weights[1,1,0]``: the stage and its indices, as the lesson writes them."""
        index = [self.prompt, *(i for i in (self.row, self.column) if i is not None)]
        return f"{self.stage}[{','.join(str(i) for i in index)}]"


@dataclass(frozen=True)
class Verdict:
    """The verdict on one answer.

    ``kind`` is ``"right"``, ``"wrong"``, ``"imprecise"`` (right as far as it goes, too few
    decimals) or ``"count"`` (not as many numbers as asked for). ``expected`` and ``given`` are
    flattened; ``tolerance`` is each number's (the learner's rounding plus float slack);
    ``mistakes`` are the catalogue mistakes that give the learner's numbers, and ``misread``
    another place of the same stage that holds them (an index read on the wrong axis).
    """

    correct: bool
    kind: Kind
    expected: list[float]
    given: list[float]
    tolerance: list[float]
    at: Address | None = None
    mistakes: tuple[Mistake, ...] = field(default=())
    misread: Address | None = None

    def to_json(self) -> dict[str, Any]:
        """JSON-ready: heads numbered from 1, −∞ written ``"-inf"``."""
        return {
            **(self.at.to_json() if self.at is not None else {}),
            "correct": self.correct,
            "kind": self.kind,
            "given": to_json(self.given),
            "expected": to_json(self.expected),
            "tolerance": self.tolerance,
            "mistakes": [
                {"name": m.name, "item": m.item, "section": m.section, "redo": m.redo}
                for m in self.mistakes
            ],
            "misread": self.misread.label() if self.misread is not None else None,
        }


def holds_infinity(at: Address | None) -> bool:
    """Whether ``-inf`` can be typed as the answer about ``at`` (only masked scores)."""
    return at is not None and at.stage == MASKED_STAGE


def tolerance(typed: Typed, expected: float) -> float:
    """How far ``typed`` may be from ``expected``: ``0.5·10⁻ᵈ`` for ``d`` decimals written,
    plus float slack (``0.599`` → ±0.0005)."""
    slack = _REL_SLACK * max(1.0, abs(expected)) if math.isfinite(expected) else 0.0
    return 0.5 * 10.0**-typed.decimals + slack


def _judge_one(typed: Typed, expected: float, tol: float, decimals: int) -> Kind:
    if math.isinf(typed.value) or math.isinf(expected):
        return "right" if typed.value == expected else "wrong"
    if abs(typed.value - expected) > tol:
        return "wrong"
    # Right as far as it goes; too coarse unless the digits left out are zeros (0.8 for 0.800).
    shown = typed.decimals
    if shown < decimals and abs(expected - round(expected, shown)) > 0.5 * 10.0**-decimals:
        return "imprecise"
    return "right"


def grade(
    typed: list[Typed],
    expected: list[float],
    decimals: int = 0,
    at: Address | None = None,
    inp: MistakeInput | None = None,
) -> Verdict:
    """Grade the learner's numbers against the right ones.

    Raises:
        InputError: for an infinity typed where :func:`holds_infinity` says none can be.

    Args:
        typed: the learner's numbers (:func:`~attnlab.learn.answer_parse.parse_numbers`).
        expected: the right numbers, flattened.
        decimals: how many decimals the question asks for (0: any rounding is judged as given).
        at: the stage numbers asked for; a wrong answer there is matched against the catalogue.
        inp: the input ``at`` refers to (default: the lesson example).
    """
    infinite = [t.text for t in typed if math.isinf(t.value)]
    if infinite and not holds_infinity(at):
        raise InputError(
            f"expected a finite number, got {infinite[0]!r} (only {MASKED_STAGE} holds -inf)"
        )
    given = [t.value for t in typed]
    if len(typed) != len(expected):
        return Verdict(False, "count", expected, given, [], at)
    tols = [tolerance(t, e) for t, e in zip(typed, expected, strict=True)]
    kinds = [_judge_one(*args, decimals) for args in zip(typed, expected, tols, strict=True)]
    if all(k == "right" for k in kinds):
        return Verdict(True, "right", expected, given, tols, at)
    if "imprecise" in kinds:
        return Verdict(False, "imprecise", expected, given, tols, at)
    if at is None:
        return Verdict(False, "wrong", expected, given, tols)
    inp = diagnosis.lesson_input() if inp is None else inp
    found = diagnosis.diagnose(at.stage, given, prompt=at.prompt, row=at.row, head=at.head,
                               column=at.column, tol=tols, inp=inp)  # fmt: skip
    misread = None if found else _misread(at, given, tols[0], inp)
    return Verdict(False, "wrong", expected, given, tols, at, tuple(found), misread)


def _misread(at: Address, given: list[float], tol: float, inp: MistakeInput) -> Address | None:
    """Another number of the same single-head stage equal to the one ``given`` (axes misread)."""
    if len(given) != 1 or at.row is None or at.column is None or not inp.is_single_head:
        return None
    value = given[0]
    table = diagnosis.correct_stages(inp)[at.stage]
    if table.dim() != 3:
        return None
    hits = (table - value).abs() <= tol  # [B, T, ...]
    for b, t, c in hits.nonzero().tolist():
        if (b, t, c) != (at.prompt, at.row, at.column):
            return Address(at.stage, b, row=t, column=c)
    return None


def address_of(key: str) -> Address | None:
    """The stage numbers a lesson-number key names (``"weights[1,1,0]"``), or None when the key
    is not one row or number of a stage (``"cost.elements_long"``, ``"uniform.mean[1,1,:]"``)."""
    source, stage, index = numbers.parse_key(key)
    if source != "lesson" or stage not in CHECK_STAGES or not index or len(index) > 3:
        return None
    shape = numbers.tensor(stage).shape  # [B, T, ...]
    places: list[int | None] = []
    for i, n in zip(index, shape, strict=False):
        if isinstance(i, slice):
            if i != slice(None):
                return None
            places.append(None)
        else:
            places.append(i % n)
    prompt, row, column = [*places, None, None][:3]
    if prompt is None or (row is None and column is not None):
        return None
    return Address(stage, prompt, row=row, column=column)


def explain(verdict: Verdict, lang: str) -> str | None:
    """One line naming the mistake(s) behind a wrong answer, or None (quiz and web)."""
    if verdict.mistakes:
        names = "; ".join(m.title[lang] for m in verdict.mistakes)
        section = verdict.mistakes[0].section
        return pick(
            lang,
            f"这正是这个错误会算出的数：{names}（重读第 {section} 节）",
            f"That is the number this mistake gives: {names} (reread section {section})",
        )
    if verdict.misread is not None:
        where = verdict.misread.label()
        return pick(
            lang,
            f"这是 {where} 的值：检查每个下标对应哪个轴（第 9 节）",
            f"That is the value of {where}: check which axis each index picks (section 9)",
        )
    return None
