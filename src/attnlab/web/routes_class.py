"""A class on the web: ``/join/TOKEN`` starts a learner's session, ``/teacher`` shows the
class report to the holder of the teacher key.

* ``GET /join/TOKEN`` uses the invitation once (:meth:`~attnlab.progress.sessions.SessionsMixin.
  join`) and sets the learner cookie (HttpOnly, SameSite=Lax so the link opened from a mail
  or chat works, Secure over https); from then on :func:`attnlab.web.common.settings` binds
  every route's store to that learner.
* ``/teacher`` asks for the key once, then keeps a teacher session in its own cookie (only its
  hash is stored); a learner's cookie opens nothing here. Wrong keys are counted per client in
  the store, so after :data:`~attnlab.progress.sessions.MAX_FAILURES` in a minute the answer is
  429 with ``Retry-After``, without checking the key and without sleeping in the request.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import HTMLResponse, Response

from attnlab.content import sections
from attnlab.grading import class_report, practice
from attnlab.progress.sessions import KeyRefused
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


def _set_session(request: Request, response: Response, name: str, value: str) -> None:
    secure = request.url.scheme == "https"
    response.set_cookie(name, value, httponly=True, samesite="lax", path="/", secure=secure)


@router.get("/join/{token}")
def join(request: Request, token: str) -> Response:
    """Start the learner session of an unused invitation, then open the lesson."""
    lang = lang_of(request)
    started = settings(request).thread_store().join(token[:200])
    if started is None:
        raise refused(404, "join_bad")
    response = see_other(f"/lesson?lang={lang}")
    _set_session(request, response, LEARNER_COOKIE, started[0])
    return response


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
    _set_session(request, response, TEACHER_COOKIE, session)
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
