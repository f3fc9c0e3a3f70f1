"""Content blocks as plain terminal text: what the lesson scripts print of a section.

The same blocks the web page and the notebook render (:mod:`attnlab.content.blocks`), written for
a terminal: prose wrapped to :data:`WIDTH` columns (a Chinese character takes two), formulas as
readable text (:mod:`attnlab.content.plain_math`), tables aligned by
:func:`attnlab.text.fmt.text_table`, code indented, a figure as the ``attnlab plot`` command that
draws it and a listing as the ``attnlab code`` command that prints it.

Example::

    >>> from attnlab.content.blocks import note, p
    >>> print(render([p("Rows sum to 1."), note("Mask before the softmax.")], "en"))
    Rows sum to 1.
    <BLANKLINE>
    Note: Mask before the softmax.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterable, Sequence

from attnlab.content import sections
from attnlab.content.blocks import Block
from attnlab.content.plain_math import formula_lines
from attnlab.text.fmt import text_table, width
from attnlab.text.i18n import DEFAULT_LANG, pick

#: Columns a paragraph is wrapped to.
WIDTH = 88
INDENT = "  "
# A wrap point: after a run of blanks, or beside a wide (CJK) character; closing punctuation
# stays with the word before it.
_WIDE = "\u2e80-\u9fff\uf900-\uffef"
_PIECE = re.compile(rf"\s+|[{_WIDE}][，。；：、！？）”’」』]*|[^\s{_WIDE}]+")
_NUMBER = re.compile(r"[-−+]?(\d[\d,]*(\.\d+)?(e[-+]?\d+)?|∞)×?")


def wrap(text: str, cols: int = WIDTH, indent: str = "") -> list[str]:
    """``text`` as lines of at most ``cols`` terminal columns (a longer word keeps its line),
    every line after the first indented by ``indent``."""
    lines, line, used = [], "", 0  # used: width(line), kept as the line grows
    for piece in _PIECE.findall(" ".join(text.split())):
        if piece.isspace():
            if line.strip():
                line, used = line + " ", used + 1
        elif line.strip() and used + width(piece) > cols:
            lines.append(line.rstrip())
            line = indent + piece
            used = width(line)
        else:
            line, used = line + piece, used + width(piece)
    return [*lines, line.rstrip()] if line.strip() else lines


def _table(b: Block) -> list[str]:
    """Caption, then the table; columns of numbers right-aligned, the others left."""
    left = [
        i for i in range(len(b.headers)) if not all(_NUMBER.fullmatch(r[i]) for r in b.rows if r[i])
    ]
    return [*wrap(b.text), *text_table(b.headers, b.rows, left=left).splitlines()]


def _command(lang: str, command: str) -> str:
    return command + ("" if lang == DEFAULT_LANG else f" --lang {lang}")


def figure_command(name: str, lang: str) -> str:
    """The command that draws figure ``name``: ``chain_a`` → ``attnlab plot chain --prompt A``."""
    kind, _, prompt = name.partition("_")
    which = f" --prompt {prompt.upper()}" if prompt else ""
    return _command(lang, f"attnlab plot {kind}{which}")


def heading(text: str) -> str:
    """A sub-heading inside a section: ``-- text``."""
    return f"-- {text}"


def block_lines(b: Block, lang: str) -> list[str]:
    """One block as lines of plain text (``ValueError`` for an unknown kind)."""
    if b.kind == "h":
        return [heading(b.text)]
    if b.kind == "p":
        return wrap(b.text)
    if b.kind == "note":
        label = pick(lang, "注：", "Note: ")
        return wrap(label + b.text, indent=" " * width(label))
    if b.kind == "pre":
        return [(INDENT + line).rstrip() for line in b.text.splitlines()]
    if b.kind == "flow":
        return [
            INDENT + line
            for i, item in enumerate(b.items, 1)
            for line in wrap(f"{i}. {item}", WIDTH - len(INDENT), indent="   ")
        ]
    if b.kind == "math":
        return [INDENT + line for line in formula_lines(b.text)]
    if b.kind == "table":
        return _table(b)
    if b.kind == "code":
        source = textwrap.dedent(b.data["source"]).rstrip().splitlines()
        return [f"{b.text} ({b.data['path']}):", *(2 * INDENT + line for line in source)]
    if b.kind == "listing":
        return [f"{b.text}:", INDENT + b.data["command"]]
    if b.kind == "figure":
        label = pick(lang, "图：", "Figure: ")
        return [*wrap(label + b.text), INDENT + figure_command(b.data["name"], b.data["lang"])]
    raise ValueError(
        "block kind must be one of h, p, note, pre, flow, math, table, code, listing, figure, "
        f"got {b.kind!r}"
    )


def render(blocks: Iterable[Block], lang: str) -> str:
    """The blocks as plain text, one blank line between blocks."""
    return "\n\n".join("\n".join(block_lines(b, lang)) for b in blocks)


def render_section(section_id: int, lang: str, without: Sequence[str] = ()) -> str:
    """Section ``section_id`` as the page shows it, under a ``== §4 title`` heading; blocks whose
    text holds one of ``without`` are left out (a pointer to the script that is printing it)."""
    view = sections.section(section_id, lang)
    blocks = [b for b in view.blocks if not any(w in b.text for w in without)]
    return f"== §{view.id} {view.title}\n\n" + render(blocks, lang)
