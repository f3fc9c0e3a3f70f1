"""The one grader of typed numbers: ``attnlab check``, the quiz and the web exercises use it.

The tolerance follows the learner's own rounding, number by number: ``0.599`` is read as
"0.599 ± 0.0005" and ``0.4`` beside it as "0.4 ± 0.05", plus a small float slack. An exercise
states how many decimals it asks for; an answer right as far as it goes but with fewer decimals
is ``"imprecise"``, unless the digits left out are zeros (``0.8`` for ``0.800``).

A right answer too coarse to tell from a catalogued mistake is ``"coarse"``. A wrong answer
about a stage of the lesson (an :class:`~attnlab.grading.keys.Address`) is matched, with the same
tolerances, against the catalogue mistakes' numbers at that place, and against the slips of
:mod:`attnlab.grading.slips`. :func:`judge` reads all of these from the question's
:class:`~attnlab.grading.keys.AnswerKey`, so grading reads no lesson table a key already holds.

Example::

    >>> from attnlab.grading.answers import parse_numbers
    >>> v = grade(parse_numbers("0.599 0.4"), [0.5987, 0.4013])
    >>> v.kind, [round(t, 4) for t in v.tolerance]
    ('right', [0.0005, 0.05])
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

from attnlab.core.steps import MistakeInput
from attnlab.grading.keys import GUESSES, Address, AnswerKey
from attnlab.mistakes.catalogue import Mistake
from attnlab.text.errors import InputError
from attnlab.text.jsonable import to_json

if TYPE_CHECKING:
    from attnlab.grading.answers import Typed

#: right; wrong; right as far as it goes but too few decimals; not as many numbers as asked;
#: too coarse to tell right from a catalogued mistake.
Kind = Literal["right", "wrong", "imprecise", "count", "coarse"]
# Float slack on top of the learner's rounding, relative to the value.
_REL_SLACK = 1e-9
#: How near a typed number must be to the right value, relative, to be that value exactly
#: (``0.4`` for the lesson's float32 ``0.566/√2``): a float32 keeps about 7 digits.
EXACT_REL = 1e-6
#: The one stage where −∞ is an answer (a masked score); elsewhere an infinity is refused.
MASKED_STAGE = "masked_scores"


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
    plus float slack (``0.599`` → ±0.0005). A number typed that is the right value itself
    (:func:`is_exact`: ``1`` for a weight of exactly 1, ``0.4`` for 0.4) is read as that value,
    whatever its decimals: only the float slack."""
    slack = _REL_SLACK * max(1.0, abs(expected)) if math.isfinite(expected) else 0.0
    if is_exact(typed, expected):
        return abs(typed.value - expected) + slack
    return 0.5 * 10.0**-typed.decimals + slack


def is_exact(typed: Typed, expected: float) -> bool:
    """Whether ``typed`` is ``expected`` itself, not a rounding of it: ``expected`` rounded to
    the decimals typed is the number typed, and rounding it so changes it by no more than a
    float32 keeps (:data:`EXACT_REL`): ``0.4`` for the lesson's 0.566/√2, never ``16000001``
    for 16,000,000 or ``0.876`` for 0.87593."""
    if not math.isfinite(expected) or typed.decimals < -300:
        return False
    scale = max(1.0, abs(expected))
    shown = round(expected, typed.decimals)
    return (abs(expected - shown) <= EXACT_REL * scale
            and abs(typed.value - shown) <= _REL_SLACK * scale)  # fmt: skip


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
    """Grade the learner's numbers against the right ones (:func:`judge` on a new
    :class:`~attnlab.grading.keys.AnswerKey`).

    Raises:
        InputError: for an infinity typed where :func:`holds_infinity` says none can be.

    Args:
        typed: the learner's numbers (:func:`~attnlab.grading.answers.parse_numbers`).
        expected: the right numbers, flattened.
        decimals: how many decimals the question asks for (0: any rounding is judged as given).
        at: the stage numbers asked for; a wrong answer there is matched against the catalogue.
        inp: the input ``at`` refers to (default: the lesson example).
        other_prompts: for a number that is not a stage (a loss, a probability), the same
            number of the other prompts: a wrong answer equal to one is the prompts swapped.
    """
    return judge(typed, AnswerKey(expected, decimals, at, inp, other_prompts))


