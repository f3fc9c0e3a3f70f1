"""Pages you read: the whole lesson, one section, the glossary, "continue", the code stylesheet."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, PlainTextResponse, Response

from attnlab.content import knowledge, sections
from attnlab.core import example
from attnlab.figures import registry
from attnlab.grading import ladder, practice, reasons
from attnlab.text.i18n import LANGS
from attnlab.web import figures
from attnlab.web.blocks import code_css, code_css_url
from attnlab.web.common import audit_view, lang_of, page_context, render, see_other, settings
from attnlab.web.fonts import IMMUTABLE
from attnlab.web.routes_notes import NotesView
from attnlab.web.routes_search import found_mistake, highlighter, open_id
from attnlab.web.security import refused

router = APIRouter()


@router.get("/")
def home(request: Request) -> Response:
    """The lesson is the home page (in the asked language: ``/?lang=en`` opens it in English)."""
    return see_other(f"/lesson?lang={lang_of(request)}")


@router.get("/lesson", response_class=HTMLResponse)
def lesson(request: Request) -> HTMLResponse:
    """All 20 sections in the lesson's order, each with its knowledge check and the learner's
    saved answers."""
    lang = lang_of(request)
    views = sections.all_sections(lang)
    ctx = _sections_context(request, lang, views, page="lesson")
    return render("lesson.html", lang, ctx)


def _sections_context(
    request: Request, lang: str, views: list[Any], visit: int | None = None, **extra: Any
) -> dict[str, Any]:
    """:func:`page_context` for a page of the sections ``views``, with the learner's state read
    in one snapshot: their checks' answers and exercise attempts, notes, practice mastery
    (after remembering section ``visit`` as the last one visited, in the same transaction)."""
    learner = settings(request).store().learner_state(visit)  # one statement, one snapshot
    attempts = learner.attempts
    notes = NotesView.of(learner.notes, learner.bookmarks)
    return page_context(
        request,
        lang,
        learner.summary,
        sections=views,
        checks=_check_states(attempts, [s.id for s in views], lang),
        notes=notes,
        mastery=practice.mastery(attempts),
        **extra,
    )


def _check_states(
    attempts: list[dict[str, Any]], section_ids: list[int], lang: str
) -> dict[int, dict[str, Any]]:
    """Per section: the last saved answer to its check and the last attempt at each exercise,
    from the learner's ``attempts`` (oldest first)."""
    every: dict[str, list[dict[str, Any]]] = {}
    for attempt in attempts:  # oldest first: the newest is last
        every.setdefault(attempt["exercise"], []).append(attempt)
    states = {}
    for sid in section_ids:
        ids = [e.id for e in knowledge.section(sid).exercises]
        answer = every.get(f"check-{sid}")
        states[sid] = {
            "answer": answer[-1] if answer else None,
            "exercises": {eid: _shown(every[eid], lang) for eid in ids if eid in every},
        }
    return states


def _shown(tries: list[dict[str, Any]], lang: str) -> dict[str, Any]:
    """An exercise's last attempt with its verdict worded in the page's language, and the help
    its wrong tries in a row have earned (:func:`attnlab.grading.ladder.help_line`)."""
    attempt = tries[-1]
    eid, text = attempt["exercise"], attempt["answer"]
    data = reasons.loads(attempt["diagnosis"], eid, text)
    helped = ladder.help_line(eid, text, data, ladder.wrong_run(tries), lang)
    return {**attempt, "kind": data["kind"], "verdict": reasons.present(eid, text, data, lang),
            "help": helped}  # fmt: skip


def _section_id(raw: str, lang: str) -> int:
    try:
        return sections.parse_section_id(raw)
    except ValueError:
        shown = raw[:20] + ("…" if len(raw) > 20 else "")
        raise refused(404, "no_section", found=repr(shown)) from None


@router.get("/section/{section_id}/check", response_class=HTMLResponse)
def one_check(request: Request, section_id: str, page: str = "section") -> HTMLResponse:
    """One section's knowledge check alone (``page`` = ``lesson`` or ``section``: where its
    forms return); the page's script swaps it in after posting an answer in place."""
    lang = lang_of(request)
    sid = _section_id(section_id, lang)
    if page not in ("lesson", "section"):
        raise refused(422, "bad_page", found=page[:20])
    learner = settings(request).store().learner_state()
    ctx = page_context(
        request,
        lang,
        learner.summary,
        s=sections.section(sid, lang),
        state=_check_states(learner.attempts, [sid], lang)[sid],
        page=page,
        mastery=practice.mastery(learner.attempts),
    )
    return render("_check_only.html", lang, ctx)


