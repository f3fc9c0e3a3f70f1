"""Notes and bookmarks on the web: each section's note box and bookmark toggle, and "My notes".

Both forms work without JavaScript (a POST with the session token, then Post/Redirect/Get back
to the section). With JavaScript the note box saves as the learner types (``app.js``): the same
POST sent with ``Accept: application/json`` answers ``{"saved": ..., "deleted": ...}`` instead of
redirecting; so does the bookmark toggle (``{"bookmarked": ...}``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Annotated

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response

from attnlab.content import sections
from attnlab.progress.notes import Note
from attnlab.text.i18n import error_message
from attnlab.web.common import (
    NEW_NOTE,
    csrf_protect,
    lang_of,
    page_context,
    render,
    section_url,
    see_other,
    settings,
)
from attnlab.web.routes_progress import _back, _section, _text
from attnlab.web.security import RequestRefused

router = APIRouter()


@dataclass
class NotesView:
    """The learner's notes and bookmarks as the section templates show them: earlier notes
    listed, the latest one in the note box (a new id when the section has none)."""

    by_section: dict[int, list[Note]]
    marks: set[int]

    @classmethod
    def of(cls, notes: Iterable[Note], bookmarks: Iterable[int]) -> NotesView:
        """The view of ``notes`` (oldest first) and the bookmarked sections."""
        by_section: dict[int, list[Note]] = {}
        for note in notes:
            by_section.setdefault(note.section, []).append(note)
        return cls(by_section, set(bookmarks))

    def earlier(self, section: int) -> list[Note]:
        """The section's notes before the one in the box."""
        return self.by_section.get(section, [])[:-1]

    def current(self, section: int) -> Note | None:
        """The note in the box: the section's latest."""
        mine = self.by_section.get(section)
        return mine[-1] if mine else None

    def box_id(self, section: int) -> str:
        """The id the note box saves under: the latest note's, or :data:`NEW_NOTE` (which
        :func:`~attnlab.web.common.render` replaces with a fresh id after taking the page's
        ETag, so a page without notes keeps its tag)."""
        note = self.current(section)
        return note.id if note else NEW_NOTE


def _wants_json(request: Request) -> bool:
    return request.headers.get("accept", "").startswith("application/json")


@router.post("/section/{section_id}/note", dependencies=[Depends(csrf_protect)])
def save_note(
    request: Request,
    section_id: str,
    note_id: Annotated[str, Form()],
    text: Annotated[str, Form()] = "",
    back: Annotated[str, Form()] = "section",
) -> Response:
    """Save the section's note box (or a note's form on "My notes", ``back="notes"``): create
    or update the note, or delete it when emptied."""
    sid, lang = _section(section_id), lang_of(request)
    where = back if back == "notes" else _back(back)  # "notes": from "My notes"
    note_id = _text(note_id, "note_id")
    store = settings(request).store()
    saved, deleted = None, False
    try:
        if text.strip():
            saved = store.save_note(sid, note_id, _text(text, "note")).updated_at
        elif any(n.id == note_id for n in store.notes(sid)):
            store.delete_note(note_id)
            deleted = True
    except ValueError as exc:
        raise RequestRefused(422, error_message(exc, lang)) from None
    if _wants_json(request):
        return JSONResponse({"saved": saved, "id": note_id, "deleted": deleted})
    if where == "notes":
        return see_other(f"/notes?lang={lang}#" + (f"mynote-{note_id}" if saved else "notes"))
    return see_other(section_url(sid, lang, where, anchor=f"notes-{sid}"))


@router.post("/section/{section_id}/bookmark", dependencies=[Depends(csrf_protect)])
def bookmark(
    request: Request, section_id: str, back: Annotated[str, Form()] = "section"
) -> Response:
    """Bookmark the section, or remove its bookmark (with ``Accept: application/json``: answer
    ``{"bookmarked": ...}``, the state now, instead of redirecting)."""
    sid, where = _section(section_id), _back(back)
    store = settings(request).store()
    store.toggle_bookmark(sid)
    if _wants_json(request):
        return JSONResponse({"bookmarked": sid in store.bookmarks()})
    return see_other(section_url(sid, lang_of(request), where, anchor=f"bookmark-{sid}"))


@router.get("/notes", response_class=HTMLResponse)
def my_notes(request: Request) -> HTMLResponse:
    """Every note and bookmark of this profile, with links to their sections."""
    lang = lang_of(request)
    learner = settings(request).store().learner_state()  # one statement, one snapshot
    view = NotesView.of(learner.notes, learner.bookmarks)
    titled = {s: sections.section(s, lang) for s in sorted({*view.by_section, *view.marks})}
    ctx = page_context(request, lang, learner.summary, page="notes", view=view, titled=titled)
    return render("notes.html", lang, ctx)
