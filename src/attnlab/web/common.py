"""What every route shares: settings, the per-thread progress store, language, page context,
the cross-site check (:func:`attnlab.web.security.csrf_protect`, imported from here by the
routes) and redirects."""

from __future__ import annotations

import hashlib
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from fastapi import Request
from fastapi.responses import HTMLResponse, RedirectResponse

from attnlab.content import sections
from attnlab.core.example import SECTION_COUNT
from attnlab.progress.notes import new_note_id
from attnlab.progress.store import ProgressStore, StoreError, StoreReadOnly
from attnlab.progress.summary import Summary
from attnlab.text.i18n import LANGS, error_message
from attnlab.web.security import CSRF_FIELD, refused
from attnlab.web.security import csrf_protect as csrf_protect  # the routes take it from here
from attnlab.web.ui_text import UI

LANG_COOKIE = "attnlab_lang"
#: Stands for a fresh note id in a rendered page until :func:`render` fills one in.
NEW_NOTE = "new-note-id-placeholder"
_NEW_NOTE_BYTES = NEW_NOTE.encode()
#: A class learner's session (set by ``/join/TOKEN``); its hash is kept in the store.
LEARNER_COOKIE = "attnlab_learner"
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
    #: A PostgreSQL server's URL (``None``: ``$ATTNLAB_DB``, else the file in ``data_dir``).
    db: str | None = None
    #: Serve class learners only: a visitor without a learner session is asked for their link.
    class_only: bool = False
    #: Answering other machines (host names beyond the loopback ones): store errors shown to
    #: a visitor without a session then name neither the file nor the server.
    shared: bool = False
    #: The learner session cookie of the request (``None``: no session; see :func:`settings`).
    session: str | None = None
    _local: threading.local = field(default_factory=threading.local)
    #: Every store this app's threads opened (:meth:`close_stores` at a clean stop).
    _opened: weakref.WeakSet[ProgressStore] = field(default_factory=weakref.WeakSet)
    _learner: list[str | None] = field(default_factory=list)

    def store(self) -> ProgressStore:
        """The progress store of this request's learner: the learner of its class session, else
        the server's profile (refused when the server serves class learners only, or when the
        session is unknown, e.g. revoked). It acts through :meth:`thread_store`'s connection.
        """
        store = self.thread_store()
        if not self._learner:
            self._learner.append(self._profile_of_session(store))
        profile = self._learner[0]
        return store if profile is None else store.as_profile(profile)

    def _profile_of_session(self, store: ProgressStore) -> str | None:
        if self.session is None:
            if self.class_only:
                raise refused(401, "class_only")
            return None
        profile = store.learner_of(self.session)
        if profile is None:
            raise refused(403, "session_unknown")
        return profile

    def thread_store(self) -> ProgressStore:
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
                store = ProgressStore.open(self.data_dir, self.profile, self.db)
            except ValueError as exc:
                why = {lang: error_message(exc, lang) for lang in LANGS}
                raise refused(503, "store_unavailable", why=why) from None
            self._local.store = store
            self._opened.add(store)
        return store

    def close_stores(self) -> None:
        """At a clean stop: empty the WAL of every store this app opened into its file, then
        close them (nothing of the store is left in a ``-wal`` beside ``progress.sqlite3``)."""
        for store in list(self._opened):
            store.checkpoint()
            store.close()


def store_status(exc: StoreError) -> int:
    """The HTTP status for a store that cannot be used: 409 if read-only, else 503 (busy, or
    the file is broken; the learner can retry once it is fixed)."""
    return 409 if isinstance(exc, StoreReadOnly) else 503


def settings(request: Request) -> Settings:
    """The app's settings bound to this request's learner session (one object per request:
    its :meth:`Settings.store` looks the session up once)."""
    bound: Settings | None = getattr(request.state, "settings", None)
    if bound is None:
        chosen: Settings = request.app.state.settings
        bound = replace(chosen, session=request.cookies.get(LEARNER_COOKIE), _learner=[])
        request.state.settings = bound
    return bound


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
    mark search hits), remembering the language.

    The page carries an ETag of its HTML and asks the browser to check it before reuse
    (``no-cache``, ``private``: it holds the learner's own answers); a browser that sends the
    same tag back gets ``304 Not Modified`` and no body.
    """
    request: Request = ctx["request"]
    html = request.app.state.templates.get_template(template).render(**ctx)
    body = (transform(html) if transform else html).encode()  # encoded once, sent as is
    # Weak: the same HTML is sent gzipped or not, equivalent but not byte-identical. SHA-256
    # (the CPU's own instructions): 0.1 ms for the 220 KB lesson, a third of BLAKE2b's time.
    etag = 'W/"' + hashlib.sha256(body).hexdigest()[:24] + '"'
    headers = {"ETag": etag, "Cache-Control": "private, no-cache"}
    if request.method == "GET" and etag in _tags(request.headers.get("if-none-match", "")):
        response = HTMLResponse(status_code=304, headers=headers)
    else:  # each new-note box gets its own id (a re-sent form updates that note, not a copy)
        parts = body.split(_NEW_NOTE_BYTES)
        body = parts[0] + b"".join(new_note_id().encode() + part for part in parts[1:])
        response = HTMLResponse(body, headers=headers)
    remember_lang(request, response, lang)
    return response


def _tags(header: str) -> set[str]:
    """The entity tags of an ``If-None-Match`` header (weak or strong: compared weakly)."""
    tags = {t.strip() for t in header.split(",") if t.strip()}
    return tags | {"W/" + t for t in tags if not t.startswith("W/")}


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
        "signed_in": settings(request).session is not None,  # a class learner: "sign out"
        **extra,
    }


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
