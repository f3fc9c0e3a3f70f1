"""How long each kind of learner text may be, and the one check every entry point applies.

Text reaches the progress store from command-line arguments, the lines typed into the quiz, the
web forms and imported files. Each kind has one limit, here, and each of those entries, and the
store itself, checks the text with :func:`check_text`, so whatever the store holds exports and
imports again:

===============  =====  ===============================================================
kind             chars  what it is
===============  =====  ===============================================================
note             2000   a note on a section (web note box, ``attnlab notes add``)
check_answer     2000   the free-text answer to a knowledge check
exercise_answer  200    the answer to a graded exercise (a few numbers)
diagnosis        2000   the grader's reason kept with an attempt (may be empty)
profile          64     a profile name: letters, digits, ``_``, ``.``, ``-``
note_id          36     a note's id: a lowercase UUID
query            100    a search query (not stored)
reply            100    any other line typed into the quiz (``u``, ``r``, ``q``)
===============  =====  ===============================================================

Limits count characters (code points), so 2000 Chinese characters fit as well as 2000 letters.
Free text loses its surrounding blanks and may hold any character (the terminal shows control
characters escaped, :func:`attnlab.text.fmt.escape_label`); an id or a name is taken as it is
and must match its form as a whole, so ``"default\\n"`` is not ``"default"``. Every kind must
be valid Unicode that UTF-8 can encode: a lone surrogate (``"\\ud800"`` in JSON) is refused,
and ``U+DC80``-``U+DCFF``, which is how Python passes on a byte of a command-line argument or
of standard input that is not UTF-8 (``surrogateescape``), is named as that byte.

Example::

    >>> check_text("  each row sums to 1 ", "note")
    'each row sums to 1'
    >>> check_text("x" * 201, "exercise_answer")
    Traceback (most recent call last):
    ...
    attnlab.inputs.text_limits.TextError: answer: expected at most 200 characters, found 201
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from attnlab.text.errors import InputError, Text, filled, kind


@dataclass(frozen=True)
class Kind:
    """One kind of text: how messages name it, its length limits, and for an id or a name
    the form it must match as a whole (``rule`` says it in words)."""

    field: dict[str, str]
    most: int
    least: int = 1
    form: re.Pattern[str] | None = None
    rule: dict[str, str] | None = None


_ANSWER = {"zh": "回答", "en": "answer"}
KINDS: dict[str, Kind] = {
    "note": Kind({"zh": "笔记", "en": "note"}, 2000),
    "check_answer": Kind(_ANSWER, 2000),
    "exercise_answer": Kind(_ANSWER, 200),
    "diagnosis": Kind({"zh": "诊断", "en": "diagnosis"}, 2000, least=0),
    "profile": Kind(
        {"zh": "档案名", "en": "profile"}, 64, form=re.compile(r"[\w.-]+"),
        rule={"zh": "1-64 个字母、数字、“_”、“.”或“-”",
              "en": "1-64 letters, digits, '_', '.' or '-'"},
    ),
    "note_id": Kind(
        {"zh": "笔记编号", "en": "note id"}, 36,
        form=re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"),
        rule={"zh": "小写的 UUID（如 '00000000-0000-4000-8000-000000000000'）",
              "en": "a lowercase UUID such as '00000000-0000-4000-8000-000000000000'"},
    ),
    "query": Kind({"zh": "搜索", "en": "search"}, 100),
    "reply": Kind({"zh": "输入", "en": "reply"}, 100),
}  # fmt: skip
"""Every kind of learner text, by name (see the module docstring)."""

#: ``U+DC80``-``U+DCFF``: a byte that was not UTF-8, kept by Python's ``surrogateescape``.
_ESCAPED_BYTE = range(0xDC80, 0xDD00)
_SURROGATE = re.compile("[\ud800-\udfff]")

TEXT: dict[str, dict[str, str]] = {
    "en": {
        "not_text": "{field}: expected text, found {found}",
        "byte": "{field}: expected UTF-8 text, found byte 0x{byte:02x} (not UTF-8) at character "
        "{at}",
        "surrogate": "{field}: expected UTF-8 text, found a lone surrogate U+{cp:04X} at "
        "character {at}",
        "empty": "{field}: expected some text (1-{most} characters), found none",
        "long": "{field}: expected at most {most} characters, found {n}",
        "form": "{field}: expected {rule}, found {got}",
    },
    "zh": {
        "not_text": "{field}：应为文本，实际是{found}",
        "byte": "{field}：应为 UTF-8 文本，实际第 {at} 个字符处是字节 0x{byte:02x}（不是 UTF-8）",
        "surrogate": "{field}：应为 UTF-8 文本，实际第 {at} 个字符处是孤立的代理项 U+{cp:04X}",
        "empty": "{field}：应有文字（1–{most} 个字符），实际是空的",
        "long": "{field}：最多 {most} 个字符，实际有 {n} 个",
        "form": "{field}：应为{rule}，实际是 {got}",
    },
}
"""The messages of :func:`check_text`, ``TEXT[lang][key]``."""


class TextError(InputError):
    """Learner text that is not of its kind: too long, empty, not UTF-8 or of the wrong form."""


def _refuse(key: str, field: Text, **fields: object) -> TextError:
    texts = filled(TEXT, key, field=field, **fields)
    return TextError(texts["en"], texts["zh"])


def check_text(value: object, kind_name: str, field: Text | None = None) -> str:
    """``value`` if it is text of kind ``kind_name`` (a key of :data:`KINDS`), free text
    without its surrounding blanks.

    Args:
        value: the text as it arrived.
        kind_name: ``"note"``, ``"check_answer"``, ``"exercise_answer"``, ``"diagnosis"``,
            ``"profile"``, ``"note_id"``, ``"query"`` or ``"reply"``.
        field: how the message names it (an import field such as ``"notes[0].text"``);
            default: the kind's own name.

    Raises:
        TextError: one line in both languages saying what was expected and what was found:
            not a string, a byte that is not UTF-8 or a lone surrogate (with its position),
            empty, longer than the kind's limit, or an id or name not of its form.
    """
    spec = KINDS[kind_name]
    name: Text = spec.field if field is None else field
    if not isinstance(value, str):
        raise _refuse("not_text", name, found=kind(value))
    bad = _SURROGATE.search(value)
    if bad is not None:
        cp, at = ord(bad[0]), bad.start() + 1
        if cp in _ESCAPED_BYTE:
            raise _refuse("byte", name, byte=cp - 0xDC00, at=at)
        raise _refuse("surrogate", name, cp=cp, at=at)
    text = value if spec.form else value.strip()
    if len(text) < spec.least:
        raise _refuse("empty", name, most=spec.most)
    if spec.form is not None and spec.rule is not None and not spec.form.fullmatch(text):
        shown = repr(text) if len(text) <= 60 else repr(text[:57]) + "..."
        raise _refuse("form", name, rule=spec.rule, got=shown)
    if len(text) > spec.most:
        raise _refuse("long", name, most=spec.most, n=len(text))
    return text


# How a learner's typed numbers are read (graded answers, practice, `attnlab check`, the
# explorer's cells; the explorer's script, app.js, applies the same rule before it checks a cell).
#: Full-width forms a Chinese input method types (``１．５``, ``－０.４``, ``ｅ``): U+FF01-FF5E.
_FULL_WIDTH = re.compile("[\uff01-\uff5e]+")
#: An ideographic full stop between digits is a decimal point (``0。40``); one at the end ends
#: the sentence (``0.40。``).
_STOP_POINT = re.compile(r"(?<=\d)。(?=\d)")


def ascii_forms(text: str) -> str:
    """``text`` with full-width letters, digits and signs as ASCII (NFKC: ``１．５`` is ``1.5``),
    ``。`` between digits as a decimal point and a closing ``。`` dropped.

    Example::

        >>> ascii_forms("１．５"), ascii_forms("0。40"), ascii_forms("0.40。")
        ('1.5', '0.40', '0.40')
    """
    text = _FULL_WIDTH.sub(lambda m: unicodedata.normalize("NFKC", m[0]), text)
    text = _STOP_POINT.sub(".", text)
    return text.rstrip().removesuffix("。")
