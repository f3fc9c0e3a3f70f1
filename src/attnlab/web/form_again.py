"""The form a refused POST came from, to offer it again on the error page with what was typed.

A learner whose session cookie is gone (cookies cleared, another tab started a new session) or
whose answer was refused (e.g. only spaces) gets the error page with the posted form rebuilt
below the reason: the same address, the same hidden fields, the typed text filled in and the
page's current session token, so nothing typed is lost. Only our own same-origin forms reach
this (a cross-origin POST is refused by the Origin check before any token is looked at, and
is never offered again); every value is escaped by the template.
"""

from __future__ import annotations

from dataclasses import dataclass

from starlette.requests import Request

from attnlab.web.security import CSRF_FIELD

#: Posted fields the learner typed, shown as a text box, and the UI key of their label.
TYPED = {
    "answer": "your_answer",
    "text": "note_label",
    "code": "audit_code",
    "name": "audit_name",
    "init": "audit_init",
}
#: At most this many fields are carried over (our forms have five or fewer).
MAX_FIELDS = 8


@dataclass(frozen=True)
class FormAgain:
    """A posted form rebuilt: its ``action``, ``hidden`` fields and ``typed`` text fields
    (``(name, value, label key)``)."""

    action: str
    hidden: list[tuple[str, str]]
    typed: list[tuple[str, str, str]]


async def posted_form(request: Request) -> FormAgain | None:
    """The form ``request`` posted (its parsed body, as the route read it), or ``None`` for
    anything but a form POST to a page (``/api/`` answers JSON)."""
    if request.method != "POST" or request.url.path.startswith("/api/"):
        return None
    if "form" not in request.headers.get("content-type", ""):
        return None
    try:
        form = await request.form()
    except Exception:  # an unreadable body: nothing to offer again
        return None
    hidden: list[tuple[str, str]] = []
    typed: list[tuple[str, str, str]] = []
    for name, value in list(form.multi_items())[:MAX_FIELDS]:
        if name == CSRF_FIELD or not isinstance(value, str):
            continue
        if name in TYPED:
            typed.append((name, value, TYPED[name]))
        else:
            hidden.append((name, value))
    action = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return FormAgain(action, hidden, typed)
