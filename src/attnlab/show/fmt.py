"""Plain-text rendering shared by the scripts and the command line: numbers, labels and tables.

Chinese characters take two terminal columns, so widths are measured with
``unicodedata.east_asian_width`` rather than ``len``. Text that comes from a learner's file (token
labels) goes through :func:`escape_label` before it is shown anywhere.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections.abc import Sequence

#: Unicode categories that are not text: controls (ESC, BEL, CR, C1 such as CSI), format
#: characters (bidi overrides, zero-width spaces), line/paragraph separators and lone surrogates.
_NOT_TEXT = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})


def escape_label(text: str) -> str:
    """``text`` with every control or format character written as its escape (``"\\x1b"``).

    A label read from a file could otherwise recolour or clear the terminal (``\\x1b[31m``),
    return the cursor (``\\r``), ring the bell (``\\x07``) or reverse the text around it
    (``\\u202e``). Letters of every script, Chinese included, are kept as they are.

    Example::

        >>> escape_label("\\x1b[31m猫\\r")
        '\\\\x1b[31m猫\\\\r'
    """
    if text.isprintable():  # the common case: nothing to escape (spaces are printable)
        return text
    return "".join(repr(ch)[1:-1] if unicodedata.category(ch) in _NOT_TEXT else ch for ch in text)


_NON_ASCII = re.compile(r"[^\x00-\x7e]")


def escape_json_text(text: str) -> str:
    """JSON text with the characters :func:`escape_label` escapes written as ``\\uXXXX``.

    The parsed values stay exactly the same (a token keeps its raw characters); only the text a
    terminal receives is safe. ``json.dumps`` escapes ``\\x00``-``\\x1f`` itself but, with
    ``ensure_ascii=False``, passes C1 controls, bidi overrides and lone surrogates through.
    """

    def one(match: re.Match[str]) -> str:
        ch = match[0]
        return json.dumps(ch)[1:-1] if unicodedata.category(ch) in _NOT_TEXT else ch

    return _NON_ASCII.sub(one, text)


def fmt_num(value: float | str | bool, precision: int = 4) -> str:
    """``0.59868`` → ``"0.5987"``; −∞ → ``"-∞"``; never ``"-0.0000"``."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, str):
        value = float(value)
    if math.isinf(value):
        return "-∞" if value < 0 else "∞"
    text = f"{value:.{precision}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def fmt_vec(values: Sequence[float], precision: int = 4) -> str:
    """``[0.5987, 0.4013]``."""
    return "[" + ", ".join(fmt_num(v, precision) for v in values) + "]"


def fmt_shape(shape: Sequence[int]) -> str:
    """``[2, 2, 4]``."""
    return "[" + ", ".join(str(s) for s in shape) + "]"


def width(text: str) -> int:
    """Terminal columns taken by ``text``."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _pad(text: str, cols: int, left: bool) -> str:
    gap = " " * (cols - width(text))
    return text + gap if left else gap + text


def text_table(
    headers: Sequence[str], rows: Sequence[Sequence[str]], left: Sequence[int] = (0,)
) -> str:
    """An aligned table: columns listed in ``left`` left-aligned (text), the others right."""
    cols = [max(width(r[i]) for r in [headers, *rows]) for i in range(len(headers))]
    lines = []
    for n, row in enumerate([headers, *rows]):
        cells = [_pad(cell, cols[i], left=(i in left)) for i, cell in enumerate(row)]
        lines.append("  ".join(cells).rstrip())
        if n == 0:
            lines.append("  ".join("-" * c for c in cols))
    return "\n".join(lines)


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A GitHub-flavoured Markdown table."""
    esc = [[c.replace("|", "\\|") for c in r] for r in [headers, *rows]]
    lines = ["| " + " | ".join(esc[0]) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in esc[1:]]
    return "\n".join(lines)
