"""Protections of the local server: request-size cap, trusted hosts, cross-site request checks.

* :class:`BodyLimit` refuses a body larger than the cap, by its ``Content-Length`` and by the
  bytes actually streamed (a client may lie or send chunked), before any route sees it.
* :func:`check_origin`: a state-changing request must come from a page of this server: its
  ``Origin`` (or, without one, its ``Referer``) must name the host the request was sent to. A
  page on another origin cannot forge that header in a browser.
* :func:`check_token`: and it must echo the per-session token (double-submit): a random value in
  a ``SameSite=Strict`` cookie, repeated in a hidden form field or the ``X-CSRF-Token`` header.
  (OWASP CSRF Prevention Cheat Sheet: "Verifying Origin With Standard Headers", "Signed
  Double-Submit Cookie".) The cookie is never sent on a cross-site request, so the two agree only
  when the request comes from our own page.
* :data:`SECURITY_HEADERS`: no framing (clickjacking), scripts only from this server.
* :class:`SessionAndHeaders` gives every request its session's token and every answer those
  headers; :func:`csrf_protect`, the dependency of every state-changing route, applies both
  checks.

Binding to 127.0.0.1 is the caller's job (:mod:`attnlab.cli.commands.serve`); the trusted-host list
refuses a DNS-rebinding page that reaches the port under another name.
"""

from __future__ import annotations

import hmac
import re
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import urlsplit

from starlette.requests import HTTPConnection, Request
from starlette.responses import JSONResponse, PlainTextResponse, Response

from attnlab.text.errors import filled
from attnlab.web.ui_text import UI

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

MAX_BODY_BYTES = 64 * 1024
CSRF_COOKIE = "attnlab_csrf"
CSRF_FIELD = "csrf_token"
CSRF_HEADER = "x-csrf-token"
_TOKEN = re.compile(r"^[A-Za-z0-9_-]{32,64}$")
LOCAL_HOSTS: tuple[str, ...] = ("127.0.0.1", "localhost", "::1", "[::1]")

SECURITY_HEADERS: dict[str, str] = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
        "img-src 'self' data:; frame-ancestors 'none'; form-action 'self'; base-uri 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
}


class RequestRefused(Exception):
    """A request the server will not act on: ``status`` and a one-line ``message`` (English),
    with its Chinese twin ``zh`` when there is one (:meth:`localized` picks)."""

    def __init__(self, status: int, message: str, zh: str | None = None, *, key: str = "") -> None:
        super().__init__(message)
        self.status, self.message, self.key = status, message, key
        self.texts = {"en": message, "zh": message if zh is None else zh}

    def localized(self, lang: str) -> str:
        """The reason in ``lang`` (``"zh"`` or ``"en"``)."""
        return self.texts.get(lang, self.message)


def refused(status: int, key: str, /, **fields: Any) -> RequestRefused:
    """The refusal :data:`attnlab.web.ui_text.UI` words as ``key``, in both languages."""
    texts = filled(UI, key, **fields)
    return RequestRefused(status, texts["en"], texts["zh"], key=key)


def _refusal(scope: Scope, status: int, message: str) -> Response:
    if str(scope.get("path", "")).startswith("/api/"):
        return JSONResponse({"error": message}, status_code=status)
    return PlainTextResponse(message, status_code=status)


class BodyLimit:
    """ASGI middleware: buffer the request body up to ``max_bytes``, refuse more with 413.

    Args:
        wide: ``(pattern, bytes)``: paths that match ``pattern`` may send up to ``bytes``
            (the "Check my code" form carries a whole file).
    """

    def __init__(
        self,
        app: Callable[..., Awaitable[None]],
        max_bytes: int = MAX_BODY_BYTES,
        wide: tuple[re.Pattern[str], int] | None = None,
    ):
        self.app, self.max_bytes, self.wide = app, max_bytes, wide

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.max_bytes
        if self.wide is not None and self.wide[0].fullmatch(str(scope.get("path", ""))):
            limit = max(limit, self.wide[1])
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > limit):
            found = declared.decode("latin-1")[:20]
            msg = f"request body too large: at most {limit} bytes, Content-Length {found}"
            await _refusal(scope, 413, msg)(scope, receive, send)
            return
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                break  # the client went away; let the app see the disconnect
            size += len(message.get("body", b""))
            if size > limit:
                msg = f"request body too large: at most {limit} bytes were allowed"
                await _refusal(scope, 413, msg)(scope, receive, send)
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        await self.app(scope, _replay(b"".join(chunks), receive), send)


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


