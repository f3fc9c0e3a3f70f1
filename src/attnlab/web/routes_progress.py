"""Forms that change the learner's progress: complete, answer, self-assess, graded exercises.

Every route validates its input and refuses with a 4xx and one line before writing anything;
all of them require the same-origin check and session token (:func:`common.csrf_protect`).
"""

from __future__ import annotations

import json
from typing import Annotated

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import Response

from attnlab.content import sections
from attnlab.grading import answers
from attnlab.inputs.text_limits import TextError, check_text
from attnlab.progress.exchange import ASSESSMENTS
from attnlab.web.common import csrf_protect, lang_of, section_url, see_other, settings
from attnlab.web.security import RequestRefused, refused

router = APIRouter(dependencies=[Depends(csrf_protect)])
BACKS = ("section", "lesson")


def _section(raw: str) -> int:
    try:
        return sections.parse_section_id(raw)
    except ValueError:
        shown = raw[:20] + ("…" if len(raw) > 20 else "")
        raise refused(404, "no_section", found=repr(shown)) from None


def _back(raw: str) -> str:
    if raw not in BACKS:
        raise refused(422, "bad_back", options=", ".join(BACKS), found=raw[:20])
    return raw


def _text(raw: str, kind: str) -> str:
    """``raw`` checked as learner text of ``kind`` (:func:`attnlab.inputs.text_limits.check_text`),
    else 422 with its one line."""
    try:
        return check_text(raw, kind)
    except TextError as exc:
        raise RequestRefused(422, exc.localized("en"), exc.localized("zh")) from None


@router.post("/section/{section_id}/complete")
def complete(
    request: Request, section_id: str, back: Annotated[str, Form()] = "section"
) -> Response:
    """Mark a section complete."""
    sid, where = _section(section_id), _back(back)
    store = settings(request).store()
    store.mark_complete(sid)
    store.set_last_section(sid)
    return _stay(sid, lang_of(request), where, f"complete-{sid}")


def _stay(sid: int, lang: str, where: str, anchor: str) -> Response:
    """Back to the form on the page it was on: ``/lesson#anchor`` or ``/section/N#anchor``."""
    return see_other(section_url(sid, lang, where, anchor=anchor))


@router.post("/section/{section_id}/answer")
def answer(
    request: Request,
    section_id: str,
    answer: Annotated[str, Form()],
    back: Annotated[str, Form()] = "section",
) -> Response:
    """Save the learner's answer to the knowledge check, then show the model answer."""
    sid, where = _section(section_id), _back(back)
    text = _text(answer, "check_answer")
    store = settings(request).store()
    store.record_attempt(f"check-{sid}", text, None)  # the redirect's GET records the visit
    return _stay(sid, lang_of(request), where, f"check-{sid}")


@router.post("/section/{section_id}/assess")
def assess(
    request: Request,
    section_id: str,
    status: Annotated[str, Form()],
    back: Annotated[str, Form()] = "section",
) -> Response:
    """Record the self-assessment: understood or review."""
    sid, where = _section(section_id), _back(back)
    if status not in ASSESSMENTS:
        raise refused(422, "bad_status", options=", ".join(ASSESSMENTS), found=status[:20])
    settings(request).store().set_assessment(sid, status)
    return _stay(sid, lang_of(request), where, f"assess-{sid}")


@router.post("/exercise/{exercise_id}")
def exercise(
    request: Request,
    exercise_id: str,
    answer: Annotated[str, Form()],
    back: Annotated[str, Form()] = "section",
) -> Response:
    """Grade a numeric exercise (the answer service checks its id and text) and save it."""
    try:
        done = answers.submit(exercise_id, answer)
    except answers.UnknownExercise:
        raise refused(404, "no_exercise", found=exercise_id[:20]) from None
    except TextError as exc:
        raise RequestRefused(422, exc.localized("en"), exc.localized("zh")) from None
    where = _back(back)
    settings(request).store().record_attempt(
        exercise_id, done.text, done.graded, json.dumps(done.data())
    )
    return _stay(done.section, lang_of(request), where, f"ex-{exercise_id}")
