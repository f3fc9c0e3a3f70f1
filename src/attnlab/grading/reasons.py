"""A verdict in words, in one line of the viewer's language: the grader's reason that
``attnlab check``, the quiz and the web exercises all show.

:func:`present` turns a stored verdict (:meth:`attnlab.grading.answers.Submission.data`) into
one line wherever it is shown (the web page, the quiz, ``progress``), so an answer given on a
Chinese page reads in English on an English one. :func:`say` is its wording of any graded
verdict, which ``attnlab check`` uses too (on :func:`attnlab.grading.answers.verdict_data`), so
the same numbers read the same in every front end; :func:`explain` is the reason in it.

Example::

    >>> from attnlab.grading.answers import check_answer, submit
    >>> explain(check_answer("4c", "0"), "en")
    'Too coarse: give at least 2 decimals (with fewer, a common mistake fits too)'
    >>> present("4c", "0", submit("4c", "0").data(), "en")
    '↻ Answer again · Too coarse: give at least 2 decimals (with fewer, a common mistake fits too)'
"""

from __future__ import annotations

import json
import re
from typing import Any

from attnlab.content import knowledge
from attnlab.grading.answers import submit
from attnlab.grading.grade import Verdict
from attnlab.grading.keys import Address
from attnlab.grading.rounding import CARRIED
from attnlab.grading.slips import IN_THE_NUMBERS
from attnlab.grading.slips import text as slip_text
from attnlab.mistakes import catalogue
from attnlab.text import fmt
from attnlab.text.i18n import error_message, pick


def _decimals(n: int | None) -> str:
    """``1 decimal``, ``2 decimals``."""
    return f"{n} decimal" + ("" if n == 1 else "s")


_DECIMAL_COMMA = re.compile(r"(?<![\d,])(\d+),(\d+)(?![\d,])")


def comma_hint(text: str) -> str | None:
    """``"0,6 → 0.6"`` when ``text`` holds a number written with a decimal comma (one that
    cannot be a thousands separator), else None."""
    if "." in text:
        return None
    for found in _DECIMAL_COMMA.finditer(text):
        if found[1] == "0" or len(found[2]) != 3:  # 1,000 may be a thousand; 0,426 may not
            return f"{found[0]} → {found[1]}.{found[2]}"
    return None


def explain(verdict: Verdict, lang: str, decimals: int = 0, text: str = "") -> str | None:
    """One line saying why ``verdict`` is not plainly right, or None when there is nothing to
    add (right, or wrong with no named cause).

    Args:
        verdict: from :func:`attnlab.grading.grade.grade`.
        lang: ``"zh"`` or ``"en"``.
        decimals: the decimals the question asks for (named for an ``"imprecise"`` answer).
        text: what the learner typed (a decimal comma is pointed out).
    """
    if verdict.kind == "count":
        n, got = len(verdict.expected), len(verdict.given)
        hint = comma_hint(text)
        extra = pick(lang, f"；小数点用“.”：{hint}", f"; decimal point: {hint}") if hint else ""
        return pick(lang, f"需要 {n} 个数，你给了 {got} 个{extra}",
                    f"Needs {n} numbers, got {got}{extra}")  # fmt: skip
    if verdict.kind == "coarse":
        d = verdict.needed
        return pick(lang, f"太粗略：请至少保留 {d} 位小数（位数更少时，常见错误的数也符合）",
                    f"Too coarse: give at least {_decimals(d)} (with fewer, a common mistake "
                    "fits too)")  # fmt: skip
    if verdict.kind == "imprecise" and decimals <= 0:  # a whole number, written 2e7
        return pick(lang, "方向对，但请写出完整的整数（每一位都写出来）",
                    "Right as far as it goes; write the whole number out, every digit")  # fmt: skip
    if verdict.kind == "imprecise":
        return pick(lang, f"方向对，但请至少保留 {decimals} 位小数",
                    f"Right as far as it goes; give at least {_decimals(decimals)}")  # fmt: skip
    if verdict.carried:
        return pick(lang, f"正确（中间结果按 {CARRIED} 位小数）；保留 {CARRIED + 1} 位可完全吻合",
                    f"Right, given intermediates rounded to {CARRIED} decimals; carry "
                    f"{CARRIED + 1} to match exactly")  # fmt: skip
    return _wrong(verdict, lang)


def _wrong(verdict: Verdict, lang: str) -> str | None:
    # A slip the numbers alone show comes before what needs another computation.
    first = [s for s in verdict.slips if s in IN_THE_NUMBERS]
    parts = [words for s in first if (words := slip_text(s, lang))]
    if verdict.mistakes:
        # Each mistake names the section that teaches it (the catalogue's ``section``).
        names = pick(lang, "；", "; ").join(
            pick(lang, f"{m.title[lang]}（重读第 {m.section} 节）",
                 f"{m.title[lang]} (reread section {m.section})")
            for m in verdict.mistakes
        )  # fmt: skip
        one = len(verdict.mistakes) == 1
        who_zh = "这个错误" if one else "以下每个错误都"
        who_en = "this mistake" if one else "each of these mistakes"
        parts.append(pick(lang, f"这正是{who_zh}会算出的数：{names}",
                          f"That is the number {who_en} gives: {names}"))  # fmt: skip
    parts += [words for s in verdict.slips if s not in first and (words := slip_text(s, lang))]
    if verdict.misread is not None:
        where = verdict.misread.label()
        also = ", ".join(a.label() for a in verdict.also)
        also_zh = f"（也等于 {'、'.join(a.label() for a in verdict.also)}）" if also else ""
        also_en = f" (it also equals {also})" if also else ""
        parts.append(pick(lang, f"这是 {where} 的值{also_zh}：检查每个下标对应哪个轴（第 9 节）",
                          f"That is the value of {where}{also_en}: check which axis each index "
                          "picks (section 9)"))  # fmt: skip
    if not parts:
        return None
    return pick(lang, "；或者：", "; or: ").join(parts)


#: The mark each kind of verdict starts with (its words follow it, so no kind is told by colour
#: alone): right, wrong, asked again for a clearer answer (count, coarse, imprecise), unreadable.
MARKS = {"right": "✓", "wrong": "✗", "again": "↻", "unreadable": "⚠"}


def tone(kind: str) -> str:
    """The key of :data:`MARKS` (and the page's CSS class) for a verdict kind."""
    return kind if kind in ("right", "wrong", "unreadable") else "again"


def _verdict(data: dict[str, Any]) -> Verdict:
    """A :class:`Verdict` standing for stored data, enough for :func:`explain`."""
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
    why = explain(_verdict(data), lang, decimals, text)
    if data["kind"] == "right":
        aside = pick(lang, f"（{why}）", f" ({why})") if why else ""
        return pick(lang, "✓ 正确：", "✓ Right: ") + answer + aside
    if data["kind"] == "wrong":
        return pick(lang, "✗ 还不对", "✗ Not yet") + (" · " + why if why else "")
    return pick(lang, "↻ 请再答一次", "↻ Answer again") + (" · " + why if why else "")


def _unreadable(exercise_id: str, text: str, lang: str) -> str:
    found = submit(exercise_id, text).error
    return error_message(found, lang) if found is not None else ""
