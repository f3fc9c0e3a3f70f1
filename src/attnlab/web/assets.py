"""The page's own files under ``/static`` (stylesheet, scripts, fonts), with cache headers.

Pages link each file by :func:`static_url`, whose ``?v=`` is the hash of the file's content:
such an address never changes its answer, so it is sent with ``Cache-Control: immutable`` and a
browser keeps it a year instead of asking on every page. Any other address of a static file
(no or an old ``v``) is sent with ``no-cache``: the browser revalidates it with its ETag
(``304 Not Modified`` when unchanged, :class:`starlette.staticfiles.StaticFiles`).
"""

from __future__ import annotations

import hashlib
import os
from functools import cache
from pathlib import Path
from urllib.parse import parse_qs

from starlette.responses import Response
from starlette.staticfiles import StaticFiles
from starlette.types import Scope

from attnlab.web.fonts import IMMUTABLE

STATIC = Path(__file__).with_name("static")


@cache
def _digest(path: str) -> str:
    """The first 16 hex digits of the SHA-256 of the file at ``path`` (read once a process)."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]


def static_url(name: str) -> str:
    """The address of ``static/<name>`` that holds its content's hash, e.g.
    ``/static/style.css?v=0123456789abcdef``."""
    return f"/static/{name}?v={_digest(str(STATIC / name))}"


class CachedStatic(StaticFiles):
    """:class:`StaticFiles` that says how long a browser may keep each answer."""

    def file_response(
        self,
        full_path: str | os.PathLike[str],
        stat_result: os.stat_result,
        scope: Scope,
        status_code: int = 200,
    ) -> Response:
        """The file (or ``304``), immutable when asked by its current hash, else ``no-cache``."""
        response = super().file_response(full_path, stat_result, scope, status_code)
        asked = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("v", [""])[0]
        current = asked == _digest(str(full_path))
        response.headers["Cache-Control"] = IMMUTABLE if current else "no-cache"
        return response
