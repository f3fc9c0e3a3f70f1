"""Practice with new numbers on the web: a dealt exercise for one section's computation, its
answer form graded in place, the worked solution and new numbers; every answer is saved in the
learner's profile under ``practice-N``, as ``attnlab practice`` saves it."""

from __future__ import annotations

import json
import secrets
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import HTMLResponse, Response

from attnlab.grading import answers, ladder, practice, reasons
from attnlab.text.errors import InputError
from attnlab.web.common import csrf_protect, lang_of, page_context, render, see_other, settings
from attnlab.web.routes_progress import _section, _text
from attnlab.web.security import RequestRefused, refused
from attnlab.web.ui_text import UI

router = APIRouter()
SEED_MAX = 999_999_999


def _practice_section(raw: str) -> int:
    sid = _section(raw)
    if sid not in practice.SECTIONS:
        known = ", ".join(str(s) for s in practice.SECTIONS)
        raise refused(404, "no_practice", found=sid, known=known)
    return sid


def _seed(raw: str) -> int:
    if not raw.isascii() or not raw.isdigit() or len(raw) > 9:
        raise refused(422, "bad_seed", found=raw[:20])
    return int(raw)


def _mine(attempts: list[dict[str, Any]], seed: int) -> list[dict[str, Any]]:
    """The attempts on the exercise dealt with ``seed``, oldest first."""
    with_data = [{**a, "data": practice.stored_data(a)} for a in attempts]
    return [a for a in with_data if a["data"].get("seed") == seed]


@router.get("/practice/{section_id}", response_class=HTMLResponse)
def practice_page(request: Request, section_id: str, seed: str | None = None) -> Response:
    """The exercise dealt with ``seed`` (a new seed when none is given), its last verdict, and
    the solution once it was asked for."""
    sid, lang = _practice_section(section_id), lang_of(request)
    if seed is None:
        return see_other(f"/practice/{sid}?lang={lang}&seed={secrets.randbelow(10**6)}")
    dealt = practice.deal(sid, _seed(seed))
    store = settings(request).store()
    tries = store.attempts(practice.attempt_id(sid))
    mine = _mine(tries, dealt.seed)
    graded = [a for a in mine if a["data"].get("kind") != "solution"]
    last = graded[-1] if graded else None
    shown = practice.shown(dealt)
    verdict = (
        reasons.say(last["data"], lang, shown, dealt.decimals, last["answer"]) if last else None
    )
    wrong = ladder.wrong_run(graded)
    helped = practice.help_text(dealt, last["data"], wrong, lang, last["answer"]) if last else None
    run, done = practice.mastery(store.attempts()).get(sid, (0, False))
    n = practice.MASTERY
    ctx = page_context(
        request, lang, store.summary(), page="practice", section=sid, seed=dealt.seed,
        text=practice.exercise_text(dealt, lang), verdict=verdict, last=last, help=helped,
        solution=practice.solution_text(dealt, lang) if len(mine) > len(graded) else None,
        run=UI[lang]["practice_mastered" if done else "practice_run"].format(run=run, n=n),
    )  # fmt: skip
    return render("practice.html", lang, ctx)


@router.post("/practice/{section_id}/answer", dependencies=[Depends(csrf_protect)])
def practice_answer(
    request: Request, section_id: str, seed: Annotated[str, Form()], answer: Annotated[str, Form()]
) -> Response:
    """Grade the answer with the one grader and save it; back to the exercise's verdict."""
    sid, lang = _practice_section(section_id), lang_of(request)
    dealt = practice.deal(sid, _seed(seed))
    text = _text(answer, "exercise_answer")
    try:
        verdict = dealt.grade(text)
    except InputError as exc:  # the grader's words after the field, named as the page names it
        raise RequestRefused(
            422,
            f"{UI['en']['field_answer']}: {exc.localized('en')}",
            f"{UI['zh']['field_answer']}：{exc.localized('zh')}",
        ) from None
    graded = verdict.correct if verdict.kind in answers.GRADED else None
    data = json.dumps(practice.attempt_data(dealt, verdict))
    store = settings(request).store()
    store.record_attempt(practice.attempt_id(sid), text, graded, data)
    if graded is False:  # the worked solution is shown after the second wrong try in a row
        mine = _mine(store.attempts(practice.attempt_id(sid)), dealt.seed)
        tries = [a for a in mine if a["data"].get("kind") != "solution"]
        if practice.reveals(answers.verdict_data(verdict), ladder.wrong_run(tries)):
            shown = json.dumps(practice.attempt_data(dealt, None))
            store.record_attempt(practice.attempt_id(sid), dealt.id, None, shown)
    return see_other(f"/practice/{sid}?lang={lang}&seed={dealt.seed}#verdict")


@router.post("/practice/{section_id}/solution", dependencies=[Depends(csrf_protect)])
def practice_solution(request: Request, section_id: str, seed: Annotated[str, Form()]) -> Response:
    """Record that the solution was shown (the run of right answers starts again), then show it."""
    sid, lang = _practice_section(section_id), lang_of(request)
    dealt = practice.deal(sid, _seed(seed))
    data = json.dumps(practice.attempt_data(dealt, None))
    settings(request).store().record_attempt(practice.attempt_id(sid), dealt.id, None, data)
    return see_other(f"/practice/{sid}?lang={lang}&seed={dealt.seed}#solution")
