"""A formula block's LaTeX as plain terminal text: ``\\frac{a}{b}`` → ``a/b``, ``\\sqrt{d_k}`` →
``√d_k``, ``K^\\top`` → ``Kᵀ``, and each matrix laid out in rows.

Only the LaTeX the lesson's sections write is understood (:mod:`attnlab.content.sections`); an
unknown command is kept as its name, so nothing is lost, only less pretty. A formula's parts
separated by ``\\qquad`` or ``\\quad`` go on lines of their own.

Example::

    >>> formula_lines(r"S=\\begin{bmatrix}0.5&1\\\\-\\infty&0\\end{bmatrix},\\qquad d=\\sqrt{d_k}")
    ['S = [ 0.5  1 ]', '    [  -∞  0 ]', 'd = √d_k']
"""

from __future__ import annotations

import re

from attnlab.text.fmt import width

_SYMBOLS = {
    "alpha": "α", "le": " ≤ ", "ge": " ≥ ", "neq": " ≠ ", "approx": " ≈ ", "in": " ∈ ",
    "times": "×", "cdot": "·", "infty": "∞", "partial": "∂", "sum": "Σ", "top": "ᵀ", "exp": "exp",
    "rightarrow": " → ", "longrightarrow": " → ", "Longrightarrow": " ⇒ ",
    ",": " ", ";": " ", " ": " ", "!": "", "quad": "  ", "qquad": "    ", "{": "{", "}": "}",
}  # fmt: skip
_ACCENTS = {"bar": "\u0304", "hat": "\u0302", "widehat": "\u0302", "widetilde": "\u0303"}
_FONTS = ("operatorname", "mathrm", "text", "mathbf")
_BLACKBOARD = {"R": "ℝ"}
_TERM = "[\\w∞ᵀ√∂.\u0302\u0303\u0304]+"
#: One term that needs no parentheses: ``d_k``, ``√d_k``, ``exp(ŝ_(t,j))``, ``W_V[i,c]``, ``[B,T]``.
_SIMPLE = re.compile(rf"{_TERM}(\(.*\)|\[.*\])?|\[[^\]]*\]|\([^)]*\)")
_MATRIX = re.compile(r"\\begin\{bmatrix\}(.*?)\\end\{bmatrix\}")
_SPLIT = re.compile(r"\\q?quad(?![a-zA-Z])")


def _group(s: str, i: int) -> tuple[str, int]:
    """The argument starting at ``s[i]``: a ``{...}`` group, a ``\\command`` or one character."""
    if i >= len(s):
        return "", i
    if s[i] == "{":
        depth = 0
        for j in range(i, len(s)):
            depth += {"{": 1, "}": -1}.get(s[j], 0)
            if depth == 0:
                return s[i + 1 : j], j + 1
        return s[i + 1 :], len(s)
    if s[i] == "\\":
        m = re.match(r"\\([a-zA-Z]+|.)", s[i:])
        end = i + (m.end() if m else 1)
        return s[i:end], end
    return s[i], i + 1


def _wrap(text: str) -> str:
    """``text`` in parentheses unless it is one simple term."""
    return text if _SIMPLE.fullmatch(text) else f"({text})"


def _script(mark: str, text: str) -> str:
    if mark == "^" and text in ("ᵀ", "2"):
        return "ᵀ" if text == "ᵀ" else "²"
    return mark + _wrap(text)


def _environment(s: str, i: int, name: str) -> tuple[str, int]:
    end = s.find(rf"\end{{{name}}}", i)
    end = len(s) if end < 0 else end
    rows = [[to_text(c).strip() for c in r.split("&")] for r in s[i:end].split(r"\\")]
    stop = end + len(rf"\end{{{name}}}")
    if name == "cases":  # value, condition
        cases = [f"{r[0].rstrip(',')} if {r[1]}" if len(r) > 1 else r[0] for r in rows]
        return "{ " + "; ".join(cases) + " }", stop
    inner = ["[" + ", ".join(r) + "]" for r in rows]
    return (inner[0] if len(inner) == 1 else "[" + ", ".join(inner) + "]"), stop


