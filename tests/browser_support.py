"""The browser tests' one Chromium: Debian's ``chromium`` driven by Playwright, launched once per
test session (once per xdist worker) and shared by every browser test module; each test opens
its own context and pages in it.

Without Chromium the tests are skipped LOUDLY, unless ATTNLAB_REQUIRE_BROWSER=1 (set by
``.ci/run``), where a missing browser is a failure.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from typing import Any

import pytest

CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip


def chromium_path() -> str:
    """The Chromium to drive; skips (or fails, under ATTNLAB_REQUIRE_BROWSER=1) without one."""
    path = os.environ.get("ATTNLAB_CHROMIUM") or shutil.which("chromium")
    why = ""
    if not path:
        why = "no Chromium found (set ATTNLAB_CHROMIUM or apt-get install chromium)"
    else:
        try:
            import playwright.sync_api  # noqa: F401
        except ImportError:
            why = "the playwright package is not installed"
    if why:
        if os.environ.get("ATTNLAB_REQUIRE_BROWSER") == "1":
            pytest.fail(f"ATTNLAB_REQUIRE_BROWSER=1 but {why}")
        pytest.skip(f"!!! BROWSER TESTS SKIPPED: {why} !!!")
    return str(path)


@pytest.fixture(scope="session")
def playwright() -> Iterator[Any]:
    """The session's Playwright driver (one per thread: every browser comes from this one)."""
    chromium_path()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        yield p


@pytest.fixture(scope="session")
def browser(playwright: Any) -> Iterator[Any]:
    """One headless Chromium for the whole session (a test marked ``browser`` by using it),
    with the machine's own fonts."""
    b = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
    yield b
    b.close()
