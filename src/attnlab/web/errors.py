"""How the web lesson answers a request it does not carry out: refusals (4xx) and failures (500).

* A refusal (:class:`~attnlab.web.security.RequestRefused`, a form field that is missing, a page
  or method that does not exist) is a page of the site's layout (top bar, navigation, search
  box) in the learner's language, or ``{"error": ...}`` for ``/api/`` routes, with one line
  saying what was expected and what was found (a field named in the page's language). The page
  shows no progress bar: reading the progress may be what failed.
* A form refused for its content (422) or for a lost session token (403, same origin only)
  comes back below that line with what was typed and the current token, to send again
  (:mod:`attnlab.web.form_again`).
* An unforeseen failure (any other exception in a route) is answered with a 500 page in the
  learner's language that says the saved progress is safe and what to do, never the traceback
  or the exception's text. It is logged once with its traceback on :data:`LOGGER` (with the
  short reference the page shows; the server's own second copy is filtered out). Starlette
  then re-raises the exception to the server, which is how the test client makes a test fail
  when any route can raise.

Example::

    >>> r = client.get("/no-such-page?lang=en")
    >>> r.status_code, "page not found" in r.text
    (404, True)
"""

from __future__ import annotations

import contextlib
import html
import logging
import secrets
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from starlette.exceptions import HTTPException

from attnlab.progress.store import StoreError
from attnlab.text.i18n import DEFAULT_LANG, error_message
from attnlab.web.common import lang_of, store_status
from attnlab.web.form_again import FormAgain, posted_form
from attnlab.web.security import SECURITY_HEADERS, TOKEN_REFUSALS, RequestRefused
from attnlab.web.ui_text import UI

LOGGER = logging.getLogger("attnlab.web.errors")
"""Where unforeseen failures are logged (level ERROR, with the traceback)."""


class _LoggedOnce(logging.Filter):
    """On the server's logger: drop its own copy of a traceback :func:`_unforeseen` already
    logged (Starlette re-raises the exception to the server after the 500 page is sent)."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not getattr(exc, _LOGGED, False)


_LOGGED = "_attnlab_logged"
SERVER_LOGGER = "uvicorn.error"


def page_lang(request: Request) -> str:
    """The page's language for an error page: :func:`~attnlab.web.common.lang_of`, else the
    server's default (an unknown ``?lang=`` is itself the refusal being reported)."""
    try:
        return lang_of(request)
    except Exception:  # an error page must render whatever the request holds
        settings = getattr(request.scope.get("app"), "state", None)
        default = getattr(getattr(settings, "settings", None), "default_lang", None)
        return default if default in UI else DEFAULT_LANG


def render_error(
    request: Request,
    status: int,
    message: str,
    *,
    hint: str = "",
    lang: str | None = None,
    again: FormAgain | None = None,
) -> Response:
    """The refusal as JSON for ``/api/`` routes, else as a small HTML page in the page's
    language; ``message`` is the one line shown, ``hint`` an optional second paragraph,
    ``again`` the posted form offered again (:mod:`attnlab.web.form_again`)."""
    if request.url.path.startswith("/api/"):
        return JSONResponse({"error": f"{message} {hint}".strip()}, status_code=status)
    lang = lang or page_lang(request)
    page = request.app.state.templates.get_template("error.html").render(
        request=request,
        ui=UI[lang],
        lang=lang,
        other_lang="en" if lang == "zh" else "zh",
        page="error",
        summary=None,  # no progress bar: reading the progress may be what failed
        csrf_token=getattr(request.state, "csrf_token", ""),  # unset outside the middleware
        status=status,
        message=message,
        hint=hint,
        again=again,
    )
    return HTMLResponse(page, status_code=status)


async def _refused(request: Request, exc: Any) -> Response:
    """A refusal; a form refused for its session token or its content (422) comes back with
    what was typed, to send again (a lost token: with the reason in one line)."""
    lang = page_lang(request)
    message, token_lost = error_message(exc, lang), getattr(exc, "key", "") in TOKEN_REFUSALS
    again = await posted_form(request) if token_lost or exc.status == 422 else None
    if token_lost and again is not None:
        message = UI[lang]["session_lost"]
    return render_error(request, exc.status, message, lang=lang, again=again)


def field_name(name: str, lang: str) -> str:
    """A form or query field as the page names it (``answer`` → "回答"); unknown: as sent."""
    return UI[lang].get(f"field_{name}", name)