def _command(s: str, i: int) -> tuple[str, int]:
    """The text of the command starting at ``s[i] == "\\\\"`` and where it ends."""
    m = re.match(r"\\([a-zA-Z]+|.)", s[i:])
    name, i = (m.group(1), i + m.end()) if m else ("", i + 1)
    if name.isalpha():  # as in TeX, blanks after a command word only end the word
        while i < len(s) and s[i] == " ":
            i += 1
    if name in ("frac",):
        top, i = _group(s, i)
        bottom, i = _group(s, i)
        return f"{_wrap(to_text(top))}/{_wrap(to_text(bottom))}" + _gap(s, i), i
    if name == "sqrt":
        arg, i = _group(s, i)
        return "√" + _wrap(to_text(arg)), i
    if name in _FONTS or name == "mathbb":
        arg, i = _group(s, i)
        text = to_text(arg)
        return (_BLACKBOARD.get(text, text) if name == "mathbb" else text), i
    if name in _ACCENTS:
        arg, i = _group(s, i)
        return to_text(arg) + _ACCENTS[name], i
    if name == "xrightarrow":
        arg, i = _group(s, i)
        return f" -{to_text(arg)}→ ", i
    if name == "begin":
        env, i = _group(s, i)
        return _environment(s, i, env)
    if name in ("left", "right"):
        return "", i
    return _SYMBOLS.get(name, name), i


def to_text(latex: str) -> str:
    """One LaTeX expression as one line of plain text (matrices as nested brackets)."""
    out, i = [], 0
    while i < len(latex):
        ch = latex[i]
        if ch == "\\":
            text, i = _command(latex, i)
        elif ch in "_^":
            arg, i = _group(latex, i + 1)
            text = _script(ch, to_text(arg)) + _gap(latex, i)
        elif ch == "{":
            arg, i = _group(latex, i)
            text = to_text(arg)
        else:
            text, i = ch, i + 1
        out.append(text)
    return re.sub(r" +([)\],])", r"\1", re.sub(r" {2,}", " ", "".join(out)))


def _gap(s: str, i: int) -> str:
    """A blank after a script or fraction that a letter follows: ``q_ik_i`` reads ``q_i k_i``."""
    return " " if i < len(s) and (s[i].isalnum() or s[i] == "\\") else ""


def _spaced(text: str) -> str:
    """``=`` outside brackets with a space each side, runs of spaces as one."""
    depth, out = 0, []
    for ch in text:
        depth += 1 if ch in "([" else -1 if ch in ")]" else 0
        out.append(" = " if ch == "=" and depth == 0 else ch)
    return re.sub(r" {2,}", " ", "".join(out)).strip()


def _matrix_rows(body: str) -> list[str]:
    cells = [[to_text(c).strip() for c in r.split("&")] for r in body.split(r"\\")]
    cols = [max(width(r[j]) for r in cells) for j in range(len(cells[0]))]
    pad = [[" " * (cols[j] - width(c)) + c for j, c in enumerate(r)] for r in cells]
    return ["[ " + "  ".join(r) + " ]" for r in pad]


def _part_lines(part: str) -> list[str]:
    """One part of a formula; a matrix of several rows makes it several lines, text centred."""
    pieces: list[list[str]] = []
    last = 0
    for m in _MATRIX.finditer(part):
        pieces.append([_spaced(to_text(part[last : m.start()]))])
        pieces.append(_matrix_rows(m.group(1)))
        last = m.end()
    pieces.append([_spaced(to_text(part[last:]))])
    pieces = [p for p in pieces if p != [""]]
    height = max(len(p) for p in pieces)
    lines = [""] * height
    for n, piece in enumerate(pieces):
        top, cols = (height - len(piece)) // 2, max(width(x) for x in piece)
        for row in range(height):
            text = piece[row - top] if 0 <= row - top < len(piece) else ""
            lines[row] += (" " if n else "") + text + " " * (cols - width(text))
    return [line.rstrip() for line in lines]


def formula_lines(latex: str) -> list[str]:
    """A displayed formula as plain lines: one part per line, matrices in rows."""
    parts = [p.strip().rstrip(",").strip() for p in _SPLIT.split(latex)]
    return [line for part in parts if part for line in _part_lines(part)]
