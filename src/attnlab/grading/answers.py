"""The one answer service: grade an exercise answer into data, and say it in a language.

:func:`submit` grades what a learner typed for an exercise and returns a :class:`Submission`
whose :meth:`~Submission.data` is what the store keeps: the verdict's kind, the catalogue
mistakes' names, the slips, the misread place, the decimals needed; never words.
:func:`present` turns that data into one line in the viewer's language, wherever it is shown
(the web page, the quiz, ``progress``), so an answer given on a Chinese page reads in English on
an English one. :func:`say` is its wording of any graded verdict, which ``attnlab check`` uses
too (on :func:`verdict_data`), so the same numbers read the same in every front end. The web,
the quiz and the notebook all submit here, with one policy: every answer is saved; only
``right`` and ``wrong`` count as a try, the others (``unreadable``, ``count``, ``coarse``,
``imprecise``) ask again.

Example::

    >>> s = submit("4c", "0")
    >>> s.data()["kind"], s.graded
    ('coarse', None)
    >>> present("4c", "0", s.data(), "en")
    '↻ Answer again · Too coarse: give at least 2 decimals (with fewer, a common mistake fits too)'
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from attnlab.content import knowledge
from attnlab.grading import grade, keys, reasons
from attnlab.grading.answer_parse import parse_numbers
from attnlab.grading.grade import Verdict
from attnlab.grading.keys import Address
from attnlab.inputs.text_limits import check_text
from attnlab.mistakes import catalogue
from attnlab.text import fmt
from attnlab.text.errors import InputError
from attnlab.text.i18n import error_message, pick

#: Verdict kinds that count as a try (the rest ask again).
GRADED = ("right", "wrong")
#: The mark each kind of verdict starts with (its words follow it, so no kind is told by colour
#: alone): right, wrong, asked again for a clearer answer (count, coarse, imprecise), unreadable.
MARKS = {"right": "✓", "wrong": "✗", "again": "↻", "unreadable": "⚠"}


def tone(kind: str) -> str:
    """The key of :data:`MARKS` (and the page's CSS class) for a verdict kind."""
    return kind if kind in ("right", "wrong", "unreadable") else "again"


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


def _verdict(data: dict[str, Any]) -> Verdict:
    """A :class:`Verdict` standing for stored data, enough for :func:`reasons.explain`."""
    misread = data.get("misread")
    return Verdict(
        correct=data["kind"] == "right",
        kind=data["kind"],
        expected=[0.0] * int(data.get("expected", 0)),
        given=[0.0] * int(data.get("given", 0)),
        tolerance=[],
        mistakes=tuple(_mistakes(data.get("mistakes", []))),
        misread=Address(**misread) if isinstance(misread, dict) else None,
        also=tuple(Address(**a) for a in data.get("also", []) if isinstance(a, dict)),
        needed=data.get("needed"),
        carried=bool(data.get("carried")),
        slips=tuple(data.get("slips", [])),
    )


def _mistakes(names: list[str]) -> list[catalogue.Mistake]:
    found = []
    for name in names:
        try:
            found.append(catalogue.get(name))
        except KeyError:  # a mistake since renamed: its words are gone, the rest stays
            continue
    return found


def loads(stored: str | None, exercise_id: str, text: str) -> dict[str, Any]:
    """The verdict data kept with an attempt; an attempt saved before verdicts were kept as
    data (or with none) is graded again from its answer."""
    if stored:
        try:
            data = json.loads(stored)
        except ValueError:
            data = None
        if isinstance(data, dict) and isinstance(data.get("kind"), str):
            return data
    return submit(exercise_id, text).data()


def present(exercise_id: str, text: str, data: dict[str, Any], lang: str) -> str:
    """One line for the learner in ``lang`` that starts with its kind's mark (:data:`MARKS`):
    ✓ with the answer, ✗ or ↻ with the reason, ⚠ with what could not be read."""
    ex = knowledge.exercise(exercise_id, lang)
    if data["kind"] == "unreadable":
        return pick(lang, "⚠ 无法读取 · ", "⚠ Could not read it · ") + _unreadable(
            ex.id, text, lang
        )
    return say(data, lang, fmt.answer(ex.expected, ex.decimals), ex.decimals, text)


def say(data: dict[str, Any], lang: str, answer: str, decimals: int = 0, text: str = "") -> str:
    """A graded verdict's data (:func:`verdict_data`) in ``lang``: ``✓ Right: answer`` with any
    aside, or ``✗ Not yet`` with the reason (:func:`attnlab.grading.reasons.explain`).

    Args:
        data: a verdict as data, of any kind but ``"unreadable"``.
        answer: the right answer as it is shown beside ✓.
        decimals: the decimals the question asks for.
        text: what the learner typed (a decimal comma in it is pointed out).
    """
    why = reasons.explain(_verdict(data), lang, decimals, text)
    if data["kind"] == "right":
        aside = pick(lang, f"（{why}）", f" ({why})") if why else ""
        return pick(lang, "✓ 正确：", "✓ Right: ") + answer + aside
    if data["kind"] == "wrong":
        return pick(lang, "✗ 还不对", "✗ Not yet") + (" · " + why if why else "")
    return pick(lang, "↻ 请再答一次", "↻ Answer again") + (" · " + why if why else "")


def _unreadable(exercise_id: str, text: str, lang: str) -> str:
    found = submit(exercise_id, text).error
    return error_message(found, lang) if found is not None else ""


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
    return grade.judge(typed, key)
