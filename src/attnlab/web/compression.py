"""Pages gzipped by ISA-L: Starlette's :class:`~starlette.middleware.gzip.GZipMiddleware` with
``isal`` (Intel's Intelligent Storage Acceleration Library, through python-isal) in place of
zlib. The output is the same gzip format; at level 1 the 220 KB ``/lesson`` page takes about
0.3 ms to compress instead of 1.5 ms with zlib's level 1, for a few percent more bytes
(``benchmarks/results/web-cost-*.md``). That is cheap enough to stay in the event loop, so
no page is handed to a worker thread to be compressed, as Starlette does above 128 KiB.
"""

from __future__ import annotations

from typing import Any

from isal import isal_zlib
from starlette.datastructures import Headers
from starlette.middleware.gzip import GZipMiddleware, GZipResponder
from starlette.types import Receive, Scope, Send

#: ISA-L's levels are 0-3; 1 keeps most of the gain for the least CPU.
LEVEL = 1
#: Bodies at least this big would be compressed in a worker thread: none of ours are.
_NEVER_IN_A_THREAD = 1 << 40


class IsalGZip(GZipMiddleware):
    """Compress answers with gzip when the browser accepts it, as :class:`GZipMiddleware`
    does (same size threshold, excluded types, ``Vary`` header), with ISA-L at :data:`LEVEL`."""

    def __init__(self, app: Any, minimum_size: int) -> None:
        super().__init__(app, minimum_size, LEVEL, _NEVER_IN_A_THREAD)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or "gzip" not in Headers(scope=scope).get("Accept-Encoding", ""):
            await super().__call__(scope, receive, send)  # its responder leaves the body as is
            return
        responder = _IsalResponder(
            self.app,
            self.minimum_size,
            compresslevel=self.compresslevel,
            thread_minimum_size=self.thread_minimum_size,
            exclude_content_types=self.exclude_content_types,
        )
        await responder(scope, receive, send)


class _IsalResponder(GZipResponder):
    _isal: Any = None

    @property
    def compressor(self) -> Any:
        if self._isal is None:  # a gzip header and trailer: 16 + the largest window
            self._isal = isal_zlib.compressobj(
                self.compresslevel, isal_zlib.DEFLATED, 16 + isal_zlib.MAX_WBITS
            )
        return self._isal
