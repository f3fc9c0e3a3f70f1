"""The test tiers: why a test is slow, said by a marker, and a guard that keeps the markers true.

``make test`` (the fast tier) runs every test that stays in its own process; ``make check`` (the
full tier, what CI runs) runs them all. A test leaves the fast tier by carrying one of
``TIER_MARKERS`` (registered in ``pyproject.toml``):

- ``browser``: drives a real headless Chromium;
- ``sandbox``: runs learner code under bubblewrap or the audit's real keeper and judge processes;
- ``process``: starts another process or a real server (a CLI next to a server, uvicorn on a
  socket, a kernel, a signal to a child);
- ``pg``: needs the PostgreSQL test server;
- ``release``: builds or installs the package (the wheel, the first run after install);
- ``heavy``: stays in this process but spends seconds each drawing (the largest figures with
  the longest labels): its cases of the same rule at the smallest size stay in the fast tier.

The markers a fixture implies are added at collection (``browser`` for the shared Chromium,
``sandbox`` for ``isolated``, ``pg`` for a PostgreSQL store), so a test cannot forget them. For
every other test the guard watches what the test does: a test that starts a process (fork, exec,
``posix_spawn``) or listens on a socket and carries none of the markers fails, naming what it
started. So the fast tier never needs Chromium, PostgreSQL or bubblewrap, and a new slow test
cannot slip into it.
"""

from __future__ import annotations

import _posixsubprocess
import contextlib
import os
import socket
import subprocess
from collections.abc import Callable, Generator
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

TIER_MARKERS = ("browser", "sandbox", "process", "pg", "release", "heavy")
#: The markers under which a test may start processes or listen (``heavy`` stays in-process).
SPAWNING = TIER_MARKERS[:-1]
#: Fixtures whose use puts a test in a tier.
IMPLIED = {"browser": "browser", "playwright": "browser", "isolated": "sandbox", "pg_schemas": "pg"}

#: Hypothesis examples per property (sized for a 2-core machine): the full tier's, and the fast
#: tier's (a developer's run on every change: fewer examples of the same properties, all of
#: them again in CI).
FULL_EXAMPLES, FAST_EXAMPLES = 25, 8
for _name, _count in (("attnlab", FULL_EXAMPLES), ("attnlab-fast", FAST_EXAMPLES)):
    settings.register_profile(
        _name, max_examples=_count, deadline=None, suppress_health_check=[HealthCheck.too_slow]
    )
settings.load_profile("attnlab")
_fast = False

#: What the test running now has started (None outside a test), and whether it may.
_started: list[str] | None = None
_allowed = True


class TierViolation(BaseException):
    """Raised where an unmarked test starts a process, so it stops at once (a BaseException: the
    code under test does not catch it as one of its own errors)."""


def _watch(owner: Any, name: str, what: str) -> None:
    original: Callable[..., Any] = getattr(owner, name)

    def watched(*args: Any, **kwargs: Any) -> Any:
        if _started is not None:
            _started.append(what)
            if not _allowed:
                raise TierViolation(f"an unmarked test started {what}")
        return original(*args, **kwargs)

    setattr(owner, name, watched)


# subprocess (and so asyncio's subprocesses) and multiprocessing's spawn call ``fork_exec``.
_watch(subprocess, "_fork_exec", "a process (fork_exec)")
_watch(_posixsubprocess, "fork_exec", "a process (fork_exec)")
_watch(os, "fork", "a process (os.fork)")
_watch(os, "posix_spawn", "a process (os.posix_spawn)")
_watch(os, "posix_spawnp", "a process (os.posix_spawnp)")
_watch(socket.socket, "listen", "a server (a listening socket)")


def examples(full: int) -> int:
    """``max_examples`` for a property that asks for ``full`` in the full tier, scaled in the
    fast tier as the profiles are (:data:`FAST_EXAMPLES` of :data:`FULL_EXAMPLES`), never below 4.
    """
    return full if not _fast else max(4, full * FAST_EXAMPLES // FULL_EXAMPLES)


def tier_of(item: pytest.Item) -> str | None:
    """The first tier marker ``item`` carries, or None for the fast tier."""
    return next((name for name in TIER_MARKERS if item.get_closest_marker(name)), None)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--tier",
        choices=("fast", "full"),
        default="full",
        help="fast: only the tests that carry none of the tier markers (make test); "
        "full: every test (make check, CI)",
    )


_before: list[bool] = []


def pytest_configure(config: pytest.Config) -> None:
    global _fast
    _before.append(_fast)
    _fast = config.getoption("tier") == "fast"
    settings.load_profile("attnlab-fast" if _fast else "attnlab")


def pytest_unconfigure(config: pytest.Config) -> None:
    """Put back the tier of the run around this one (a pytester run inside a test)."""
    global _fast
    _fast = _before.pop() if _before else False
    settings.load_profile("attnlab-fast" if _fast else "attnlab")


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        for fixture, marker in IMPLIED.items():
            if fixture in names:
                item.add_marker(marker)
        params = getattr(getattr(item, "callspec", None), "params", {})
        if params.get("new_location") == "postgresql":
            item.add_marker("pg")
    if config.getoption("tier") == "fast":
        slow = [item for item in items if tier_of(item) is not None]
        if slow:
            config.hook.pytest_deselected(items=slow)
            chosen = set(slow)
            items[:] = [item for item in items if item not in chosen]


def may_spawn(item: pytest.Item) -> bool:
    """Whether ``item`` carries a marker under which it may start processes or listen."""
    return any(item.get_closest_marker(name) for name in SPAWNING)


def _fail_if_unmarked(item: pytest.Item) -> None:
    started = sorted(set(_started or ()))
    if started and not may_spawn(item):
        markers = ", ".join(f"@pytest.mark.{name}" for name in SPAWNING)
        pytest.fail(
            f"this test started {' and '.join(started)} but carries no tier marker: give it one "
            f"of {markers} (tests/tiers.py), so the fast tier stays in one process",
            pytrace=False,
        )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, None, None]:
    global _started, _allowed
    _started, _allowed = [], may_spawn(item)
    with contextlib.suppress(TierViolation):
        yield
    _fail_if_unmarked(item)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    with contextlib.suppress(TierViolation):
        yield
    _fail_if_unmarked(item)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Generator[None, None, None]:
    global _started
    try:
        return (yield)
    finally:
        _started = None
