"""The search page (``/search?q=``) and the marks on the section a hit opens.

Every page's header holds the search box: a GET form, so it works without JavaScript; ``app.js``
focuses it on Ctrl+K (⌘K). A hit links to the page that holds it, always in the search page's
language, with ``?q=...&open=ID#hit``: ``ID`` is the element the match is in (the section
``s-N``, the check ``check-N``, the note ``note-ID``, the mistake ``mistake-NAME``, the glossary
term ``term-ID``); the page opens that element's ``<details>`` (or shows the note or mistake) and
wraps the words in ``<mark>``. When the element holds the words in the page's language, its first
mark gets ``id="hit"``; when they are only in the other language's text of it, the element is
highlighted (``hit-elsewhere``) and a one-line note at its top, ``id="hit"``, says so and links
to the same place in that language. Either way the browser scrolls to ``#hit``, with or without
JavaScript. Hits found only in the other language are listed after the others, labelled.
"""

from __future__ import annotations

import html as html_text
import re
from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING
from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse
from markupsafe import escape

from attnlab.content import search, search_query
from attnlab.mistakes import catalogue
from attnlab.web.common import lang_of, page_context, render, settings
from attnlab.web.security import RequestRefused
from attnlab.web.ui_text import UI

if TYPE_CHECKING:
    from attnlab.progress.search_index import Doc

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


def hit_url(hit: search.Hit, query: str, lang: str) -> str:
    """Where a hit opens: the element holding it, with the words marked, in the page's
    language ``lang`` (also for a hit found only in the other language's text)."""
    if hit.section is None and hit.kind != "glossary":
        return f"/search?lang={lang}&q={quote(query)}"
    return _place_url(hit.kind, hit.section, lang, query, hit_anchor(hit))


def hit_title(hit: search.Hit, lang: str) -> str:
    """A hit's title in ``lang``, the language of the page its link opens."""
    doc = _documents().get((hit.kind, hit.key, lang))
    return doc.title if doc is not None else hit.title


def _place_url(kind: str, section: int | None, lang: str, query: str, anchor: str) -> str:
    where = "/glossary" if kind == "glossary" else f"/section/{section}"
    return f"{where}?lang={lang}&q={quote(query)}&open={anchor}#hit"


@cache
def _documents() -> dict[tuple[str, str, str], Doc]:
    """Every search document by (kind, key, language)."""
    return {(d.kind, d.key, d.lang): d for d in search.corpus()}


#: The search document an ``open=`` element shows: its kind and its key's prefix, by id prefix.
_DOC_OF = {"s": ("section", "s"), "check": ("check", "c"), "term": ("glossary", "g-"),
           "mistake": ("mistake", "m-")}  # fmt: skip


def _found_elsewhere(opened: str, terms: list[search_query.Term], lang: str) -> Doc | None:
    """The other language's document of element ``opened`` when it holds ``terms`` (a note has
    none: it is the learner's own text, in no language of the lesson's)."""
    prefix, _, rest = opened.partition("-")
    if prefix not in _DOC_OF:
        return None
    kind, key = _DOC_OF[prefix]
    other = "en" if lang == "zh" else "zh"
    doc = _documents().get((kind, key + rest, other))
    return doc if doc and search_query.matches(terms, search.shown_text(doc)) else None


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
    :func:`attnlab.content.search_query.pattern`); if ``anchor``, the page gets its
    ``id="hit"`` where the hit is (:func:`_land`).

    Words are found in the text the learner reads, not in its HTML (:func:`_mark_text`): "39"
    is not found inside ``&#39;``, and ``'`` is found where the page writes ``&#39;``.
    """
    terms, pattern = search_query.parse(query), search.marks(query)

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
        return _land(marked, start, within, query, terms) if anchor else marked

    return mark


_MARKED = re.compile(r"<mark>(.*?)</mark>", re.S)
#: An element's first child that titles it: a note about the element goes after it.
_TITLE_CHILD = re.compile(r"\s*<(summary|dt|header|h[1-6])\b")


def _land(
    html: str, main: int, within: str | None, query: str, terms: list[search_query.Term]
) -> str:
    """``html`` with ``id="hit"`` on the first mark inside the element ``id=within`` when its
    marks hold every term; when they do not but the other language's text of it does, on a note
    at the element's top (:func:`_note_elsewhere`); otherwise on the page's first mark after
    that element (or in ``<main>``)."""
    span = _element(html, within, main) if within else None
    if within and span is not None:
        marked = [html_text.unescape(m) for m in _MARKED.findall(html, span[0], span[1])]
        if not search_query.matches(terms, "\0".join(marked)):  # \0: no phrase spans two marks
            lang = "zh" if re.search(r'<html lang="zh', html) else "en"
            doc = _found_elsewhere(within, terms, lang)
            if doc is not None:
                url = _place_url(doc.kind, doc.section, doc.lang, query, within)
                return _note_elsewhere(html, span, url, query, lang)
    return _anchor_first(html, main, within)


def _element(html: str, within: str, main: int) -> tuple[int, int] | None:
    """Where the element ``id=within`` starts and ends in ``html`` (after ``main``)."""
    found = re.compile(rf'<([a-z0-9]+)\b[^>]*\sid="{re.escape(within)}"').search(html, main)
    if found is None:
        return None
    depth = 0
    for tag in re.compile(rf"<(/?){found.group(1)}\b[^>]*>").finditer(html, found.start()):
        depth += -1 if tag.group(1) else 1
        if depth == 0:
            return found.start(), tag.end()
    return None


def _note_elsewhere(html: str, span: tuple[int, int], url: str, query: str, lang: str) -> str:
    """``html`` with the element at ``span`` highlighted and, at its top (after its title), a
    note ``id="hit"`` in ``lang``: the words are in the other language's text of it, with a link
    to the same place in that language (``url``)."""
    start, end = span
    open_end = html.index(">", start) + 1
    title = _TITLE_CHILD.match(html, open_end, end)
    at = html.index(">", html.index(f"</{title.group(1)}>", title.end())) + 1 if title else open_end
    tag = "dd" if title and title.group(1) == "dt" else "p"  # a <dl> holds only <dt> and <dd>
    other, words = "en" if lang == "zh" else "zh", UI[lang]
    note = (
        f'<{tag} class="hit-note" id="hit">{escape(words["hit_elsewhere"].format(q=query))} '
        f'<a href="{escape(url)}" hreflang="{other}">{escape(words["hit_elsewhere_link"])}</a>'
        f"</{tag}>"
    )
    start_tag = re.sub(r'\sclass="', ' class="hit-elsewhere ', html[start:open_end], count=1)
    return html[:start] + start_tag + html[open_end:at] + note + html[at:]


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
        hit_url=hit_url, hit_title=hit_title, kind_names=search.KIND_NAMES[lang],
        limit=search.LIMIT,
    )  # fmt: skip
    return render(
        "search.html", lang, ctx, highlighter(query, anchor=False) if hits and query else None
    )
