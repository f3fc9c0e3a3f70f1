"""Plain-text rendering shared by the scripts and the command line: numbers and aligned tables.

Chinese characters take two terminal columns, so widths are measured with
``unicodedata.east_asian_width`` rather than ``len``.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Sequence


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
