"""What every route shares: settings, the per-thread progress store, language, page context,
the cross-site check and redirects."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fastapi import Request
from fastapi.responses import HTMLResponse, RedirectResponse

from attnlab.content import sections
from attnlab.core.example import SECTION_COUNT
from attnlab.progress.store import ProgressStore, StoreError, StoreReadOnly
from attnlab.progress.summary import Summary
from attnlab.text.i18n import LANGS, error_message
from attnlab.web.security import (
    CSRF_COOKIE,
    CSRF_FIELD,
    CSRF_HEADER,
    check_origin,
    check_token,
    refused,
)
from attnlab.web.ui_text import UI

LANG_COOKIE = "attnlab_lang"
#: The sections whose page carries the "Check my code" box (13: one head, 15: several).
AUDIT_SECTIONS = (13, 15)


@dataclass
class Settings:
    """How :func:`attnlab.web.app.create_app` was configured."""

    data_dir: Path | None
    profile: str | None
    default_lang: str
    figures: bool
    #: Why "Check my code" is off (``"shared"`` or ``"sandbox"``), ``None`` when it is on.
    audit_off: str | None = None
    _local: threading.local = field(default_factory=threading.local)

    def store(self) -> ProgressStore:
        """This thread's connection to the progress file (SQLite connections are per thread;
        WAL mode lets them all write safely, see :mod:`attnlab.progress.store`).

        A :class:`StoreError` here or from the store's methods reaches the learner as
        :func:`store_status` and one line in the page's language (``create_app``'s handler).
        """
        store: ProgressStore | None = getattr(self._local, "store", None)
        # Reopen a store closed because the file became writable (or about to be: the learner
        # fixed the permissions), so answers are saved again without restarting the server.
        if store is None or store.closed or (not store.writable and store.writable_now()):
            try:
                store = ProgressStore.open(self.data_dir, self.profile)
            except ValueError as exc:
                why = {lang: error_message(exc, lang) for lang in LANGS}
                raise refused(503, "store_unavailable", why=why) from None
            self._local.store = store
        return store


def store_status(exc: StoreError) -> int:
    """The HTTP status for a store that cannot be used: 409 if read-only, else 503 (busy, or
    the file is broken; the learner can retry once it is fixed)."""
    return 409 if isinstance(exc, StoreReadOnly) else 503


def settings(request: Request) -> Settings:
    """The app's settings."""
    chosen: Settings = request.app.state.settings
    return chosen


def lang_of(request: Request) -> str:
    """``?lang=`` if given (refused unless zh/en), else the language cookie, else the default."""
    asked = request.query_params.get("lang")
    if asked is not None:
        if asked not in LANGS:
            raise refused(400, "bad_lang", options=", ".join(LANGS), found=asked[:20])
        return asked
    cookie = request.cookies.get(LANG_COOKIE)
    return cookie if cookie in LANGS else settings(request).default_lang


def remember_lang(request: Request, response: Any, lang: str) -> None:
    """Keep the chosen language for the next pages (a cookie, SameSite=Strict)."""
    if request.cookies.get(LANG_COOKIE) != lang:
        response.set_cookie(LANG_COOKIE, lang, samesite="strict", httponly=True, max_age=31536000)


def render(
    template: str, lang: str, ctx: dict[str, Any], transform: Callable[[str], str] | None = None
) -> HTMLResponse:
    """The page ``template`` rendered with ``ctx`` (``transform`` rewrites the HTML, e.g. to
    mark search hits), remembering the language."""
    request: Request = ctx["request"]
    html = request.app.state.templates.get_template(template).render(**ctx)
    response = HTMLResponse(transform(html) if transform else html)
    remember_lang(request, response, lang)
    return response


def page_context(request: Request, lang: str, summary: Summary, **extra: Any) -> dict[str, Any]:
    """Variables every page template uses."""
    done = set(summary.completed)
    review = set(summary.to_review)  # marked "review again": unfinished, even when completed
    nav = [
        (s.id, s.label, s.title, "review" if s.id in review else "done" if s.id in done else "")
        for s in sections.all_sections(lang)
    ]
    next_id = summary.next_section()
    return {
        "request": request,
        "lang": lang,
        "other_lang": "en" if lang == "zh" else "zh",
        "ui": UI[lang],
        "summary": summary,
        "done": done,
        "total": SECTION_COUNT,
        "nav": nav,
        "next_section": sections.section(next_id, lang) if next_id is not None else None,
        # Why "continue" goes there: the learner asked to review it, or it is next undone.
        "next_why": "review" if next_id in review else "next",
        "csrf_token": request.state.csrf_token,
        "csrf_field": CSRF_FIELD,
        "figures_on": settings(request).figures,
        "mastery": None,  # {section: (run, mastered)} where a page shows practice links
        **extra,
    }


async def csrf_protect(request: Request) -> None:
    """Dependency of every state-changing route: same-origin request carrying our token."""
    check_origin(request.headers)
    sent = request.headers.get(CSRF_HEADER)
    if sent is None and "form" in request.headers.get("content-type", ""):
        form = await request.form()
        value = form.get(CSRF_FIELD)
        sent = value if isinstance(value, str) else None
    check_token(request.cookies.get(CSRF_COOKIE), sent)


def audit_view(request: Request, lang: str, **more: Any) -> dict[str, Any]:
    """What the "Check my code" boxes show: on which sections, why they are off (a sentence, or
    ``None``), the form's values and, after a check, its ``result`` (``more`` overrides)."""
    off = settings(request).audit_off
    form = {"code": "", "name": "", "kind": "auto", "init": ""}
    view = {"sections": AUDIT_SECTIONS, "off": UI[lang][f"audit_off_{off}"] if off else None}
    return {**view, "form": form, "result": None, **more}


def see_other(url: str) -> RedirectResponse:
    """Post/Redirect/Get: the browser reloads the page with GET, so a refresh never re-posts."""
    return RedirectResponse(url, status_code=303)


def section_url(section_id: int, lang: str, back: str = "section", anchor: str = "") -> str:
    """Where to return after a form on section ``section_id``."""
    if back == "lesson":
        return f"/lesson?lang={lang}#{anchor or f's-{section_id}'}"
    return f"/section/{section_id}?lang={lang}" + (f"#{anchor}" if anchor else "")
