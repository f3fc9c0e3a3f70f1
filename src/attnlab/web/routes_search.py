"""The search page (``/search?q=``) and the marks on the section a hit opens.

Every page's header holds the search box: a GET form, so it works without JavaScript; ``app.js``
focuses it on Ctrl+K (⌘K). A hit links to ``/section/N?q=...#hit``, where the words are wrapped
in ``<mark>`` and the first one is ``id="hit"``.
"""

from __future__ import annotations

import html as html_text
import re
from collections.abc import Callable
from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse
from markupsafe import escape

from attnlab.content import search
from attnlab.web.common import lang_of, page_context, render, settings
from attnlab.web.security import RequestRefused
from attnlab.web.ui_text import UI

router = APIRouter()

_TAG = re.compile(r"(<[^>]*>)")
#: Elements whose text is not marked: formulas and figures are drawn, not prose; a textarea's
#: content is the learner's own text, shown as typed.
UNMARKED = ("math", "svg", "script", "style", "textarea", "title")


def hit_url(hit: search.Hit, query: str) -> str:
    """Where a hit opens: its section with the words marked, or the glossary entry."""
    q = quote(query)
    if hit.kind == "glossary":
        return f"/glossary?lang={hit.lang}#term-{hit.key.removeprefix('g-')}"
    if hit.section is None:
        return f"/search?lang={hit.lang}&q={q}"
    return f"/section/{hit.section}?lang={hit.lang}&q={q}#hit"


def highlighter(query: str, anchor: bool = True) -> Callable[[str], str]:
    """A function wrapping ``query``'s words in ``<mark>`` inside the page's ``<main>``, outside
    tags and :data:`UNMARKED` elements; the first mark gets ``id="hit"`` if ``anchor``.

    Words are found in the text the learner reads, not in its HTML (:func:`_mark_text`): "39"
    is not found inside ``&#39;``, and ``'`` is found where the page writes ``&#39;``.
    """
    pattern = search.marks(search.check_query(query))

    def mark(html: str) -> str:
        start, end = html.find("<main"), html.rfind("</main>")
        if start < 0 or end < 0:
            return html
        parts, skipping, first = _TAG.split(html[start:end]), 0, [anchor]

        def wrap(word: str) -> str:
            anchor = ' id="hit"' if first[0] else ""
            first[0] = False
            return f"<mark{anchor}>{escape(word)}</mark>"

        for i, part in enumerate(parts):
            if part.startswith("<"):
                name = re.match(r"</?([a-zA-Z0-9]+)", part)
                if name and name.group(1).lower() in UNMARKED and not part.endswith("/>"):
                    skipping += -1 if part.startswith("</") else 1
            elif part and not skipping:
                parts[i] = _mark_text(part, pattern, wrap)
        return html[:start] + "".join(parts) + html[end:]

    return mark


def _mark_text(part: str, pattern: re.Pattern[str], wrap: Callable[[str], str]) -> str:
    """The HTML text ``part`` (between two tags) with each match of ``pattern`` in its text
    replaced by ``wrap(match)``: the text is unescaped, and the pieces around the matches are
    escaped again. A part without a match is returned as it was."""
    text = html_text.unescape(part)
    pieces, last = [], 0
    for match in pattern.finditer(text):
        pieces += [str(escape(text[last : match.start()])), wrap(match.group(0))]
        last = match.end()
    if not pieces:
        return part
    return "".join(pieces) + str(escape(text[last:]))


@router.get("/search", response_class=HTMLResponse)
def search_page(request: Request) -> HTMLResponse:
    """The search form and, with ``?q=``, the hits (notes first, then the lesson)."""
    lang = lang_of(request)
    query = request.query_params.get("q")
    store = settings(request).store()
    hits: list[search.Hit] = []
    if query is not None:
        try:
            hits = search.search(store, query, lang)
        except ValueError:
            max_q = search.MAX_QUERY
            raise RequestRefused(422, UI[lang]["bad_query"].format(max=max_q)) from None
    ctx = page_context(
        request, lang, store.summary(), page="search", query=query or "", hits=hits,
        searched=query is not None, hit_url=hit_url, kind_names=search.KIND_NAMES[lang],
    )  # fmt: skip
    return render(
        "search.html", lang, ctx, highlighter(query, anchor=False) if hits and query else None
    )
