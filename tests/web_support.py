"""What the web tests send as the lesson page would: the test client's origin, and a form POST
(or a ``fetch``) from that page carrying the session's CSRF token.

One helper for every test file, so the page's side of the CSRF contract (the ``csrf_token``
form field, the ``X-CSRF-Token`` header, the ``attnlab_csrf`` cookie, a same-origin ``Origin``)
is written once.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: The test clients' ``base_url``: the origin a same-site request names.
ORIGIN = "http://127.0.0.1"
#: One page of each type the web lesson serves (the accessibility checks walk them all).
PAGE_TYPES = [
    "/lesson",
    "/section/0",
    "/section/10",
    "/section/13",
    "/explorer",
    "/explorer?n_head=2",
    "/glossary",
    "/notes",
    "/search?q=mask",
    "/practice/5?seed=1",
    "/teacher",
    "/no-such-page",
]
#: The cookie holding the session's CSRF token (set by any page, e.g. ``/healthz``).
CSRF_COOKIE = "attnlab_csrf"
#: The form field and the header a page sends the token back in.
CSRF_FORM_FIELD = "csrf_token"
CSRF_HEADER = "X-CSRF-Token"


def csrf_token(client: Any) -> str:
    """The session's CSRF token, as the page read it from its cookie."""
    return client.cookies[CSRF_COOKIE]


def post_form(
    client: Any,
    url: str,
    form: Mapping[str, Any] | None = None,
    *,
    headers: Mapping[str, Any] | None = None,
    origin: str | None = ORIGIN,
    follow_redirects: bool = False,
    **fields: Any,
) -> Any:
    """A form POST from the lesson page: the session's token first, then ``form`` and
    ``fields``; ``Origin: origin`` (``None``: the client already sends its own), then
    ``headers``. Redirects are not followed unless asked."""
    data = {CSRF_FORM_FIELD: csrf_token(client), **(form or {}), **fields}
    sent = {"Origin": origin} if origin is not None else {}
    return client.post(
        url, data=data, headers={**sent, **(headers or {})}, follow_redirects=follow_redirects
    )


def fetch_headers(client: Any, headers: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The headers of the page's ``fetch`` calls (same origin, the token in its header), then
    ``headers``."""
    return {"Origin": ORIGIN, CSRF_HEADER: csrf_token(client), **(headers or {})}
