"""HTML for the content blocks of :mod:`attnlab.content.blocks`: MathML and highlighted code.

Prose and table cells are plain text, escaped by Jinja2's autoescape; only MathML and highlighted
code, which we generate ourselves, are passed through as :class:`markupsafe.Markup`.
"""

from __future__ import annotations

import hashlib
import re
from functools import cache

from markupsafe import Markup

# Imported from their own modules, once, when the app is built: ``pygments.formatters`` and
# ``pygments.lexers`` resolve names lazily in a way that is not thread-safe, and the first pages
# of a fresh server render in parallel threads (30 first requests gave 8 ImportErrors).
from pygments import highlight
from pygments.formatters.html import HtmlFormatter
from pygments.lexers.python import PythonLexer

_ARROW_LABEL = re.compile(
    r'<mpadded width="\+0\.833em" lspace="0\.556em" voffset="-\.2em" height="-\.2em">'
    r'(.*?)<mspace depth="\.25em" /></mpadded>'
)


@cache
def mathml(latex: str, display: str = "block") -> Markup:
    """LaTeX → MathML, converted on the server by ``latex2mathml`` (nothing is fetched)."""
    from latex2mathml.converter import convert

    html = convert(latex, display=display)
    # latex2mathml writes a bmatrix as "[" <mtable> "]"; browsers stretch such brackets only
    # with an OpenType MATH font, which many machines lack. Draw the brackets with CSS instead.
    html = html.replace("<mo>&#x0005B;</mo><mtable>", '<mtable class="bmatrix">')
    html = html.replace("</mtable><mo>&#x0005D;</mo>", "</mtable>")
    # A cases brace stretches with the served math font (attnlab.web.fonts); its rows get room.
    brace = '<mo stretchy="true" fence="true" form="prefix">&#x0007B;</mo><mtable>'
    html = html.replace(brace, brace.replace("<mtable>", '<mtable class="cases">'))
    # \xrightarrow{label}: latex2mathml pads the label with relative lengths ("+0.833em") that
    # MathML Core ignores, so the label shifts right over the next term. Pad it with spaces and
    # let the arrow stretch under it.
    html = html.replace(
        '<mover><mstyle scriptlevel="0"><mo>&#x2192;</mo></mstyle>',
        '<mover><mo stretchy="true">&#x2192;</mo>',
    )
    html = _ARROW_LABEL.sub(r'<mrow><mspace width=".3em" />\1<mspace width=".3em" /></mrow>', html)
    # ∞ is a quantity, not an operator: as <mo> it gets operator spacing (the gap in e^{-∞}).
    html = html.replace("<mo>&#x0221E;</mo>", "<mi>&#x0221E;</mi>")
    return Markup(html)


@cache
def highlighted(source: str) -> Markup:
    """Python source with pygments highlighting (classes scoped to ``.hl``)."""
    return Markup(highlight(source, PythonLexer(), HtmlFormatter(cssclass="hl", wrapcode=True)))


@cache
def code_css() -> str:
    """The stylesheet for highlighted code, scoped to ``.hl``: pygments' ``xcode`` style, whose
    every token colour has a contrast of at least 4.5:1 on a white background (WCAG AA)."""
    return str(HtmlFormatter(style="xcode").get_style_defs(".hl"))


@cache
def code_css_url() -> str:
    """The stylesheet's address, versioned by its content's hash (so it may be cached long)."""
    return "/assets/code.css?v=" + hashlib.sha256(code_css().encode()).hexdigest()[:16]
