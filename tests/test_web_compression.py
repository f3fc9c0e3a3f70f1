"""The pages' gzip (ISA-L, :mod:`attnlab.web.compression`) is the standard format: Python's own
gzip module reads back exactly what was sent, whole or streamed in pieces."""

from __future__ import annotations

import gzip
import os

from starlette.applications import Starlette
from starlette.responses import PlainTextResponse, StreamingResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from attnlab.web.compression import IsalGZip

BODY = os.urandom(3000).hex() + "注意力 " * 2000  # some of it compresses, some does not


def _client() -> TestClient:
    async def whole(request: object) -> PlainTextResponse:
        return PlainTextResponse(BODY)

    async def streamed(request: object) -> StreamingResponse:
        async def pieces():  # type: ignore[no-untyped-def]
            for start in range(0, len(BODY), 997):
                yield BODY[start : start + 997]

        return StreamingResponse(pieces(), media_type="text/plain")

    app = Starlette(routes=[Route("/whole", whole), Route("/streamed", streamed)])
    return TestClient(IsalGZip(app, minimum_size=1024))


def test_a_whole_body_and_a_streamed_one_decompress_to_what_was_sent() -> None:
    client = _client()
    for path in ("/whole", "/streamed"):
        with client.stream("GET", path, headers={"Accept-Encoding": "gzip"}) as sent:
            assert sent.headers["content-encoding"] == "gzip"
            assert "Accept-Encoding" in sent.headers["vary"]
            raw = b"".join(sent.iter_raw())  # the bytes on the wire, not httpx's decoding
        assert len(raw) < len(BODY.encode())
        assert gzip.decompress(raw).decode() == BODY


def test_without_gzip_in_accept_encoding_the_body_goes_as_it_is() -> None:
    sent = _client().get("/whole", headers={"Accept-Encoding": "identity"})
    assert "content-encoding" not in sent.headers
    assert sent.text == BODY
