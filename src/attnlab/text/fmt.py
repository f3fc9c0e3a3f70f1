"""Every number and shape a learner reads, as text: the one formatter of attnlab, and tables.

One function per style; ``p`` is the number of decimals. Where two front ends write a number
differently on purpose, the difference has a name here (shown: ``-0.00001``, ``0.8``, −∞):

* :func:`num`: ``0.000``, ``0.800``, ``-∞``: the scripts, ``trace``, the web page (never ``-0``);
* :func:`trimmed`: ``0``, ``0.8``, ``-∞``: section 16's ``0.8q+0.2``;
* :func:`tex`: ``0``, ``0.8``, ``-\\infty``: LaTeX on the web page;
* :func:`cell`: ``-0.000``, ``0.8``, ``−∞``: heatmap cells (exact values trimmed, rounded kept);
* :func:`answer`: ``0.000``, ``0.800``, ``−∞``: expected answers (quiz, web), ``1,024`` at p=0;
* :func:`fixed`: ``-0.000``, ``0.800``, ``-inf``: Python's own, for the auditor and ``mistakes``;
* :func:`typed`: ``-0``, ``0.8``, ``-inf``: ``attnlab check``, numbers as a learner types them.

Vectors (:func:`vec`) and LaTeX matrices (:func:`tex_matrix`) are built from these; shapes are
:func:`attnlab.text.errors.shape_text` (``[2, 2, 4]``, the core's error messages use it too) and its
lesson form :func:`compact_shape` (``[2,2,4]``). Chinese characters take two terminal columns,
so table widths are measured with ``unicodedata.east_asian_width`` rather than ``len``. Text
that comes from a learner's file (token labels) goes through :func:`escape_label` before it is
shown anywhere, and what a learner wrote (notes, answers) through :func:`one_line` before it
reaches a terminal.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, TypeAlias

from attnlab.text.errors import shape_text

if TYPE_CHECKING:  # for annotations only: text formatting never needs torch loaded (see vec)
    import torch

__all__ = [
    "answer",
    "cell",
    "compact_shape",
    "fixed",
    "markdown_table",
    "num",
    "ratio",
    "shape_text",
    "tex",
    "tex_matrix",
    "text_table",
    "trimmed",
    "typed",
    "vec",
    "width",
]

Number: TypeAlias = "float | int | bool | str | torch.Tensor"

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


def one_line(text: str) -> str:
    """``text`` as one terminal line: every run of blanks and line breaks becomes one space, and
    what is left of control and format characters is escaped (:func:`escape_label`).

    For text a learner wrote (a note, a saved answer, an error quoting a file name), which may
    hold ``\\x1b`` or ``\\x07`` however it was typed.

    Example::

        >>> one_line("rows\\n sum to 1\\x07")
        'rows sum to 1\\\\x07'
    """
    return escape_label(" ".join(text.split()))


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


def num(value: Number, p: int = 3) -> str:
    """``0.59868`` → ``"0.599"``; −∞ → ``"-∞"``; never ``"-0.000"``; a bool as 1 or 0."""
    if isinstance(value, bool):
        return "1" if value else "0"
    v = float(value)
    if math.isinf(v):
        return "-∞" if v < 0 else "∞"
    text = f"{v:.{p}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def change(before: Number, after: Number, p: int = 3, most: int = 12) -> tuple[str, str]:
    """``before → after`` as :func:`num` texts with at least ``p`` decimals and as many more as it
    takes (up to ``most``) to show that they differ: ``0.416424 → 0.416445`` at ``p=3`` reads
    ``0.41642`` and ``0.41645``, never ``0.416 → 0.416``."""
    d = p
    while d < most and float(before) != float(after) and num(before, d) == num(after, d):
        d += 1
    return num(before, d), num(after, d)


def _trim(text: str) -> str:
    return text.rstrip("0").rstrip(".") if "." in text else text


def trimmed(value: Number, p: int = 3) -> str:
    """:func:`num` without trailing zeros: ``0.800`` → ``"0.8"``, ``1.000`` → ``"1"``."""
    return _trim(num(value, p))


def tex(value: Number, p: int = 3) -> str:
    """A number for LaTeX: ``-\\infty`` for −∞, else :func:`trimmed` (``0.8``, ``1``)."""
    v = float(value)
    return r"-\infty" if v == float("-inf") else trimmed(v, p)


def cell(value: float, p: int = 3) -> str:
    """A heatmap cell: exact values drop trailing zeros as the lesson writes them (``0.4``,
    ``1``), rounded ones keep them (``0.570`` is not exactly 0.57); −∞ with a true minus."""
    if value == float("-inf"):
        return "−∞"
    text = f"{value:.{p}f}"
    if abs(value - float(text)) < 1e-9:
        text = _trim(text)
    return "0" if text in ("-0", "") else text


def answer(value: float | list[float], p: int) -> str:
    """An expected answer: ``0.42556`` → ``"0.426"``; lists as ``"[0.599, 0.401]"``; −∞ with a
    true minus; whole numbers (``p=0``) with thousands separators."""
    if isinstance(value, list):
        return "[" + ", ".join(answer(v, p) for v in value) + "]"
    if math.isinf(value):
        return "−∞" if value < 0 else "∞"
    if p == 0:
        return f"{round(value):,}"
    return num(value, p)


def fixed(value: Number, p: int = 3) -> str:
    """Python's own ``f"{v:.3f}"``: ``-inf``, ``nan`` and the sign of ``-0.000`` kept."""
    return f"{float(value):.{p}f}"


