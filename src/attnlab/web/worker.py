"""One worker process of ``attnlab serve --workers N``: the app built from the parent's settings.

With one worker, ``attnlab serve`` builds the app in its own process. With N, uvicorn's
supervisor binds the socket once and starts N processes that accept on it; each calls
:func:`app_from_env`, which reads the settings the parent put in ``$ATTNLAB_SERVE_CONFIG`` (a
JSON object of :func:`attnlab.web.app.create_app`'s arguments) and renders the shared pages
before it serves. The first N workers then wait (:func:`wait_for_siblings`) until all have
built theirs, so none accepts connections before the others can: learners who arrive at once on
a fresh server (each browser keeps its connection) are spread over every worker instead of all
landing on the first one ready. Nothing a learner sends lives in a worker's memory: progress is
in the store every worker opens, and the session token is checked against the learner's own
cookie, so any worker can answer any request.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

from fastapi import FastAPI

from attnlab.audit.processes import die_with_parent

CONFIG_ENV = "ATTNLAB_SERVE_CONFIG"
#: ``FOLDER:N``: where the first N workers say they are ready, and N.
START_ENV = "ATTNLAB_SERVE_START"
#: Seconds a worker waits for its siblings to be ready before it serves anyway.
SIBLING_WAIT_S = 120.0
_POLL_S = 0.01


def config_env(start: Path | None = None, workers: int = 1, **settings: Any) -> dict[str, str]:
    """The environment entries carrying ``settings`` (JSON values) to the workers, and the
    folder where the first ``workers`` of them meet before they serve."""
    env = {CONFIG_ENV: json.dumps(settings)}
    if start is not None:
        env[START_ENV] = f"{start}:{workers}"
    return env


def wait_for_siblings(folder: Path, workers: int, limit: float = SIBLING_WAIT_S) -> bool:
    """Say in ``folder`` that this worker is ready, then wait until ``workers`` have (at most
    ``limit`` seconds). A worker started later in place of a dead one finds them all there and
    goes on at once. SIGTERM or SIGINT ends the wait and is passed on to uvicorn's own handler.

    Returns:
        whether all ``workers`` were ready.
    """
    caught: list[int] = []
    main = threading.current_thread() is threading.main_thread()
    stops = (signal.SIGTERM, signal.SIGINT)
    before = (
        {sig: signal.signal(sig, lambda n, _f: caught.append(n)) for sig in stops} if main else {}
    )
    try:
        (folder / str(os.getpid())).touch()
        deadline = time.monotonic() + limit
        while not caught and time.monotonic() < deadline:
            if len(os.listdir(folder)) >= workers:
                return True
            time.sleep(_POLL_S)
        return False
    except OSError:  # the folder is gone: the server is stopping, or was never started so
        return False
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)
        for number in caught:
            signal.raise_signal(number)


def _stop_with_parent() -> None:
    """Ask Linux to send SIGTERM to this worker when the supervisor dies, even by SIGKILL, so
    no worker keeps the port open on its own."""
    if not sys.platform.startswith("linux"):
        return
    die_with_parent(signal.SIGTERM)
    if os.getppid() == 1:  # the parent died before the request took effect
        os.kill(os.getpid(), signal.SIGTERM)


def app_from_env() -> FastAPI:
    """The web lesson for this worker (uvicorn's ``factory=True`` entry point).

    Raises:
        RuntimeError: ``$ATTNLAB_SERVE_CONFIG`` is missing (this module is only for workers
            started by ``attnlab serve``).
    """
    raw = os.environ.get(CONFIG_ENV)
    if raw is None:
        raise RuntimeError(f"expected ${CONFIG_ENV} set by `attnlab serve`, found none")
    _stop_with_parent()
    app = build_app(json.loads(raw))
    folder, _, workers = os.environ.get(START_ENV, "").rpartition(":")
    if folder:
        wait_for_siblings(Path(folder), int(workers))
    return app


def build_app(settings: dict[str, Any]) -> FastAPI:
    """The app of one server process, ready before its first request: the shared pages
    rendered, and torch on one thread (the explorer's tensors hold a few numbers each; a second
    thread per operation would cost more than the maths, and the workers already use every
    core)."""
    import torch

    from attnlab.web.app import build_shared, create_app

    torch.set_num_threads(1)
    app = create_app(**settings)
    build_shared(app)  # before this process accepts its first request
    return app
