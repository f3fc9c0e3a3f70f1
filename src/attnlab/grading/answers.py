"""The one answer service: read what a learner typed, and grade an exercise answer into data.

:func:`submit` grades what a learner typed for an exercise and returns a :class:`Submission`
whose :meth:`~Submission.data` is what the store keeps: the verdict's kind, the catalogue
mistakes' names, the slips, the misread place, the decimals needed; never words
(:func:`attnlab.grading.reasons.present` words it in the viewer's language). The web, the quiz
and the notebook all submit here, with one policy: every answer is saved; only ``right`` and
``wrong`` count as a try, the others (``unreadable``, ``count``, ``coarse``, ``imprecise``)
ask again.

:func:`parse_numbers` is the one reader of typed numbers: ``attnlab check`` (``--values`` and
answer files), the quiz, practice and the web exercises all read them here, so
``"[0.599, 0.401]"`` means the same everywhere. Accepted: spaces, commas or semicolons between
numbers (Chinese ``，``/``、``/``；`` too), brackets anywhere, a Unicode minus, ``4,000,000`` as
one number, a trailing ``x``/``倍`` after a single number (``4 倍``), and ``-inf``/``−∞`` where a
masked score can be the answer. Each number keeps how many decimals it was written with.

Example::

    >>> s = submit("4c", "0")
    >>> s.data()["kind"], s.graded
    ('coarse', None)
    >>> [(n.value, n.decimals) for n in parse_numbers("[0.599，−0.4]")]
    [(0.599, 3), (-0.4, 1)]
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from attnlab.grading import grade, keys
from attnlab.grading.grade import Verdict
from attnlab.grading.keys import Address
from attnlab.inputs.text_limits import ascii_forms, check_text
from attnlab.text.errors import InputError

#: Verdict kinds that count as a try (the rest ask again).
GRADED = ("right", "wrong")


@dataclass(frozen=True)
class Submission:
    """One answer to one exercise: the grader's :class:`Verdict`, or the parser's error."""

    exercise: str
    text: str
    verdict: Verdict | None
    error: InputError | None = None
    section: int = 0  #: the section the exercise belongs to

    @property
    def kind(self) -> str:
        return "unreadable" if self.verdict is None else self.verdict.kind

    @property
    def graded(self) -> bool | None:
        """True/False for a right/wrong answer, None for one that asks again."""
        return self.verdict.correct if self.verdict and self.kind in GRADED else None

    def data(self) -> dict[str, Any]:
        """What is stored: the verdict as data, no words (:func:`present` words it)."""
        return {"kind": "unreadable"} if self.verdict is None else verdict_data(self.verdict)


def verdict_data(v: Verdict) -> dict[str, Any]:
    """A verdict as data: its kind, the catalogue mistakes' names, the slips, the misread place,
    the decimals needed, and how many numbers were asked for and given; never words."""
    return {
        "kind": v.kind,
        "mistakes": [m.name for m in v.mistakes],
        "slips": list(v.slips),
        "misread": None if v.misread is None else _address(v.misread),
        "also": [_address(a) for a in v.also],
        "needed": v.needed,
        "carried": v.carried,
        "expected": len(v.expected),
        "given": len(v.given),
    }


class UnknownExercise(KeyError):
    """An exercise id that names no exercise of the lesson."""


def submit(exercise_id: str, text: str) -> Submission:
    """Grade ``text`` as the answer to ``exercise_id``: the one place an answer's exercise id and
    text are checked before it is graded. An answer that cannot be read as numbers is a
    :class:`Submission` with its error (it asks again), not an exception.

    Raises:
        UnknownExercise: for an exercise id that does not exist.
        attnlab.inputs.text_limits.TextError: for text that is no answer at all (too long,
            empty, not text); nothing of it should be kept.
    """
    try:
        key = keys.exercise_key(exercise_id)  # the exercise's answer key, built on first use
    except KeyError:
        raise UnknownExercise(exercise_id) from None
    text = check_text(text, "exercise_answer")
    try:
        return Submission(exercise_id, text, _judge(key, text), section=key.section)
    except InputError as exc:
        return Submission(exercise_id, text, None, exc, key.section)


def _address(at: Address) -> dict[str, Any]:
    return {"stage": at.stage, "prompt": at.prompt, "head": at.head, "row": at.row,
            "column": at.column}  # fmt: skip


def check_answer(exercise_id: str, text: str) -> grade.Verdict:
    """Grade a learner's answer to ``exercise_id`` against its answer key
    (:func:`attnlab.grading.keys.exercise_key`); a wrong answer about a stage of the lesson is
    matched against the mistakes catalogue (:func:`attnlab.grading.reasons.explain` says which
    mistake in one line).

    Raises:
        KeyError: for an exercise id that does not exist.
        attnlab.text.errors.InputError: if ``text`` is not a list of numbers.
    """
    return _judge(keys.exercise_key(exercise_id), text)


def _judge(key: keys.AnswerKey, text: str) -> grade.Verdict:
    typed = parse_numbers(text, infinity=grade.holds_infinity(key.at))
    verdict = grade.judge(typed, key)
    one = _ONE_GROUP.fullmatch(text.strip())
    if one is None or verdict.kind == "right":
        return verdict
    # "1,051": a thousands separator (1051) or a decimal comma (1.051)? When the decimal reading
    # would be graded otherwise, ask which was meant, with both readings spelled out.
    decimal = f"{one[1]}.{one[2]}"
    if grade.judge(parse_numbers(decimal), key).kind != verdict.kind:
        thousands = f"{one[1]}{one[2]}"
        raise AnswerError(
            f"{text.strip()} reads as {thousands} (a thousands separator); for a decimal "
            f"comma write {decimal}",
            f"{text.strip()} 会被读作 {thousands}（千位分隔符）；若是小数，请写成 {decimal}",
        )
    return verdict


#: One number with one comma before three digits: ``1,051`` (1051, or 1.051 with a decimal comma).
_ONE_GROUP = re.compile(r"([-+]?[1-9]\d{0,2}),(\d{3})")


#: Longest number accepted as written (seventeen significant digits is all a float keeps).
MAX_NUMBER_CHARS = 64
#: Most numbers in one answer: a whole table of a stage by hand is a few dozen; a longer one
#: is refused as soon as it is counted, before the numbers are read.
MAX_ANSWER_NUMBERS = 10_000
_TOKEN = re.compile(r"[^,;\s]+")
_NUMBER = re.compile(r"[-+]?(?:inf|nan|\d+\.?\d*(?:e[-+]?\d+)?|\.\d+(?:e[-+]?\d+)?)", re.I)
_THOUSANDS = re.compile(r"^[-+]?[1-9]\d{0,2}(,\d{3})+(\.\d+)?$")
_TIMES = re.compile(r"(?i)(倍|times|x|×)$")
_ONE_TOKEN = re.compile(r"[^,;\s]+")
_TRANSLATE = str.maketrans(
    {"，": ",", "、": ",", "；": ";", "−": "-", "–": "-", "∞": "inf",
     "［": " ", "］": " ", "[": " ", "]": " ", "(": " ", ")": " ", "（": " ", "）": " "}
)  # fmt: skip


class AnswerError(InputError):
    """A typed answer that is not a list of numbers, worded in both languages
    (:func:`attnlab.text.i18n.error_message` picks one; ``str()`` is the English)."""


@dataclass(frozen=True)
class Typed:
    """One number as the learner wrote it: its value and how many decimals it shows.

    ``decimals`` is the learner's rounding: ``"0.599"`` → 3, ``"4000000"`` → 0, ``"4e6"`` → -6.
    """

    text: str
    value: float
    decimals: int


def parse_numbers(text: str, where: str = "", infinity: bool = False) -> list[Typed]:
    """The numbers in a learner's answer (``"0.6 0.4"``, ``"[0.599, 0.401]"``, ``"4,000,000"``).

    Args:
        text: what the learner typed.
        where: the field named in errors (``"--values"``), or ``""``.
        infinity: whether ``-inf``/``−∞`` is a possible answer (a masked score).

    Raises:
        InputError: for an empty answer, a part that is not a number (naming the part) or
            more than :data:`MAX_ANSWER_NUMBERS` numbers.
    """
    cleaned = ascii_forms(text).translate(_TRANSLATE).strip()
    times = _TIMES.sub("", cleaned).strip()
    if _ONE_TOKEN.fullmatch(times):  # "4x", "4 倍": a ratio is one number; "1 0x" is no ratio
        cleaned = times
    if _THOUSANDS.match(cleaned):
        cleaned = cleaned.replace(",", "")
    tokens: list[str] = []
    for match in _TOKEN.finditer(cleaned):  # counted as found: a huge answer stops early
        check_count(len(tokens) + 1, where)
        tokens.append(match[0])
    if not tokens:
        at = _prefix(where)
        raise AnswerError(
            f"{at}expected a number, got an empty answer", f"{at}需要一个数，答案是空的"
        )
    return [read_number(token, where, infinity) for token in tokens]


def check_count(n: int, where: str = "") -> None:
    """Refuse an answer of ``n`` numbers when ``n`` is over :data:`MAX_ANSWER_NUMBERS`."""
    if n > MAX_ANSWER_NUMBERS:
        at = _prefix(where)
        raise AnswerError(
            f"{at}expected at most {MAX_ANSWER_NUMBERS:,} numbers, got more",
            f"{at}最多 {MAX_ANSWER_NUMBERS:,} 个数，实际更多",
        )


def read_number(token: str, where: str = "", infinity: bool = False) -> Typed:
    """One number; refused unless a float64 holds it (``1e999`` and 400 digits do not).

    Raises:
        InputError: for NaN, an infinity where none is allowed, an overflow or more than
            :data:`MAX_NUMBER_CHARS` characters, naming ``where``.
    """
    at = _prefix(where)
    if len(token) > MAX_NUMBER_CHARS:
        raise AnswerError(
            f"{at}expected a number of at most {MAX_NUMBER_CHARS} characters, got one of "
            f"{len(token):,} ({token[:12]!r}...)",
            f"{at}一个数最多 {MAX_NUMBER_CHARS} 个字符，这个有 {len(token):,} 个"
            f"（{token[:12]!r}...）",
        )
    text = ascii_forms(token).translate(_TRANSLATE).strip()
    if not _NUMBER.fullmatch(text):
        example = "0.599 (or -inf)" if infinity else "0.599"
        raise AnswerError(
            f"{at}expected a number like {example}, got {token!r}",
            f"{at}需要像 0.599{'（或 -inf）' if infinity else ''} 这样的数，收到的是 {token!r}",
        )
    value = float(text)
    if math.isnan(value):
        raise AnswerError(
            f"{at}expected a number, got {token!r} (NaN is never an answer)",
            f"{at}需要一个数，收到的是 {token!r}（NaN 不会是答案）",
        )
    if "inf" in text.lower():
        if not infinity:
            raise AnswerError(
                f"{at}expected a finite number, got {token!r}",
                f"{at}需要一个有限的数，收到的是 {token!r}",
            )
        return Typed(text, value, 0)
    if math.isinf(value):
        hint = "; write -inf for a masked score" if infinity else ""
        raise AnswerError(
            f"{at}expected a number a float can hold (|x| <= 1.8e308), got {token!r}{hint}",
            f"{at}需要浮点数能表示的数（|x| <= 1.8e308），收到的是 {token!r}"
            + ("；被掩码的分数写 -inf" if infinity else ""),
        )
    return Typed(text, value, _decimals(Decimal(text)))


def _decimals(number: Decimal) -> int:
    """Decimals shown: ``0.599`` → 3, ``4e6`` → -6; clamped to float range (``0e400``)."""
    exponent = number.as_tuple().exponent
    return max(-int(exponent), -308) if isinstance(exponent, int) else 0


def _prefix(where: str) -> str:
    return f"{where}: " if where else ""