async def _invalid(request: Request, exc: Any) -> Response:
    """A field missing or malformed (FastAPI's validation): one line naming the field in the
    page's language, and a posted form offered again."""
    lang = page_lang(request)
    ui = UI[lang]
    first = exc.errors()[0] if exc.errors() else {}
    loc = [str(p) for p in first.get("loc", ())[1:]]
    where = ".".join([field_name(loc[0], lang), *loc[1:]]) if loc else ui["field_request"]
    again = await posted_form(request)
    sent = {name for name, *_ in [*again.hidden, *again.typed]} if again else set()
    if first.get("type") == "missing" and loc and loc[0] in sent:  # an empty form field
        message = ui["field_empty"].format(field=where)
    elif first.get("type") == "missing":
        message = ui["field_missing"].format(field=where)
    else:
        found = str(first.get("msg", ""))[:80]
        message = ui["field_invalid"].format(field=where, found=found)
    return render_error(request, 422, message, lang=lang, again=again)


def _http_error(request: Request, exc: Any) -> Response:
    """404/405 and the like from the router or the static files, in the page's language."""
    ui = UI[page_lang(request)]
    status = exc.status_code
    path = request.url.path[:80]
    if status == 404:
        message = ui["not_found"].format(path=path)
    elif status == 405:
        message = ui["method_not_allowed"].format(method=request.method, path=path)
    elif status == 400:  # the only HTTPException 400 is Starlette's: a body it cannot parse
        message = ui["unreadable_body"].format(detail=str(exc.detail)[:120])
    else:
        try:
            default = HTTPStatus(status).phrase
        except ValueError:
            default = ""
        detail = str(exc.detail)
        message = ui["http_error"].format(status=status) if detail == default else detail
    response = render_error(request, status, message)
    response.headers.update(getattr(exc, "headers", None) or {})  # 405 keeps its Allow header
    return response


def _store_failed(request: Request, exc: Any) -> Response:
    """The store is busy (503), read-only (409) or broken (503): one line, no traceback."""
    lang = page_lang(request)
    from attnlab.web.common import settings

    chosen = settings(request)
    if chosen.session is None and (chosen.shared or chosen.class_only):
        # Another machine's visitor with no session: not the store's path or server address
        # (the server's log has them).
        LOGGER.warning("store error shown without its details: %s", exc.en)
        return render_error(request, store_status(exc), UI[lang]["store_hidden"], lang=lang)
    return render_error(request, store_status(exc), exc.text(lang), lang=lang)


def _unforeseen(request: Request, exc: Exception) -> Response:
    """The 500 answer. It must not fail itself: the template is tried, then plain HTML."""
    ref = secrets.token_hex(4)
    LOGGER.error(
        "unhandled %s in %s %s (ref %s)",
        type(exc).__name__,
        request.method,
        request.url.path[:200],
        ref,
        exc_info=exc,
    )
    with contextlib.suppress(AttributeError):  # else the server logs its traceback again
        setattr(exc, _LOGGED, True)
    lang = page_lang(request)
    ui = UI[lang]
    message, hint = ui["crash"], ui["crash_hint"].format(ref=ref)
    try:
        response = render_error(request, 500, message, hint=hint, lang=lang)
    except Exception:  # e.g. a broken template; the learner still gets a page
        LOGGER.exception("the error page itself failed (ref %s)", ref)
        text = "".join(f"<p>{html.escape(t)}</p>" for t in (message, hint))
        response = HTMLResponse(
            f'<!doctype html><html lang="{lang}"><meta charset="utf-8">'
            f"<title>500 · {html.escape(ui['error'])}</title>{text}</html>",
            status_code=500,
        )
    for name, value in SECURITY_HEADERS.items():  # this answer bypasses the app's middleware
        response.headers.setdefault(name, value)
    return response


def add_error_handlers(app: FastAPI) -> None:
    """Install the refusal handlers and the 500 handler on ``app``."""
    app.add_exception_handler(RequestRefused, _refused)
    app.add_exception_handler(RequestValidationError, _invalid)
    app.add_exception_handler(HTTPException, _http_error)
    app.add_exception_handler(StoreError, _store_failed)
    app.add_exception_handler(Exception, _unforeseen)
    server = logging.getLogger(SERVER_LOGGER)
    if not any(isinstance(f, _LoggedOnce) for f in server.filters):
        server.addFilter(_LoggedOnce())
