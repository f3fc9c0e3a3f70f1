"""Errors a learner can cause: the front ends print them as one line, never a traceback.

A message names what was expected and what was found, in Chinese and English: ``str(error)``
is the English line, ``error.localized(lang)`` (what :func:`attnlab.text.i18n.error_message` calls)
the line in the command's or page's language. Input-file messages are written once, in
:data:`TEXT` (the ``TABLE[lang][key]`` shape of :mod:`attnlab.text.i18n`), and raised with
:func:`input_error`; shapes in them are written by :func:`shape_text` (``[2, 2, 3]``).

Example::

    >>> err = input_error("not_number", field="x[0][1][2]", found=kind("abc"))
    >>> str(err)
    "x[0][1][2]: expected a number but found a string ('abc')"
    >>> err.localized("zh")
    "x[0][1][2]：应为数字，实际是字符串（'abc'）"
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

Text = str | dict[str, str]
"""A value shown in a message: the same in both languages, or ``{"zh": ..., "en": ...}``."""


class InputError(ValueError):
    """A learner's input (file, option, answer) is not what was expected.

    Args:
        en: the one-line message in English (``str(error)``).
        zh: the same message in Chinese (default: the English one).
    """

    def __init__(self, en: str, zh: str | None = None) -> None:
        super().__init__(en)
        self.texts = {"en": en, "zh": en if zh is None else zh}

    def localized(self, lang: str) -> str:
        """The message in ``lang`` (``"zh"`` or ``"en"``)."""
        return self.texts.get(lang, self.texts["en"])


def in_lang(value: Text, lang: str) -> str:
    """``value`` in ``lang``: a ``{"zh", "en"}`` text picks, anything else is shown as it is."""
    return value[lang] if isinstance(value, dict) else str(value)


def filled(table: dict[str, dict[str, str]], key: str, /, **fields: Any) -> dict[str, str]:
    """``table[lang][key]`` with ``fields`` filled in, for each language (a field that is a
    ``{"zh", "en"}`` text gives each language its own)."""
    return {
        lang: table[lang][key].format(
            **{k: v[lang] if isinstance(v, dict) else v for k, v in fields.items()}
        )
        for lang in table
    }


def input_error(key: str, cls: type[InputError] = InputError, /, **fields: Any) -> InputError:
    """The error :data:`TEXT` names by ``key``, with ``fields`` filled in, in both languages."""
    texts = filled(TEXT, key, **fields)
    return cls(texts["en"], texts["zh"])


def kind(value: Any) -> Text:
    """What a JSON/TOML value is, for "found ...": ``a string ('abc')``, ``a list``, ..."""
    if isinstance(value, bool):
        return {"zh": "布尔值", "en": "a boolean"}
    if isinstance(value, str):
        return {"zh": f"字符串（{value[:20]!r}）", "en": f"a string ({value[:20]!r})"}
    if value is None:
        return "null"
    if isinstance(value, dict):
        return {"zh": "对象", "en": "an object"}
    if isinstance(value, list):
        return {"zh": "列表", "en": "a list"}
    return type(value).__name__


def shape_text(shape: Iterable[int], compact: bool = False) -> str:
    """``[2, 2, 4]``, or the lesson's compact ``[2,2,4]`` with ``compact``."""
    return "[" + ("," if compact else ", ").join(str(int(s)) for s in shape) + "]"


