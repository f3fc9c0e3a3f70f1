"""One worker process of ``attnlab serve --workers N``: the app built from the parent's settings.

With one worker, ``attnlab serve`` builds the app in its own process. With N, uvicorn's
supervisor binds the socket once and starts N processes that accept on it; each calls
:func:`app_from_env`, which reads the settings the parent put in ``$ATTNLAB_SERVE_CONFIG`` (a
JSON object of :func:`attnlab.web.app.create_app`'s arguments) and renders the shared pages
before it serves. The first N workers then wait (:mod:`attnlab.web.siblings`) until all have
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
from typing import Any

from fastapi import FastAPI

from attnlab.audit.processes import die_with_parent
from attnlab.web.siblings import held_stops, wait_for_siblings

CONFIG_ENV = "ATTNLAB_SERVE_CONFIG"
#: ``SERVER:N``: the name the first N workers meet under (:mod:`attnlab.web.siblings`), and N.
START_ENV = "ATTNLAB_SERVE_START"


def config_env(server: str | None = None, workers: int = 1, **settings: Any) -> dict[str, str]:
    """The environment entries carrying ``settings`` (JSON values) to the workers, and the
    name the first ``workers`` of them meet under before they serve."""
    env = {CONFIG_ENV: json.dumps(settings)}
    if server is not None:
        env[START_ENV] = f"{server}:{workers}"
    return env


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
    server, _, workers = os.environ.get(START_ENV, "").rpartition(":")
    with held_stops() as stops:  # a stop during the build ends it here, not in a wait
        app = build_app(json.loads(raw))
        if server:
            wait_for_siblings(server, int(workers), stops=stops)
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
