"""Many first requests at once on a fresh server: nothing lazily built may race (issue 16's
pygments ImportError: 8 of 30 concurrent first `GET /explorer` answered 500)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from store_support import server

FIRST_PAGES = ["/explorer"] * 20 + [f"/section/{n}" for n in (12, 13, 15)] * 4


@pytest.mark.slow
def test_concurrent_first_requests_on_a_fresh_server_all_succeed(tmp_path: Path) -> None:
    with server(tmp_path) as client:
        base = str(client.base_url)

        def get(path: str) -> int:
            with httpx.Client(base_url=base, timeout=120) as c:
                return c.get(path).status_code

        with ThreadPoolExecutor(len(FIRST_PAGES)) as pool:
            codes = list(pool.map(get, FIRST_PAGES))
    failed = [(p, c) for p, c in zip(FIRST_PAGES, codes, strict=True) if c != 200]
    assert not failed, f"{len(failed)} of {len(codes)} first requests failed: {failed[:5]}"