TEXT: dict[str, dict[str, str]] = {
    "en": {
        "not_number": "{field}: expected a number but found {found}",
        "too_big_int": "{field}: expected a number a float can hold (|x| <= 1.8e308) but found "
        "an integer of about {digits} digits",
        "nan": "{field}: expected a finite number but found nan",
        "inf": "{field}: expected a finite number but found {value} (a number past ±1.8e308 "
        "reads as inf)",
        "not_list": "{field}: expected a list ({ndim}-deep) but found {found}",
        "empty_list": "{field}: expected a non-empty list but found []",
        "ragged": "{field}: ragged nested lists: {field}[{i}] has {n} entries but {field}[0] "
        "has {first}",
        "too_many": "input: more than {limit:,} numbers in total; the limit keeps the lab "
        "responsive",
        "not_object": "--input: expected an object with keys x, w_q, w_k, w_v, found {found}",
        "missing": "{key}: missing (expected {shape} numbers)",
        "rows": "{name}: expected {C} rows (C from x) but found {n}",
        "columns": "{name}: expected {cols} columns{why} but found {n}",
        "heads_positive": "num_heads: expected a positive integer but found {found} {value}",
        "heads_divisor": "num_heads: expected a divisor of C={C} but found {n}",
        "token_rows": "tokens: expected {B} rows (B from x) but found {found}",
        "token_row": "tokens[{b}]: expected {T} labels (T from x) but found {found}",
        "token_label": "tokens[{b}][{t}]: expected a string but found {found}",
        "w_o_alone": "w_o: given without num_heads; add num_heads (1 or more)",
        "vocab_rows": "w_vocab: expected {d} rows (the output width: {why}) but found {n}",
        "display": "x: {axis}={size} exceeds the display limit {axis} <= {limit} for {what}; "
        "use --format json for large inputs",
        "items": "{what}: expected at most {limit:,} values, lists and tables but found about "
        "{n:,}; the limit keeps the lab within 2 GiB and a few seconds",
        "json": "{what} is not valid JSON: {msg} (line {line}, column {col})",
        "toml": "{what} is not valid TOML: {msg}",
        "deep": "{what}: expected lists nested a few levels deep (x is [B][T][C]) but found "
        "nesting deeper than the parser can follow",
        "dup_key": "{what}: expected each key once in an object, found {key} twice",
        "long_number": "{what}: expected numbers a float can hold (|x| <= 1.8e308) but found "
        "one too long to read ({msg})",
        "no_file": "{what}: file not found: {path}",
        "is_dir": "{what}: expected a file but {path} is a directory",
        "not_regular": "{what}: expected a regular file but {path} is a device or pipe",
        "suffix": "{what}: expected a {names} file, found {name!r}",
        "unreadable": "{what}: cannot read {path}: {why}",
        "too_large": "{what}: {path} is larger than {mib:g} MiB",
        "not_utf8": "{what}: expected UTF-8 text but {path} has byte 0x{byte:02x} at offset "
        "{offset}",
        "one_of": "{option}: expected one of {names}{extra}, got {got!r}",
        "budget": "{what} need about {need:.2f} GiB, more than the {limit:g} GiB one command "
        "may use; {hint}",
        "grows": "they grow with B·n_head·T²; use a shorter sequence or fewer prompts",
        "head": "{option}: expected 1..{n}, got {got!r}",
        "one_head": "{option}: expected 1 (the input has a single head), got {got!r}",
        "stage": "stage: expected one of {names}, got {got!r}",
        "row": "row: expected 0..{last} for {stage}, got {got}",
        "which_row": "{stage} of prompt {prompt} is {rows} rows of {per} numbers; you gave {got}, "
        "one row: add --row 0..{last} (or give all {total} numbers)",
        "answer_table": "answer {n}: expected a table with stage, prompt, values; got {got}",
        "answer_key": "answer {n}: missing {key!r} (keys found: {keys})",
        "answer_row": "answer {n}: row must be an integer, got {got!r}",
        "answer_head": "answer {n}: head must be an integer from 1, got {got!r}",
        "answer_deep": "{where}: expected numbers or rows of numbers, got deeper lists",
        "answer_list": "{name}: expected a list of answers ([[answer]] tables in TOML)",
        "both_answers": "give either an answer file or --stage/--values, not both",
        "no_answer": "expected --stage and --values (or an answer file), got neither",
    },
    "zh": {
        "not_number": "{field}：应为数字，实际是{found}",
        "too_big_int": "{field}：应为浮点数能表示的数（|x| <= 1.8e308），"
        "实际是约 {digits} 位的整数",
        "nan": "{field}：应为有限的数，实际是 nan",
        "inf": "{field}：应为有限的数，实际是 {value}（超过 ±1.8e308 的数会读成 inf）",
        "not_list": "{field}：应为 {ndim} 层嵌套的列表，实际是{found}",
        "empty_list": "{field}：应为非空列表，实际是 []",
        "ragged": "{field}：嵌套列表长短不一：{field}[{i}] 有 {n} 项，而 {field}[0] 有 {first} 项",
        "too_many": "输入：数字总数超过 {limit:,} 个；这个上限让实验保持流畅",
        "not_object": "--input：应为含 x、w_q、w_k、w_v 这些键的对象，实际是{found}",
        "missing": "{key}：缺少这一项（应为 {shape} 的数字）",
        "rows": "{name}：应有 {C} 行（C 取自 x），实际有 {n} 行",
        "columns": "{name}：应有 {cols} 列{why}，实际有 {n} 列",
        "heads_positive": "num_heads：应为正整数，实际是{found} {value}",
        "heads_divisor": "num_heads：应能整除 C={C}，实际是 {n}",
        "token_rows": "tokens：应有 {B} 行（B 取自 x），实际是{found}",
        "token_row": "tokens[{b}]：应有 {T} 个标签（T 取自 x），实际是{found}",
        "token_label": "tokens[{b}][{t}]：应为字符串，实际是{found}",
        "w_o_alone": "w_o：给了 w_o 却没有 num_heads；请加上 num_heads（1 或更大）",
        "vocab_rows": "w_vocab：应有 {d} 行（输出宽度：{why}），实际有 {n} 行",
        "display": "x：{axis}={size} 超过了{what}的显示上限 {axis} <= {limit}；"
        "大的输入请用 --format json",
        "items": "{what}：值、列表和表最多 {limit:,} 个，实际约有 {n:,} 个；"
        "这个上限让实验保持在 2 GiB 和几秒之内",
        "json": "{what} 不是有效的 JSON：{msg}（第 {line} 行，第 {col} 列）",
        "toml": "{what} 不是有效的 TOML：{msg}",
        "deep": "{what}：列表应只嵌套几层（x 是 [B][T][C]），实际嵌套深到解析器无法处理",
        "dup_key": "{what}：对象中的每个键应只出现一次，实际 {key} 出现了两次",
        "long_number": "{what}：应为浮点数能表示的数（|x| <= 1.8e308），实际有一个长得无法读取的数"
        "（{msg}）",
        "no_file": "{what}：找不到文件：{path}",
        "is_dir": "{what}：应为文件，但 {path} 是文件夹",
        "not_regular": "{what}：应为普通文件，但 {path} 是设备或管道",
        "suffix": "{what}：应为 {names} 文件，实际是 {name!r}",
        "unreadable": "{what}：无法读取 {path}：{why}",
        "too_large": "{what}：{path} 超过 {mib:g} MiB",
        "not_utf8": "{what}：应为 UTF-8 文本，但 {path} 在偏移 {offset} 处有字节 0x{byte:02x}",
        "one_of": "{option}：应为 {names}{extra} 之一，收到的是 {got!r}",
        "budget": "{what}约需 {need:.2f} GiB，超过一条命令可用的 {limit:g} GiB；{hint}",
        "grows": "它们随 B·n_head·T² 增长；请用更短的序列或更少的提示",
        "head": "{option}：应为 1..{n}，收到的是 {got!r}",
        "one_head": "{option}：应为 1（输入只有一个头），收到的是 {got!r}",
        "stage": "stage：应为 {names} 之一，收到的是 {got!r}",
        "row": "row：{stage} 的行号应为 0..{last}，收到的是 {got}",
        "which_row": "提示 {prompt} 的 {stage} 有 {rows} 行、每行 {per} 个数；"
        "你给了 {got} 个，是一行：请加 --row 0..{last}（或给出全部 {total} 个数）",
        "answer_table": "第 {n} 个答案：应为含 stage、prompt、values 的表，收到的是 {got}",
        "answer_key": "第 {n} 个答案：缺少 {key!r}（已有的键：{keys}）",
        "answer_row": "第 {n} 个答案：row 应为整数，收到的是 {got!r}",
        "answer_head": "第 {n} 个答案：head 应为从 1 开始的整数，收到的是 {got!r}",
        "answer_deep": "{where}：应为数字或数字的行，收到的是更深的嵌套列表",
        "answer_list": "{name}：应为答案列表（TOML 中的 [[answer]] 表）",
        "both_answers": "答案文件和 --stage/--values 只能二选一，不能同时给出",
        "no_answer": "需要 --stage 和 --values（或一个答案文件），两者都没有给出",
    },
}
