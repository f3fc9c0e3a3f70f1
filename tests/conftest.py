"""Shared test settings: torch's idle threads sleep, the one-thread fixture, the guard that
fails a test when a web route raises, and the web test client."""

import logging
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

# Before torch loads OpenMP (read once, at load; the processes the tests start inherit it): a
# thread that finishes its share of an operation sleeps instead of spinning for the next one.
# Two xdist workers with two torch threads each on two cores spent half their CPU time spinning,
# taking it from each other and from the processes the tests start. The thread count, and so
# every code path that depends on it, stays as it was.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import pytest
import torch
from web_support import ORIGIN

# pytester: test_web_errors checks the no_web_crash guard in a run of its own; store_backends:
# the store tests run on SQLite and on PostgreSQL; tiers: the markers of the slow tiers and the
# guard that fails a test starting a process or a server without one; audit_support: the
# judge_here fixture (an audit judged in this process).
pytest_plugins = ["pytester", "store_backends", "tiers", "audit_support", "browser_support"]


@pytest.fixture(scope="module")
def one_torch_thread() -> Iterator[None]:
    """Tiny tensors, as the audit sandbox uses them: one torch thread is faster than waking a
    thread pool on a busy machine."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="session", autouse=True)
def figure_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The web lesson's figure cache for this test run (its servers inherit it), never the
    learner's own cache folder; shared by the xdist workers, so each figure is drawn once."""
    base = tmp_path_factory.getbasetemp()
    folder = (base.parent if "PYTEST_XDIST_WORKER" in os.environ else base) / "figure-cache"
    folder.mkdir(exist_ok=True)
    before = os.environ.get("ATTNLAB_CACHE_DIR")
    os.environ["ATTNLAB_CACHE_DIR"] = str(folder)
    yield folder
    if before is None:
        del os.environ["ATTNLAB_CACHE_DIR"]
    else:
        os.environ["ATTNLAB_CACHE_DIR"] = before


@pytest.fixture(autouse=True)
def own_data_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A progress folder of the test's own (``$ATTNLAB_DATA_DIR``), so a test that names none
    never reads or migrates the learner's real one; tests that name a folder use theirs."""
    folder = tmp_path_factory.mktemp("data")
    monkeypatch.setenv("ATTNLAB_DATA_DIR", str(folder))
    monkeypatch.delenv("ATTNLAB_DB", raising=False)
    return folder


def pytest_sessionstart(session: pytest.Session) -> None:
    """Read once, before any test, how a child process's standard streams are set up (the
    in-process runner of ``process_support`` copies them), so no test is seen starting it."""
    import process_support

    process_support.child_streams()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "server_error: the test makes the web app fail on purpose (lifts the no_web_crash guard)",
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests marked ``slow`` or ``browser`` first, each in the order it was collected in
    (every module marked in part has no module-scoped fixture, so nothing is set up twice).
    xdist hands the first tests out to its workers in turn: the long ones are shared between
    them from the start instead of ending the run on one worker while the other idles."""
    first = [i for i in items if i.get_closest_marker("slow") or i.get_closest_marker("browser")]
    chosen = set(first)
    items[:] = [*first, *(i for i in items if i not in chosen)]


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture(autouse=True)
def no_web_crash(request: pytest.FixtureRequest) -> Iterator[None]:
    """Fail any test during which a web route raised an unforeseen exception.

    The web app logs every such exception on ``attnlab.web.errors`` before its 500 page, so this
    catches it however the app was reached: a ``TestClient`` that does not re-raise, the uvicorn
    server of the browser tests, a thread. Tests that break the app on purpose are marked
    ``server_error``."""
    collect = _Collect()
    logger = logging.getLogger("attnlab.web.errors")
    logger.addHandler(collect)
    try:
        yield
    finally:
        logger.removeHandler(collect)
    if collect.records and request.node.get_closest_marker("server_error") is None:
        first = collect.records[0]
        pytest.fail(
            f"a web route raised ({len(collect.records)} time(s)); first: {first.getMessage()}\n"
            + (logging.Formatter().formatException(first.exc_info) if first.exc_info else ""),
            pytrace=False,
        )


@pytest.fixture
def isolated() -> None:
    """Skip (loudly) where bubblewrap cannot isolate learner code, unless CI requires it."""
    from attnlab.audit import sandbox

    reason = sandbox.isolation()
    if reason is not None:
        message = f"bubblewrap cannot isolate learner code here ({reason})"
        if os.environ.get("ATTNLAB_REQUIRE_SANDBOX"):
            pytest.fail(message)
        pytest.skip(message)


@pytest.fixture(scope="session")
def web_client_factory() -> Callable[..., Any]:
    """``factory(data_dir, **create_app_kwargs)``: a test client of the web lesson that re-raises
    any exception a route lets escape (so the test fails), with its session cookie set."""
    from fastapi.testclient import TestClient

    from attnlab.web.app import create_app

    def factory(data_dir: Path, **kwargs: Any) -> TestClient:
        kwargs.setdefault("figures_on", False)
        app = create_app(data_dir, **kwargs)
        client = TestClient(app, base_url=ORIGIN, raise_server_exceptions=True)
        client.get("/healthz")  # sets the session cookie (the cheapest page that does)
        return client

    return factory