@router.get("/section/{section_id}", response_class=HTMLResponse)
def one_section(request: Request, section_id: str) -> HTMLResponse:
    """One section alone (where forms return, and where the language switch keeps you)."""
    lang = lang_of(request)
    sid = _section_id(section_id, lang)
    # Remember the visit only for the learner's own navigation: a page on another site could
    # load this URL (an <img>, say) to move "continue where I left off" (Fetch Metadata).
    # Only a bookmark: the page is still shown when the file is read-only or busy.
    own = request.headers.get("sec-fetch-site", "none") in ("same-origin", "none")
    query = request.query_params.get("q")  # opened from a search hit: mark the words
    opened = open_id(request)  # ... and open the element holding them
    try:
        marks = highlighter(query, opened) if query else None
    except ValueError:
        marks = None  # an over-long q only loses its marks; the section still opens
    return section_page(request, sid, lang, marks, opened=opened, visit=own)


def section_page(
    request: Request,
    sid: int,
    lang: str,
    marks: Callable[[str], str] | None = None,
    audit: dict[str, Any] | None = None,
    opened: str | None = None,
    visit: bool = False,
) -> HTMLResponse:
    """Section ``sid`` alone in ``lang`` (``marks`` rewrites the HTML to mark search hits;
    ``audit``: the "Check my code" box's state, default :func:`~attnlab.web.common.audit_view`;
    ``opened``: the id of the element a search hit opens, shown unfolded; ``visit``: remember
    it as the learner's last section, in the transaction that reads their state)."""
    ctx = _sections_context(
        request,
        lang,
        [sections.section(sid, lang)],
        visit=sid if visit else None,
        page="section",
        current=sid,
        prev_id=sid - 1 if sid > 0 else None,
        next_id=sid + 1 if sid + 1 < example.SECTION_COUNT else None,
        audit=audit or audit_view(request, lang),
        opened=opened,
        found_mistake=found_mistake(opened, sid, lang),
        taught_terms=[t for t in knowledge.glossary(lang) if t.section == sid]
        if opened == f"s-{sid}"
        else [],
    )
    return render("section.html", lang, ctx, marks)


@router.get("/continue")
def continue_lesson(request: Request) -> Response:
    """Go to where the learner resumes: the first unfinished section in page order
    (:meth:`~attnlab.progress.summary.Summary.next_section`, as ``attnlab quiz``)."""
    lang = lang_of(request)
    target = settings(request).store().summary().next_section()
    return see_other(f"/section/{target}?lang={lang}" if target is not None else "/lesson")


@router.get("/glossary", response_class=HTMLResponse)
def glossary(request: Request) -> HTMLResponse:
    """The week's terms."""
    lang = lang_of(request)
    summary = settings(request).store().summary()
    terms = knowledge.glossary(lang)
    ctx = page_context(request, lang, summary, terms=terms, page="glossary")
    query = request.query_params.get("q")  # opened from a search hit: mark the words
    try:
        marks = highlighter(query, open_id(request)) if query else None
    except ValueError:
        marks = None
    return render("glossary.html", lang, ctx, marks)


@router.get("/api/progress")
def progress_json(request: Request) -> dict[str, object]:
    """This profile's progress as JSON (for scripts and the page's own checks)."""
    learner = settings(request).store().learner_state()
    s, attempts = learner.summary, learner.attempts
    return {
        "profile": s.profile,
        "completed": list(s.completed),
        "assessments": {str(k): v for k, v in s.assessments.items()},
        "last_section": s.last_section,
        "attempts": s.attempts,
        "correct": s.correct,
        "practice": {
            str(section): {"run": run, "mastered": done}
            for section, (run, done) in practice.mastery(attempts).items()
        },
    }


@router.get("/assets/code.css")
def code_stylesheet(request: Request) -> Response:
    """Highlighting colours for the code blocks (pygments). Pages link it with its hash in the
    address, so browsers keep it a year instead of fetching it on every page; asked without
    that hash (or an old one), it is sent with ``no-cache``, as the static files are."""
    current = request.url.path + "?" + request.url.query == code_css_url()
    return PlainTextResponse(
        code_css(), media_type="text/css",
        headers={"Cache-Control": IMMUTABLE if current else "no-cache"},
    )  # fmt: skip


@router.get("/figures/{lang}/{name}.svg")
def figure_file(lang: str, name: str) -> Response:
    """A figure of the lesson (``?v=`` in the page's link changes with attnlab's version, so
    the browser may keep it for good)."""
    options = ", ".join(registry.NAMES)
    if lang not in LANGS or name not in registry.NAMES:
        raise refused(404, "no_figure", found=repr(f"{lang}/{name}"[:40]), options=options)
    text = figures.svg(name, lang)
    if text is None:  # a trimmed install without the plots package
        raise refused(404, "no_figure", found=repr(name), options=options)
    cache = {"Cache-Control": "public, max-age=31536000, immutable"}
    return Response(str(text), media_type="image/svg+xml", headers=cache)


@router.get("/healthz")
def health() -> dict[str, str]:
    """Liveness probe for scripts."""
    return {"status": "ok"}
