"""A class on the web: ``/join/TOKEN`` starts a learner's session, ``/teacher`` shows the
class report to the holder of the teacher key.

* ``GET /join/TOKEN`` shows a button; its ``POST`` uses the invitation once
  (:meth:`~attnlab.progress.sessions.SessionsMixin.join`: a chat app's preview GET uses
  nothing up) and sets the learner cookie (HttpOnly, SameSite=Lax so the link opened from a
  mail or chat works, Secure over https, kept for
  :data:`~attnlab.progress.sessions.LEARNER_SESSION`); from then on
  :func:`attnlab.web.common.settings` binds every route's store to that learner.
  ``POST /leave`` signs the learner out.
* ``/teacher`` asks for the key once, then keeps a teacher session in its own cookie (only its
  hash is stored); a learner's cookie opens nothing here. Wrong keys are counted per client in
  the store, so after :data:`~attnlab.progress.sessions.MAX_FAILURES` in a minute the answer is
  429 with ``Retry-After``, without checking the key and without sleeping in the request.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import HTMLResponse, Response

from attnlab.content import sections
from attnlab.grading import class_report, practice
from attnlab.progress.sessions import LEARNER_SESSION, TEACHER_SESSION, KeyRefused
from attnlab.progress.summary import Summary
from attnlab.web.common import (
    LEARNER_COOKIE,
    csrf_protect,
    lang_of,
    page_context,
    render,
    see_other,
    settings,
)
from attnlab.web.security import refused

router = APIRouter()
TEACHER_COOKIE = "attnlab_teacher"
_NOBODY = Summary("", (), {}, None, 0, 0)


def _set_session(
    request: Request, response: Response, name: str, value: str, age: timedelta
) -> None:
    """The session cookie ``name``: HttpOnly, SameSite=Lax, Secure over https, kept ``age``
    (as long as the session: a closed browser does not end it)."""
    secure = request.url.scheme == "https"
    response.set_cookie(name, value, httponly=True, samesite="lax", path="/", secure=secure,
                        max_age=int(age.total_seconds()))  # fmt: skip


@router.get("/join/{token}", response_class=HTMLResponse)
def join_page(request: Request, token: str) -> Response:
    """An unused invitation's page: one button that starts the session (a POST). Opening the
    link uses nothing up, so a chat app's preview of it leaves it working (404 for a link that
    is unknown, used or revoked)."""
    if not settings(request).thread_store().invite_open(token[:200]):
        raise refused(404, "join_bad")
    lang = lang_of(request)
    days = LEARNER_SESSION.days
    ctx = page_context(request, lang, _NOBODY, page="join", token=token[:200], session_days=days)
    ctx["summary"] = None
    return render("join.html", lang, ctx)  # Referrer-Policy same-origin: the link stays here


@router.post("/join/{token}", dependencies=[Depends(csrf_protect)])
def join(request: Request, token: str) -> Response:
    """Use the invitation: start its learner's session, then open the lesson."""
    lang = lang_of(request)
    started = settings(request).thread_store().join(token[:200])
    if started is None:
        raise refused(404, "join_bad")
    response = see_other(f"/lesson?lang={lang}")
    _set_session(request, response, LEARNER_COOKIE, started[0], LEARNER_SESSION)
    return response


@router.post("/leave", dependencies=[Depends(csrf_protect)])
def leave(request: Request) -> Response:
    """Sign this browser's learner out: the session ends in the store (its cookie opens
    nothing, on any worker) and the cookie goes."""
    cookie = request.cookies.get(LEARNER_COOKIE)
    if cookie:
        settings(request).thread_store().end_session(cookie[:200])
    response = see_other(f"/signed-out?lang={lang_of(request)}")
    response.delete_cookie(LEARNER_COOKIE, path="/")
    return response


@router.get("/signed-out", response_class=HTMLResponse)
def signed_out(request: Request) -> Response:
    """Said after signing out (reachable without a session, also on a class-only server)."""
    lang = lang_of(request)
    ctx = page_context(request, lang, _NOBODY, page="join", token=None)
    ctx["summary"] = None
    return render("join.html", lang, ctx)


def _teacher_class(request: Request) -> int | None:
    cookie = request.cookies.get(TEACHER_COOKIE)
    return None if not cookie else settings(request).thread_store().teacher_of(cookie[:200])


def _form(request: Request, status: int, message: str = "", wait: int | None = None) -> Response:
    lang = lang_of(request)
    ctx = page_context(request, lang, _NOBODY, page="teacher", report=None, message=message)
    ctx["summary"] = None  # a teacher has no progress bar
    response = render("teacher.html", lang, ctx)
    response.status_code = status
    if wait is not None:
        response.headers["Retry-After"] = str(wait)
    return response


@router.get("/teacher", response_class=HTMLResponse)
def teacher(request: Request) -> Response:
    """The class report for a teacher session, else the form asking for the key (403)."""
    class_id = _teacher_class(request)
    if class_id is None:
        return _form(request, 403)
    lang = lang_of(request)
    report = class_report.build(settings(request).thread_store().class_data(class_id))
    ctx = page_context(request, lang, _NOBODY, page="teacher", report=report, message="",
                       titles=_titles(lang), words=_words(report, lang),
                       mastery_needed=practice.MASTERY)  # fmt: skip
    ctx["summary"] = None
    return render("teacher.html", lang, ctx)


@router.post("/teacher", dependencies=[Depends(csrf_protect)])
def teacher_key(request: Request, key: Annotated[str, Form(max_length=200)]) -> Response:
    """Check the teacher key: a teacher session and the report, else 403 (429 after too many
    wrong keys from this client)."""
    client = request.client.host if request.client else "?"
    try:
        session, _ = settings(request).thread_store().teacher_login(key, client)
    except KeyRefused as exc:
        status = 403 if exc.wait is None else 429
        return _form(request, status, exc.localized(lang_of(request)), exc.wait)
    response = see_other(f"/teacher?lang={lang_of(request)}")
    _set_session(request, response, TEACHER_COOKIE, session, TEACHER_SESSION)
    return response


@router.post("/teacher/leave", dependencies=[Depends(csrf_protect)])
def teacher_leave(request: Request) -> Response:
    """End this browser's teacher session (on a shared computer the next user sees the key form
    again, and the old cookie opens nothing anywhere)."""
    cookie = request.cookies.get(TEACHER_COOKIE)
    if cookie:
        settings(request).thread_store().end_session(cookie[:200])
    response = see_other(f"/teacher?lang={lang_of(request)}")
    response.delete_cookie(TEACHER_COOKIE, path="/")
    return response


def _titles(lang: str) -> dict[int, str]:
    return {s.id: f"{s.label} {s.title}" for s in sections.all_sections(lang)}


def _words(report: dict[str, Any], lang: str) -> dict[str, Any]:
    """The report's verdicts and mistakes worded in ``lang`` (the template only places them)."""
    verdicts = {(p["profile"], e): class_report.verdict_line(e, v, lang)
                for p in report["learners"] for e, v in p["exercises"].items()}  # fmt: skip
    blocks = [*report["exercises"].values(), *report["practice"].values()]
    names = {m["mistake"] for e in blocks for m in e["mistakes"]}
    return {"verdicts": verdicts,
            "mistakes": {n: class_report.mistake_title(n, lang) for n in names}}  # fmt: skip
