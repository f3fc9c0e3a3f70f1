"""The one grader of typed numbers: ``attnlab check``, the quiz and the web exercises use it.

The tolerance follows the learner's own rounding, number by number: ``0.599`` is read as
"0.599 ± 0.0005" and ``0.4`` beside it as "0.4 ± 0.05", plus a small float slack. An exercise
states how many decimals it asks for; an answer right as far as it goes but with fewer decimals
is ``"imprecise"``, unless the digits left out are zeros (``0.8`` for ``0.800``).

A wrong answer about a stage of the lesson (an :class:`Address`) is matched against the
mistakes catalogue through :func:`attnlab.mistakes.diagnosis.diagnose`, with the same tolerances.
Prompts are batch rows (:func:`attnlab.core.example.prompt_index`), heads are numbered from 1
(:func:`attnlab.core.example.head_index`), rows from 0 as ``trace`` labels them.

Example::

    >>> from attnlab.grading.answer_parse import parse_numbers
    >>> v = grade(parse_numbers("0.599 0.4"), [0.5987, 0.4013])
    >>> v.kind, [round(t, 4) for t in v.tolerance]
    ('right', [0.0005, 0.05])
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from attnlab.core import example
from attnlab.core.steps import MistakeInput, lesson_input
from attnlab.grading import rounding, slips
from attnlab.grading.answer_parse import Typed
from attnlab.lesson import numbers
from attnlab.mistakes import diagnosis
from attnlab.mistakes.catalogue import CHECK_STAGES, Mistake
from attnlab.text.errors import InputError
from attnlab.text.jsonable import to_json

#: right; wrong; right as far as it goes but too few decimals; not as many numbers as asked;
#: too coarse to tell right from a catalogued mistake.
Kind = Literal["right", "wrong", "imprecise", "count", "coarse"]
# Float slack on top of the learner's rounding, relative to the value.
_REL_SLACK = 1e-9
#: The one stage where −∞ is an answer (a masked score); elsewhere an infinity is refused.
MASKED_STAGE = "masked_scores"


@dataclass(frozen=True)
class Address:
    """Which numbers of a stage an answer is about.

    ``prompt`` is the batch row (:func:`attnlab.core.example.prompt_index` reads ``"A"``/``"1"``),
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
    decimals), ``"count"`` (not as many numbers as asked for) or ``"coarse"`` (so few decimals
    that a catalogued mistake fits too; ``needed`` says how many tell them apart). ``expected``
    and ``given`` are flattened; ``tolerance`` is each number's (the learner's rounding plus
    float slack); ``carried`` marks a right answer reached from intermediates rounded to
    :data:`attnlab.grading.rounding.CARRIED` decimals; ``mistakes`` are the catalogue mistakes that
    give the learner's numbers, ``slips`` the :mod:`attnlab.grading.slips` that do, and ``misread``
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
    needed: int | None = None
    carried: bool = False
    slips: tuple[str, ...] = ()
    also: tuple[Address, ...] = ()  #: other places that hold the misread value too

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
            "also": [a.label() for a in self.also],
            "needed_decimals": self.needed,
            "carried": self.carried,
            "slips": list(self.slips),
        }


def holds_infinity(at: Address | None) -> bool:
    """Whether ``-inf`` can be typed as the answer about ``at`` (only masked scores)."""
    return at is not None and at.stage == MASKED_STAGE


def tolerance(typed: Typed, expected: float) -> float:
    """How far ``typed`` may be from ``expected``: ``0.5·10⁻ᵈ`` for ``d`` decimals written,
    plus float slack (``0.599`` → ±0.0005). A whole number typed for a right value that is that
    whole number is exact (``1`` for a weight of exactly 1): only the float slack."""
    slack = _REL_SLACK * max(1.0, abs(expected)) if math.isfinite(expected) else 0.0
    if math.isfinite(expected) and typed.value == expected == round(expected):
        return slack
    return 0.5 * 10.0**-typed.decimals + slack


def _exact_where_whole(typed: list[Typed], tols: list[float]) -> list[float]:
    """``tols`` with each number typed without decimals read as exact: a learner who types
    ``0`` for a masked score means 0, the 0-fill, not a score that rounds to 0."""
    return [_REL_SLACK * max(1.0, abs(t.value)) if t.decimals == 0 and math.isfinite(t.value)
            else tol for t, tol in zip(typed, tols, strict=True)]  # fmt: skip