def judge(typed: list[Typed], key: AnswerKey) -> Verdict:
    """Grade the learner's numbers against ``key``: right, imprecise or too coarse to tell from
    a catalogued mistake; else wrong, with the mistakes, slips or misread place that give them.

    Raises:
        InputError: for an infinity typed where :func:`holds_infinity` says none can be.
    """
    expected, at = list(key.expected), key.at  # a copy: a verdict never shares the key's list
    infinite = [t.text for t in typed if math.isinf(t.value)]
    if infinite and not holds_infinity(at):
        raise InputError(
            f"expected a finite number, got {infinite[0]!r} (only {MASKED_STAGE} holds -inf)",
            f"应为有限的数，收到的是 {infinite[0]!r}（只有 {MASKED_STAGE} 含 -inf）",
        )
    given = [t.value for t in typed]
    if len(typed) != len(expected):
        return Verdict(False, "count", expected, given, [], at)
    tols = [tolerance(t, e) for t, e in zip(typed, expected, strict=True)]
    # What else the numbers could be rounded from: beside other numbers rounded, even a number
    # that is the value exactly (``-1`` for -1) is what a mistake giving -0.75 rounds to.
    reads = [_rounding(t, e) for t, e in zip(typed, expected, strict=True)]
    kinds, carried = _kinds(typed, key, tols)
    if _all(kinds) == "right":  # every number as precise as asked: right, or too coarse
        verdict = Verdict(True, "right", expected, given, tols, at, carried=carried)
        return _floor(verdict, key)
    if "wrong" not in kinds and not confusable(given, reads, key.others):
        # Right as far as it goes, and no mistake or nearby number gives these numbers too.
        return Verdict(False, "imprecise", expected, given, tols, at)
    # Wrong, or too few decimals to be anything but what a mistake or a nearby number gives.
    # Right as far as it goes is no slip in the last digit; a whole number typed is that number.
    found_slips = _slips(typed, expected, tols) if "wrong" in kinds else []
    # What gives the numbers is matched against them as roundings (``reads``).
    near = _near(key, given, _exact_where_whole(typed, reads)) or _near(key, given, reads)
    found_slips += [slip for slip in near if slip not in found_slips]
    if at is None:
        return Verdict(False, "wrong", expected, given, tols, slips=tuple(found_slips))
    # Whole numbers typed name the mistakes that give exactly them, if any do.
    found = _named(key, given, _exact_where_whole(typed, reads)) or _named(key, given, reads)
    # 0 or 1 typed may still be another place's number: that index slip is the likelier one.
    guessed = set(found_slips) <= set(GUESSES)
    places = [] if found or not guessed else _misread(key, given, reads[0])
    misread = places[0] if places else None
    found_slips = _only_misread(found_slips, places)
    return Verdict(False, "wrong", expected, given, tols, at, tuple(found), misread,
                   slips=tuple(found_slips), also=tuple(places[1:]))  # fmt: skip


def _near(key: AnswerKey, given: list[float], tols: list[float]) -> list[str]:
    """The slips of the nearby numbers (:attr:`AnswerKey.confusables`) that give ``given``."""
    return [slip for slip, values in key.confusables if close(given, values, tols)]


def _only_misread(slips: list[str], places: list[Address]) -> list[str]:
    """``slips`` without 0 and 1 when another place of the stage holds the number typed."""
    return [s for s in slips if s not in GUESSES] if places else slips


def _named(key: AnswerKey, given: list[float], tols: list[float]) -> list[Mistake]:
    """The catalogue mistakes of ``key`` that give ``given`` (none when it is right there)."""
    if key.right is not None and close(given, key.right, tols):
        return []
    return [mistake for mistake, values in key.mistakes if close(given, values, tols)]


def _kinds(typed: list[Typed], key: AnswerKey, tols: list[float]) -> tuple[list[Kind], bool]:
    """Each number's kind against the exact answer, else against the hull of the exact and
    each carried one (:attr:`AnswerKey.carried`); True when only a hull made it right."""
    expected, decimals = key.expected, key.decimals
    kinds = _judge(typed, expected, tols, decimals, expected)
    if _all(kinds) == "right" or key.at is None:
        return kinds, False
    for carry in key.carried:
        if len(carry) != len(expected):
            continue
        again = _judge(typed, expected, tols, decimals, carry)
        if _all(again) == "right":
            return again, True
    return kinds, False


def _judge(
    typed: list[Typed], expected: list[float], tols: list[float], decimals: int,
    other: list[float],
) -> list[Kind]:  # fmt: skip
    return [_judge_one(*args, decimals) for args in zip(typed, expected, tols, other, strict=True)]


