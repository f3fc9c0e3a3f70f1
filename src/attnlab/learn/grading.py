"""Grade a learner's numeric answer against the value the pipeline computes.

The tolerance follows the learner's own rounding: ``0.599`` is read as "0.599 ± 0.0005", so
typing three decimals of a value is right whenever those three decimals are right. An exercise
states how many decimals it asks for; fewer are accepted only when the dropped digits are zeros
(``0.8`` for ``0.800``, ``4000000`` for a count).

A wrong answer is passed to the mistakes catalogue (:mod:`attnlab.debug.catalogue`) when it provides
a ``diagnose`` function, so the learner hears which classic bug would produce their number.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from attnlab.errors import InputError
from attnlab.lesson import numbers

# Float slack on top of the learner's rounding, relative to the value.
_REL_SLACK = 1e-9
#: Longest number accepted (a float keeps seventeen significant digits).
MAX_NUMBER_CHARS = 64
_THOUSANDS = re.compile(r"^[-+]?\d{1,3}(,\d{3})+(\.\d+)?$")
_TRANSLATE = str.maketrans({"，": ",", "−": "-", "–": "-", "［": "", "］": "", "、": ","})


@dataclass(frozen=True)
class Grade:
    """The verdict on one answer.

    ``verdict`` is ``"right"``, ``"wrong"``, ``"imprecise"`` (too few decimals to judge) or
    ``"count"`` (not as many numbers as asked for). ``expected`` is the computed value,
    flattened; ``diagnosis`` is a one-line explanation from the mistakes catalogue, if any.
    """

    correct: bool
    verdict: str
    expected: list[float]
    given: list[float]
    diagnosis: str | None = None


def _flatten(value: numbers.Value) -> list[float]:
    if isinstance(value, list):
        return [x for item in value for x in _flatten(item)]
    return [float(value)]


def _tokens(text: str) -> list[str]:
    cleaned = text.translate(_TRANSLATE).strip()
    cleaned = re.sub(r"(?i)(倍|times|x|×)$", "", cleaned).strip()
    cleaned = cleaned.strip("[]() ")
    if _THOUSANDS.match(cleaned):
        return [cleaned.replace(",", "")]
    return [t for t in re.split(r"[,;\s]+", cleaned) if t]


def parse_numbers(text: str) -> list[Decimal]:
    """The numbers in a learner's answer (``"0.599"``, ``"[0.599, 0.401]"``, ``"4,000,000"``).

    Raises:
        InputError: when a part is not a number, naming the part.
    """
    tokens = _tokens(text)
    if not tokens:
        raise InputError("expected a number, got an empty answer")
    return [_number(token) for token in tokens]


def _number(token: str) -> Decimal:
    """One number of an answer; refused unless a float64 holds it (``1e999`` does not)."""
    if len(token) > MAX_NUMBER_CHARS:
        raise InputError(
            f"expected a number of at most {MAX_NUMBER_CHARS} characters, got one of "
            f"{len(token):,} ({token[:12]!r}...)"
        )
    try:
        number = Decimal(token)
    except InvalidOperation:
        raise InputError(f"expected a number like 0.599, got {token!r}") from None
    if not number.is_finite():
        raise InputError(f"expected a finite number, got {token!r}")
    if not math.isfinite(float(number)):
        raise InputError(f"expected a number a float can hold (|x| <= 1.8e308), got {token!r}")
    return number


def _learner_decimals(number: Decimal) -> int:
    exponent = number.as_tuple().exponent
    # Clamped to float range: "0e400" has exponent 400, and 10.0**400 overflows.
    return max(-int(exponent), -308) if isinstance(exponent, int) else 0


def _judge_one(given: Decimal, expected: float, decimals: int) -> str:
    shown = _learner_decimals(given)
    slack = _REL_SLACK * max(1.0, abs(expected))
    if abs(float(given) - expected) > 0.5 * 10.0**-shown + slack:
        return "wrong"
    # Right as far as it goes; too coarse unless the digits left out are zeros (0.8 for 0.800).
    if shown < decimals and abs(expected - round(expected, shown)) > 0.5 * 10.0**-decimals:
        return "imprecise"
    return "right"


DiagnoseFn = Callable[[str, list[float], float], "str | None"]


def grade(key: str, decimals: int, text: str, diagnose: DiagnoseFn | None = None) -> Grade:
    """Grade ``text`` against the value of answer key ``key`` (see :mod:`attnlab.lesson.numbers`).

    Args:
        key: where the answer comes from, e.g. ``"weights[1,1,0]"``.
        decimals: how many decimals the exercise asks for.
        text: what the learner typed.
        diagnose: called as ``diagnose(key, given, tol)`` for a wrong answer, ``tol`` being the
            learner's rounding; returns one line or None.

    Raises:
        InputError: if ``text`` is not a list of numbers.
    """
    expected = _flatten(numbers.get(key))
    typed = parse_numbers(text)
    given = [float(n) for n in typed]
    if len(typed) != len(expected):
        return Grade(False, "count", expected, given)
    verdicts = [_judge_one(g, e, decimals) for g, e in zip(typed, expected, strict=True)]
    if all(v == "right" for v in verdicts):
        return Grade(True, "right", expected, given)
    verdict = "imprecise" if "imprecise" in verdicts else "wrong"
    why = None
    if diagnose is not None and verdict == "wrong":
        fewest = min(_learner_decimals(n) for n in typed)
        why = diagnose(key, given, 0.5 * 10.0**-fewest + 1e-6)
    return Grade(False, verdict, expected, given, why)