def _judge_one(typed: Typed, expected: float, tol: float, other: float, decimals: int) -> Kind:
    """One number against the hull of ``expected`` and ``other`` (the carried value)."""
    if math.isinf(typed.value) or math.isinf(expected):
        return "right" if typed.value == expected else "wrong"
    low, high = min(expected, other), max(expected, other)
    if typed.value < low - tol or typed.value > high + tol:
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
    other_prompts: tuple[list[float], ...] = (),
) -> Verdict:
    """Grade the learner's numbers against the right ones.

    Raises:
        InputError: for an infinity typed where :func:`holds_infinity` says none can be.

    Args:
        typed: the learner's numbers (:func:`~attnlab.grading.answer_parse.parse_numbers`).
        expected: the right numbers, flattened.
        decimals: how many decimals the question asks for (0: any rounding is judged as given).
        at: the stage numbers asked for; a wrong answer there is matched against the catalogue.
        inp: the input ``at`` refers to (default: the lesson example).
        other_prompts: for a number that is not a stage (a loss, a probability), the same
            number of the other prompts: a wrong answer equal to one is the prompts swapped.
    """
    infinite = [t.text for t in typed if math.isinf(t.value)]
    if infinite and not holds_infinity(at):
        raise InputError(
            f"expected a finite number, got {infinite[0]!r} (only {MASKED_STAGE} holds -inf)",
            f"应为有限的数，收到的是 {infinite[0]!r}（只有 {MASKED_STAGE} 含 -inf）",
        )
    given = [t.value for t in typed]
    if len(typed) != len(expected):
        return Verdict(False, "count", expected, given, [], at)
    inp = lesson_input() if inp is None else inp
    tols = [tolerance(t, e) for t, e in zip(typed, expected, strict=True)]
    kinds, carried = _kinds(typed, expected, tols, decimals, at, inp)
    if "wrong" not in kinds:  # right as far as it goes: too coarse before too imprecise
        right = Verdict(True, "right", expected, given, tols, at, carried=carried)
        floored = _floor(right, inp, decimals)
        if floored.kind == "coarse" or _all(kinds) == "right":
            return floored
        return Verdict(False, "imprecise", expected, given, tols, at)
    found_slips = slips.find(typed, expected, tols)
    if at is None:
        if any(slips.close(given, other, tols) for other in other_prompts):
            found_slips.append("prompt_swapped")
        return Verdict(False, "wrong", expected, given, tols, slips=tuple(found_slips))
    found = _diagnose(at, given, tols, inp)
    if len(found) > 1:  # name only the mistakes that give exactly the whole numbers typed
        found = _diagnose(at, given, _exact_where_whole(typed, tols), inp) or found
    place = (at.prompt, at.head, at.row, at.column)
    found_slips += slips.elsewhere(given, tols, at.stage, place, inp)
    places = [] if found or found_slips else _misread(at, given, tols[0], inp)
    misread = places[0] if places else None
    return Verdict(False, "wrong", expected, given, tols, at, tuple(found), misread,
                   slips=tuple(found_slips), also=tuple(places[1:]))  # fmt: skip


def _diagnose(
    at: Address, given: list[float], tols: list[float], inp: MistakeInput
) -> list[Mistake]:
    return diagnosis.diagnose(at.stage, given, prompt=at.prompt, row=at.row, head=at.head,
                              column=at.column, tol=tols, inp=inp)  # fmt: skip


def _kinds(
    typed: list[Typed], expected: list[float], tols: list[float], decimals: int,
    at: Address | None, inp: MistakeInput,
) -> tuple[list[Kind], bool]:  # fmt: skip
    """Each number's kind against the exact answer, else against the hull of the exact and the
    carried one (:func:`attnlab.grading.rounding.carried`); True when only the hull made it
    right."""
    kinds = _judge(typed, expected, tols, decimals, expected)
    if _all(kinds) == "right" or at is None:
        return kinds, False
    carry = rounding.carried(at.stage, at.prompt, at.head, at.row, at.column, inp)
    if carry is None or len(carry) != len(expected):
        return kinds, False
    again = _judge(typed, expected, tols, decimals, carry)
    return (again, True) if _all(again) == "right" else (kinds, False)


def _judge(
    typed: list[Typed], expected: list[float], tols: list[float], decimals: int,
    other: list[float],
) -> list[Kind]:  # fmt: skip
    return [_judge_one(*args, decimals) for args in zip(typed, expected, tols, other, strict=True)]


def _all(kinds: list[Kind]) -> Kind | None:
    return "right" if all(k == "right" for k in kinds) else None


def _floor(verdict: Verdict, inp: MistakeInput, decimals: int) -> Verdict:
    """``verdict`` (right) made ``"coarse"`` when its tolerances hold a catalogued mistake's
    numbers at the same place too, with the decimals needed to tell them apart (at least the
    ``decimals`` asked for)."""
    at = verdict.at
    if at is None:
        return verdict
    table = diagnosis.mistake_values(at.stage, at.prompt, at.head, at.row, at.column, inp)
    others = [t.flatten().tolist() for t in table.values()]
    others = [o for o in others if len(o) == len(verdict.given)]
    if not rounding.confusable(verdict.given, verdict.tolerance, others):
        return verdict
    need = max(rounding.needed_decimals(verdict.expected, others), decimals)
    return replace(verdict, correct=False, kind="coarse", needed=need, carried=False)


def _misread(at: Address, given: list[float], tol: float, inp: MistakeInput) -> list[Address]:
    """Other numbers of the same single-head stage equal to the one ``given`` (an index read on
    the wrong axis), the likeliest slip first: the same prompt before the other, the same row
    before another, then the nearest column."""
    if len(given) != 1 or at.row is None or at.column is None or not inp.is_single_head:
        return []
    table = diagnosis.correct_stages(inp)[at.stage]
    if table.dim() != 3:
        return []
    hits = ((table - given[0]).abs() <= tol).nonzero().tolist()  # [b, t, c] places
    row, column = at.row, at.column
    places = [(b, t, c) for b, t, c in hits if (b, t, c) != (at.prompt, row, column)]
    places.sort(
        key=lambda p: (p[0] != at.prompt, p[1] != row, abs(p[1] - row) + abs(p[2] - column))
    )
    return [Address(at.stage, b, row=t, column=c) for b, t, c in places]


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
