"""Why a verdict is what it is, in one line of the learner's language: the grader's reason that
``attnlab check``, the quiz and the web exercises all show.

Example::

    >>> from attnlab.grading.answers import check_answer
    >>> explain(check_answer("4c", "0"), "en")
    'Too coarse: give at least 2 decimals (with fewer, a common mistake fits too)'
"""

from __future__ import annotations

import re

from attnlab.grading.grade import Verdict
from attnlab.grading.rounding import CARRIED
from attnlab.grading.slips import text as slip_text
from attnlab.text.i18n import pick


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
    if verdict.kind == "imprecise":
        return pick(lang, f"方向对，但请至少保留 {decimals} 位小数",
                    f"Right as far as it goes; give at least {_decimals(decimals)}")  # fmt: skip
    if verdict.carried:
        return pick(lang, f"正确（中间结果按 {CARRIED} 位小数）；保留 {CARRIED + 1} 位可完全吻合",
                    f"Right, given intermediates rounded to {CARRIED} decimals; carry "
                    f"{CARRIED + 1} to match exactly")  # fmt: skip
    return _wrong(verdict, lang)


def _wrong(verdict: Verdict, lang: str) -> str | None:
    parts = []
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
    parts += [words for s in verdict.slips if (words := slip_text(s, lang))]
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
