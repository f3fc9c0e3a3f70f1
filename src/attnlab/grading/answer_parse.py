"""Read the numbers a learner typed, keeping how many decimals each was written with.

The one parser of typed answers: ``attnlab check`` (``--values`` and answer files), the quiz and
the web exercises all read numbers here, so ``"[0.599, 0.401]"`` means the same everywhere.
Accepted: spaces, commas or semicolons between numbers (Chinese ``，``/``、``/``；`` too),
brackets anywhere, a Unicode minus, ``4,000,000`` as one number, a trailing ``x``/``倍`` after
a single number (``4 倍``), and ``-inf``/``−∞`` where a masked score can be the answer.

Example::

    >>> [(n.value, n.decimals) for n in parse_numbers("[0.599，−0.4]")]
    [(0.599, 3), (-0.4, 1)]
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from attnlab.text.errors import InputError

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

    def __init__(self, en: str, zh: str) -> None:
        super().__init__(en)
        self.texts = {"en": en, "zh": zh}

    def localized(self, lang: str) -> str:
        """The message in ``lang`` (``"zh"`` or ``"en"``)."""
        return self.texts.get(lang, self.texts["en"])


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
    cleaned = text.translate(_TRANSLATE).strip()
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
    text = token.translate(_TRANSLATE).strip()
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


def file_value(value: Any, where: str) -> Typed:
    """One number of an answer file's list: a string is read as typed, a JSON/TOML number as
    written (``0.426`` → 3 decimals, ``1`` → 0)."""
    if isinstance(value, str):
        return read_number(value.strip(), where, infinity=True)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        found = f"{type(value).__name__} {value!r:.20}"
        raise AnswerError(
            f"{where}: expected numbers, got {found}", f"{where}：应为数字，收到的是 {found}"
        )
    try:
        number = float(value)
    except OverflowError:
        number = math.inf
    if not math.isfinite(number):
        raise AnswerError(
            f"{where}: expected numbers a float can hold (|x| <= 1.8e308), got {number}; "
            'write "-inf" (a string) for a masked score',
            f"{where}：应为浮点数能表示的数（|x| <= 1.8e308），收到的是 {number}；"
            '被掩码的分数请写成字符串 "-inf"',
        )
    written = str(value) if isinstance(value, int) else repr(number)
    return read_number(written if len(written) <= MAX_NUMBER_CHARS else repr(number), where)


def _decimals(number: Decimal) -> int:
    """Decimals shown: ``0.599`` → 3, ``4e6`` → -6; clamped to float range (``0e400``)."""
    exponent = number.as_tuple().exponent
    return max(-int(exponent), -308) if isinstance(exponent, int) else 0


def _prefix(where: str) -> str:
    return f"{where}: " if where else ""
