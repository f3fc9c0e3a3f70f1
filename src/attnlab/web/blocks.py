"""Content blocks of a section: prose, formulas (MathML), tables, code and figures.

Each section module returns a list of :class:`Block`; the ``_blocks.html`` template draws them.
Prose and table cells are plain text, escaped by Jinja2's autoescape; only MathML, highlighted
code and SVG, which we generate ourselves, are passed through as :class:`markupsafe.Markup`.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from markupsafe import Markup

# Imported from their own modules, once, when the app is built: ``pygments.formatters`` and
# ``pygments.lexers`` resolve names lazily in a way that is not thread-safe, and the first pages
# of a fresh server render in parallel threads (30 first requests gave 8 ImportErrors).
from pygments import highlight
from pygments.formatters.html import HtmlFormatter
from pygments.lexers.python import PythonLexer


@dataclass(frozen=True)
class Block:
    """One piece of a section. ``kind`` picks the template branch; other fields by kind."""

    kind: str  # p | note | math | table | code | figure | pre | flow
    text: str = ""
    html: Markup = field(default_factory=Markup)
    headers: tuple[str, ...] = ()
    rows: tuple[tuple[str, ...], ...] = ()
    items: tuple[str, ...] = ()
    data: dict[str, Any] = field(default_factory=dict)


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


@cache
def mathml(latex: str, display: str = "block") -> Markup:
    """LaTeX → MathML, converted on the server by ``latex2mathml`` (nothing is fetched)."""
    from latex2mathml.converter import convert

    html = convert(latex, display=display)
    # latex2mathml writes a bmatrix as "[" <mtable> "]"; browsers stretch such brackets only
    # with an OpenType MATH font, which many machines lack. Draw the brackets with CSS instead.
    html = html.replace("<mo>&#x0005B;</mo><mtable>", '<mtable class="bmatrix">')
    html = html.replace("</mtable><mo>&#x0005D;</mo>", "</mtable>")
    brace = '<mo stretchy="true" fence="true" form="prefix">&#x0007B;</mo><mtable>'
    html = html.replace(brace, '<mtable class="cases">')
    return Markup(html)


def math(latex: str) -> Block:
    """A displayed formula; the LaTeX source is kept as the MathML annotation for copy/paste."""
    return Block("math", html=mathml(latex), text=latex)


def table(
    headers: Sequence[str], rows: Sequence[Sequence[str]], caption: str = "", key: str = ""
) -> Block:
    """A table; ``key`` becomes ``data-table`` so tests can find it."""
    return Block(
        "table",
        text=caption,
        headers=tuple(headers),
        rows=tuple(tuple(r) for r in rows),
        data={"key": key},
    )


@cache
def highlighted(obj_path: str) -> tuple[Markup, str]:
    """The source of ``module:qualname`` with pygments highlighting, and the plain text."""
    import importlib

    module_name, _, qualname = obj_path.partition(":")
    obj: Any = importlib.import_module(module_name)
    for part in qualname.split(".") if qualname else ():
        obj = getattr(obj, part)
    source = inspect.getsource(obj)
    html = highlight(source, PythonLexer(), HtmlFormatter(cssclass="hl", wrapcode=True))
    return Markup(html), source


def code(obj_path: str, caption: str) -> Block:
    """The project's real code (``"attnlab.pipeline:attend"``), read with ``inspect``."""
    html, source = highlighted(obj_path)
    lines = source.count("\n")
    return Block("code", text=caption, html=html, data={"path": obj_path, "lines": lines})


def figure(name: str, lang: str, caption: str) -> Block:
    """A figure of :mod:`attnlab.web.figures`, drawn as inline SVG when the page is rendered
    (the app may switch figures off; then only the caption's place is left out)."""
    return Block("figure", text=caption, data={"name": name, "lang": lang})


def code_css() -> str:
    """The stylesheet for highlighted code (pygments' default style, scoped to ``.hl``)."""
    return str(HtmlFormatter(style="friendly").get_style_defs(".hl"))