def new_token() -> str:
    """A fresh per-session CSRF token (256 random bits)."""
    return secrets.token_urlsafe(32)


def valid_token(value: str | None) -> bool:
    """Whether ``value`` looks like a token we issued."""
    return bool(value) and bool(_TOKEN.match(value or ""))


def check_origin(headers: MutableMapping[str, str] | Any) -> None:
    """Raise 403 unless ``Origin`` (else ``Referer``) names the host the request was sent to."""
    host = headers.get("host", "")
    origin = headers.get("origin")
    source, value = ("Origin", origin) if origin else ("Referer", headers.get("referer"))
    if not value:
        raise refused(403, "no_origin")
    netloc = urlsplit(value).netloc if value != "null" else "null"
    if netloc.lower() != host.lower():
        raise refused(403, "cross_site", source=source, value=value[:80], host=host)


#: The refusals of a same-origin request whose session token is gone or stale (cookies cleared,
#: another tab started a new session): the page may offer the posted form again with a fresh
#: token (:mod:`attnlab.web.errors`). A cross-origin request is refused before these.
TOKEN_REFUSALS = ("no_token", "token_mismatch")


def check_token(cookie: str | None, sent: str | None) -> None:
    """Raise 403 unless the token sent with the request equals the session cookie's."""
    if not valid_token(cookie):
        raise refused(403, "no_token")
    # As bytes: compare_digest refuses str with non-ASCII characters (TypeError, a 500).
    if not sent or not hmac.compare_digest(_utf8(sent), _utf8(cookie)):
        raise refused(403, "token_mismatch")


def _utf8(text: str | None) -> bytes:
    return str(text).encode("utf-8", "surrogatepass")


class SessionAndHeaders:
    """ASGI middleware: gives each request its session's CSRF token (``request.state.csrf_token``,
    a new one when the cookie has none or a malformed one, then set as a cookie) and adds
    :data:`SECURITY_HEADERS` to every answer that lacks them.

    Plain ASGI rather than ``@app.middleware("http")``: the answer passes through as it is sent
    (no second task and stream per request), which is most of a small page's cost.
    """

    def __init__(self, app: Callable[..., Awaitable[None]]) -> None:
        self.app = app
        self.headers = [(k.lower().encode(), v.encode()) for k, v in SECURITY_HEADERS.items()]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        cookie = HTTPConnection(scope).cookies.get(CSRF_COOKIE)
        token = cookie if cookie and valid_token(cookie) else new_token()
        scope.setdefault("state", {})["csrf_token"] = token
        extra = list(self.headers)
        if token != cookie:
            jar = Response()
            jar.set_cookie(CSRF_COOKIE, token, httponly=True, samesite="strict", path="/")
            extra += [(k, v) for k, v in jar.raw_headers if k == b"set-cookie"]

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                have = {k.lower() for k, _ in headers}
                headers += [(k, v) for k, v in extra if k == b"set-cookie" or k not in have]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_headers)


async def csrf_protect(request: Request) -> None:
    """Dependency of every state-changing route: same-origin request carrying our token."""
    check_origin(request.headers)
    sent = request.headers.get(CSRF_HEADER)
    if sent is None and "form" in request.headers.get("content-type", ""):
        form = await request.form()
        value = form.get(CSRF_FIELD)
        sent = value if isinstance(value, str) else None
    check_token(request.cookies.get(CSRF_COOKIE), sent)


def allowed_hosts(bind_host: str, port: int | None = None) -> list[str]:
    """Host names the server answers to: loopback names plus the address it is bound to."""
    names = list(LOCAL_HOSTS)
    if bind_host not in names and bind_host not in ("0.0.0.0", "::"):
        names.append(bind_host)
    if bind_host in ("0.0.0.0", "::"):
        names.append("*")  # the learner asked to be reachable on every interface
    return names
