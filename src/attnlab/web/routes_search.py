"""The search page (``/search?q=``) and the marks on the section a hit opens.

Every page's header holds the search box: a GET form, so it works without JavaScript; ``app.js``
focuses it on Ctrl+K (⌘K). A hit links to the page that holds it with ``?q=...&open=ID#hit``:
``ID`` is the element the match is in (the section ``s-N``, the check ``check-N``, the note
``note-ID``, the mistake ``mistake-NAME``, the glossary term ``term-ID``); the page opens that
element's ``<details>`` (or shows the note or mistake), wraps the words in ``<mark>`` and gives
the first mark inside it ``id="hit"``, so the browser scrolls to a visible mark, with or without
JavaScript. A hit found in the page's language opens in it; one found only in the other language
is listed after them, labelled, and opens in the language it was found in.
"""

from __future__ import annotations

import html as html_text
import re
from collections.abc import Callable
from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse
from markupsafe import escape

from attnlab.content import search, search_query
from attnlab.mistakes import catalogue
from attnlab.web.common import lang_of, page_context, render, settings
from attnlab.web.security import RequestRefused
from attnlab.web.ui_text import UI

router = APIRouter()

_TAG = re.compile(r"(<[^>]*>)")
#: Elements whose text is not marked: formulas and figures are drawn, not prose; a textarea's
#: content is the learner's own text, shown as typed.
UNMARKED = ("math", "svg", "script", "style", "textarea", "title")


#: The ``open=`` values a page accepts: the id of an element that can hold a hit.
OPEN_ID = re.compile(r"(s|check|term|mistake|note)-[A-Za-z0-9_-]{1,40}")


def hit_anchor(hit: search.Hit) -> str:
    """The id of the element a hit is in, on the page it opens."""
    if hit.kind == "glossary":
        return f"term-{hit.key.removeprefix('g-')}"
    if hit.kind == "mistake":
        return f"mistake-{hit.key.removeprefix('m-')}"
    if hit.kind == "note":
        return f"note-{hit.key}"
    return f"{'check' if hit.kind == 'check' else 's'}-{hit.section}"


def hit_url(hit: search.Hit, query: str) -> str:
    """Where a hit opens: the element holding it, with the words marked, in the language the
    hit was found in (the page's own when it was found in both)."""
    where = "/glossary" if hit.kind == "glossary" else f"/section/{hit.section}"
    if hit.section is None and hit.kind != "glossary":
        return f"/search?lang={hit.lang}&q={quote(query)}"
    return f"{where}?lang={hit.lang}&q={quote(query)}&open={hit_anchor(hit)}#hit"


def open_id(request: Request) -> str | None:
    """The ``open=`` element id of a page's address, when it is one a hit can name."""
    raw = request.query_params.get("open", "")
    return raw if OPEN_ID.fullmatch(raw) else None


def found_mistake(opened: str | None, section: int, lang: str) -> dict[str, str] | None:
    """The catalogued mistake ``opened`` names (``mistake-NAME``) when it is taught in
    ``section``: what the section page shows of it, in ``lang``."""
    if opened is None or not opened.startswith("mistake-"):
        return None
    name = opened.removeprefix("mistake-")
    for m in catalogue.CATALOGUE:
        if m.name == name and m.section == section:
            return {"id": opened, "label": search.KIND_NAMES[lang]["mistake"],
                    "title": m.title[lang], "explain": m.explain[lang], "code": m.code,
                    "fix": m.fix}  # fmt: skip
    return None


def highlighter(query: str, within: str | None = None, anchor: bool = True) -> Callable[[str], str]:
    """A function wrapping ``query``'s terms in ``<mark>`` inside the page's ``<main>``, outside
    tags and :data:`UNMARKED` elements (the pattern that found them,
    :func:`attnlab.content.search_query.pattern`); if ``anchor``, the first mark after the
    element ``id=within`` (or in ``<main>``) gets ``id="hit"``.

    Words are found in the text the learner reads, not in its HTML (:func:`_mark_text`): "39"
    is not found inside ``&#39;``, and ``'`` is found where the page writes ``&#39;``.
    """
    pattern = search.marks(query)

    def mark(html: str) -> str:
        start, end = html.find("<main"), html.rfind("</main>")
        if start < 0 or end < 0:
            return html
        parts, skipping = _TAG.split(html[start:end]), 0

        def wrap(word: str) -> str:
            return f"<mark>{escape(word)}</mark>"

        for i, part in enumerate(parts):
            if part.startswith("<"):
                name = re.match(r"</?([a-zA-Z0-9]+)", part)
                if name and name.group(1).lower() in UNMARKED and not part.endswith("/>"):
                    skipping += -1 if part.startswith("</") else 1
            elif part and not skipping:
                parts[i] = _mark_text(part, pattern, wrap)
        marked = html[:start] + "".join(parts) + html[end:]
        return _anchor_first(marked, start, within) if anchor else marked

    return mark


def _anchor_first(html: str, main: int, within: str | None) -> str:
    """``html`` with ``id="hit"`` on its first mark after the element ``id=within`` starts (or
    after ``main`` when there is no such element or no mark after it)."""
    at = html.find(f'id="{within}"', main) if within else -1
    first = html.find("<mark>", at if at >= 0 else main)
    if first < 0:
        first = html.find("<mark>", main)
    if first < 0:
        return html
    return html[:first] + '<mark id="hit">' + html[first + len("<mark>") :]


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
    """The search form and, with ``?q=``, the hits (notes first, then the lesson in the page's
    language, then the lesson found only in the other one). An empty ``q`` shows the form with a
    hint; more than :data:`~attnlab.content.search.LIMIT` hits are counted as "50+"."""
    lang = lang_of(request)
    query = request.query_params.get("q")
    store = settings(request).store()
    hits: list[search.Hit] = []
    blank = query is not None and search_query.is_blank(query)
    if query is not None and not blank:
        try:
            hits = search.search(store, query, lang, limit=search.LIMIT + 1)
        except ValueError:
            max_q = search.MAX_QUERY
            raise RequestRefused(422, UI[lang]["bad_query"].format(max=max_q)) from None
    capped, hits = len(hits) > search.LIMIT, hits[: search.LIMIT]
    ctx = page_context(
        request, lang, store.summary(), page="search", query=query or "", hits=hits,
        searched=query is not None and not blank, blank=blank, capped=capped,
        hit_url=hit_url, kind_names=search.KIND_NAMES[lang], limit=search.LIMIT,
    )  # fmt: skip
    return render(
        "search.html", lang, ctx, highlighter(query, anchor=False) if hits and query else None
    )
