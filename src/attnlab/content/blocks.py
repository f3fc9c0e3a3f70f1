"""Content blocks of a section: prose, formulas, tables, code and figures, renderer-neutral.

Each section module returns a list of :class:`Block`. A block holds plain text only: a formula
keeps its LaTeX, a code listing its source text and where it comes from, a figure its name. The
web lesson renders blocks as HTML (:mod:`attnlab.web.blocks`: MathML, highlighted code, SVG);
other front ends (a notebook, the search index) read the same blocks as text.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from attnlab.content import listings
from attnlab.text.i18n import DEFAULT_LANG, pick


@dataclass(frozen=True)
class Block:
    """One piece of a section. ``kind`` picks the renderer's branch; other fields by kind.

    ``text`` is the paragraph, note, worked box, LaTeX source (``math``), caption (``table``,
    ``code``, ``listing``, ``figure``); ``data`` holds a table's ``key``, a code block's ``path``,
    ``source`` and ``lines``, a listing's ``name``, ``source``, ``lines`` and ``command``, a
    figure's ``name`` and ``lang``.
    """

    kind: str  # h | p | note | math | table | code | listing | figure | pre | flow
    text: str = ""
    headers: tuple[str, ...] = ()
    rows: tuple[tuple[str, ...], ...] = ()
    items: tuple[str, ...] = ()
    data: dict[str, Any] = field(default_factory=dict)


def heading(text: str) -> Block:
    """A sub-heading inside a section (a titled list, a part of the introduction)."""
    return Block("h", text=text)


def p(text: str) -> Block:
    """A paragraph of prose."""
    return Block("p", text=text)


def note(text: str) -> Block:
    """A highlighted aside (a common mistake, a caveat)."""
    return Block("note", text=text)


def pre(text: str) -> Block:
    """Worked arithmetic in a monospace box."""
    return Block("pre", text=text)


def flow(items: Sequence[str]) -> Block:
    """A numbered chain of steps (X → Q/K/V → ...)."""
    return Block("flow", items=tuple(items))


def math(latex: str) -> Block:
    """A displayed formula, kept as its LaTeX source."""
    return Block("math", text=latex)


def table(
    headers: Sequence[str], rows: Sequence[Sequence[str]], caption: str = "", key: str = ""
) -> Block:
    """A table; ``key`` names it for renderers and tests (``data-table`` on the web)."""
    return Block(
        "table",
        text=caption,
        headers=tuple(headers),
        rows=tuple(tuple(r) for r in rows),
        data={"key": key},
    )


@cache
def source_of(obj_path: str) -> str:
    """The source text of ``module:qualname`` (``"attnlab.core.pipeline:attend"``), read with
    :func:`inspect.getsource`."""
    module_name, _, qualname = obj_path.partition(":")
    obj: Any = importlib.import_module(module_name)
    for part in qualname.split(".") if qualname else ():
        obj = getattr(obj, part)
    return inspect.getsource(obj)


def code(obj_path: str, caption: str) -> Block:
    """The project's real code (``"attnlab.core.pipeline:attend"``), read with ``inspect``."""
    source = source_of(obj_path)
    return Block(
        "code",
        text=caption,
        data={"path": obj_path, "source": source, "lines": source.count("\n")},
    )


def listing(name: str, lang: str, caption: str) -> Block:
    """A self-contained listing the learner copies and runs (:mod:`attnlab.content.listings`):
    ``source`` is exactly the text the tests run and ``attnlab code NAME`` prints."""
    source = listings.listing(name, lang)
    command = f"attnlab code {name}" + ("" if lang == DEFAULT_LANG else f" --lang {lang}")
    return Block(
        "listing",
        text=caption,
        data={"name": name, "source": source, "lines": source.count("\n"), "command": command},
    )


def listing_output(name: str, lang: str) -> Block:
    """The last lines listing ``name`` prints, as the pipeline computes them (a ``pre`` box)."""
    title = pick(lang, "运行后最后几行应是（4 位小数）", "Its last lines should read (4 decimals)")
    return pre(title + "\n" + "\n".join(listings.expected_lines(name)))


def figure(name: str, lang: str, caption: str) -> Block:
    """A figure of :mod:`attnlab.figures` by name, drawn by the renderer (the web app may switch
    figures off; then only the caption's place is left out)."""
    return Block("figure", text=caption, data={"name": name, "lang": lang})
