"""Many first requests at once on a fresh server: nothing lazily built may race (issue 16's
pygments ImportError: 8 of 30 concurrent first `GET /explorer` answered 500), in the mix the
load benchmark sends (whole lesson, section pages, explorer updates)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from store_support import server
from web_support import CSRF_HEADER, csrf_token

from attnlab.core import example

pytestmark = pytest.mark.process

EXPLORER_UPDATE = "POST /api/explorer"
FIRST_REQUESTS = (
    ["/explorer"] * 12
    + [f"/section/{n}" for n in (8, 11, 12, 13, 15, 17)] * 2
    + ["/lesson?lang=zh", "/lesson?lang=en"] * 2
    + [EXPLORER_UPDATE] * 8
)


@pytest.mark.slow
def test_concurrent_first_requests_on_a_fresh_server_all_succeed(tmp_path: Path) -> None:
    update = {
        "x": example.lesson_x().tolist(),
        "w_q": example.lesson_w_q().tolist(),
        "w_k": example.lesson_w_k().tolist(),
        "w_v": example.lesson_w_v().tolist(),
    }
    with server(tmp_path) as client:
        base = str(client.base_url)
        token = csrf_token(client)

        def send(what: str) -> int:
            with httpx.Client(base_url=base, timeout=120, cookies=client.cookies) as c:
                if what == EXPLORER_UPDATE:
                    headers = {"Origin": base, CSRF_HEADER: token}
                    return c.post("/api/explorer", json=update, headers=headers).status_code
                return c.get(what).status_code

        with ThreadPoolExecutor(len(FIRST_REQUESTS)) as pool:
            codes = list(pool.map(send, FIRST_REQUESTS))
    failed = [(p, c) for p, c in zip(FIRST_REQUESTS, codes, strict=True) if c != 200]
    assert not failed, f"{len(failed)} of {len(codes)} first requests failed: {failed[:5]}"