def _all(kinds: list[Kind]) -> Kind | None:
    return "right" if all(k == "right" for k in kinds) else None


def _rounding(typed: Typed, expected: float) -> float:
    """Everything ``typed`` may be a rounding of: half a unit of its last decimal, plus slack."""
    slack = _REL_SLACK * max(1.0, abs(expected)) if math.isfinite(expected) else 0.0
    return 0.5 * 10.0**-typed.decimals + slack


def _floor(verdict: Verdict, key: AnswerKey) -> Verdict:
    """``verdict`` (right) made ``"coarse"`` when its tolerances hold a catalogued mistake's
    numbers or a nearby number (:attr:`AnswerKey.others`) too, with the decimals needed to tell
    them apart (at least the decimals asked for). A number that is the value exactly is read as
    that value (:func:`tolerance`): ``0.4`` for 0.566/√2 is right."""
    others = key.others
    if not confusable(verdict.given, verdict.tolerance, others):
        return verdict
    need = max(needed_decimals(verdict.expected, others), key.decimals)
    return replace(verdict, correct=False, kind="coarse", needed=need, carried=False)


def _misread(key: AnswerKey, given: list[float], tol: float) -> list[Address]:
    """Other numbers of the same single-head stage equal to the one ``given`` (an index read on
    the wrong axis), the likeliest slip first (:attr:`AnswerKey.misread`)."""
    if len(given) != 1 or key.misread is None:
        return []
    table, places = key.misread
    hits = {tuple(p) for p in ((table - given[0]).abs() <= tol).nonzero().tolist()}  # [b, t, c]
    return [address for place, address in places if place in hits]


def close(given: list[float], want: list[float], tols: list[float]) -> bool:
    """True when ``given`` has ``want``'s length and each number is within its tolerance."""
    return len(given) == len(want) and all(
        g == w or abs(g - w) <= t for g, w, t in zip(given, want, tols, strict=True)
    )


def _slips(typed: list[Typed], expected: list[float], tols: list[float]) -> list[str]:
    """The slips (:mod:`attnlab.grading.slips`) seen in the numbers alone: last digit, sign,
    minus sign. A masked place (−∞) must be typed −∞; the slip is in the other numbers."""
    given = [t.value for t in typed]
    if any(math.isinf(g) != math.isinf(e) or (math.isinf(g) and g != e)
           for g, e in zip(given, expected, strict=True)):  # fmt: skip
        return []
    found = []
    units = [tol + 10.0**-t.decimals for t, tol in zip(typed, tols, strict=True)]
    if all(t.decimals >= 2 for t in typed if math.isfinite(t.value)) and close(
        given, expected, units
    ):
        found.append("last_digit")
    expected = [e if math.isfinite(e) else 0.0 for e in expected]  # −∞ matched above
    given = [g if math.isfinite(g) else 0.0 for g in given]
    nonzero = [i for i, e in enumerate(expected) if abs(e) > tols[i]]
    if nonzero and close(given, [-e for e in expected], tols):
        found.append("sign_flipped")
    elif any(expected[i] < 0 < given[i] for i in nonzero) and close(
        [abs(g) for g in given], [abs(e) for e in expected], tols
    ):
        found.append("minus_dropped")
    return found


#: Most decimals :func:`needed_decimals` will ask for.
MAX_DECIMALS = 8


def _excludes(centre: list[float], tols: list[float], other: list[float]) -> bool:
    """Whether some number of ``other`` lies outside ``centre ± tols``."""
    for c, t, o in zip(centre, tols, other, strict=True):
        if math.isinf(c) or math.isinf(o):
            if c != o:
                return True
        elif not abs(c - o) <= t:  # NaN (a mistake's 0/0) is never typed: excluded
            return True
    return False


def confusable(given: list[float], tols: list[float], mistakes: list[list[float]]) -> bool:
    """Whether ``given ± tols`` also holds the numbers of one of ``mistakes``."""
    return any(not _excludes(given, tols, m) for m in mistakes)


def needed_decimals(expected: list[float], mistakes: list[list[float]]) -> int:
    """The fewest decimals ``d`` for which ``expected`` rounded to ``d`` (± half a unit of the
    last place) excludes every one of ``mistakes``; :data:`MAX_DECIMALS` at most."""
    for d in range(MAX_DECIMALS):
        shown = [e if math.isinf(e) else round(e, d) for e in expected]
        tols = [0.5 * 10.0**-d] * len(expected)
        if not confusable(shown, tols, mistakes):
            return d
    return MAX_DECIMALS