def typed(value: Number, p: int = 4) -> str:
    """:func:`fixed` without trailing zeros: ``0.6``, ``-inf``, as a learner types numbers."""
    return _trim(fixed(value, p))


def vec(
    values: Iterable[Number] | torch.Tensor, p: int = 3, item: Callable[[Number, int], str] = num
) -> str:
    """``[0.599, 0.401]``: the (flattened) values, each written by ``item``."""
    # A tensor is recognised by its methods, so that ``attnlab audit``'s parent process, which
    # only formats text, can import this module without importing torch.
    items = values.flatten().tolist() if hasattr(values, "flatten") else list(values)
    return "[" + ", ".join(item(v, p) for v in items) + "]"


def tex_matrix(t: torch.Tensor, p: int = 3) -> str:
    """A 2-D tensor (or a 1-D row) as a LaTeX ``bmatrix``."""
    rows = t.tolist() if t.dim() == 2 else [t.tolist()]
    body = r"\\".join("&".join(tex(v, p) for v in row) for row in rows)
    return r"\begin{bmatrix}" + body + r"\end{bmatrix}"


def compact_shape(shape: Iterable[int]) -> str:
    """``[2,2,4]``: a shape as the lesson writes it."""
    return shape_text(shape, compact=True)


def named_shape(axes: str, shape: Iterable[int]) -> str:
    """``[B,T,C]=[2,2,4]``: a shape by its axis names, then its sizes in the lesson's example.

    Example::

        >>> named_shape("B,T,C", (2, 2, 4))
        '[B,T,C]=[2,2,4]'
    """
    sizes = list(shape)
    names = axes.split(",")
    if len(names) != len(sizes):
        raise ValueError(f"expected {len(names)} sizes for [{axes}], found {len(sizes)}: {sizes}")
    return f"[{axes}]={compact_shape(sizes)}"


def width(text: str) -> int:
    """Terminal columns taken by ``text``: two for a wide character, none for a combining mark
    (the hat of ``Ŝ``)."""
    if text.isascii():
        return len(text)
    return sum(
        0 if unicodedata.combining(ch) else 2 if unicodedata.east_asian_width(ch) in "WF" else 1
        for ch in text
    )


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
        cells = [_pad(c, cols[i], left=(i in left)) for i, c in enumerate(row)]
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


def ratio(value: float) -> str:
    """How many times: ``250,000×`` for a whole number, else four significant digits
    (``0.25×``)."""
    return f"{value:,.0f}×" if value >= 1 and value == int(value) else f"{value:,.4g}×"


def tiny(value: Number) -> str:
    """A rounding-sized difference in two significant digits: ``0`` or ``1.1e-16``."""
    v = float(value)
    return "0" if v == 0 else f"{v:.1e}"
