"""Which attnlab modules a graded exercise answer posted on the web runs through.

Posts one answer (``POST /exercise/ID``, default 4c: a stage the mistakes catalogue checks) to a
fresh web app and records every attnlab module whose code runs while the request is served, in
first-call order, with the package changes along the way. A first identical request warms up
the app, the answer's exercise and the progress store, so the count is the steady path of an
answer, not the first import of each module. Both requests are served by one event loop, whose
worker thread keeps its store open between them as a running server's threads do (a test
client used without ``with`` starts a new loop, thread and store connection per request)::

    python tools/post_path.py [ID ANSWER]

:func:`post_path` returns the status and the modules (``tests/test_post_path.py`` uses it).
"""

from __future__ import annotations

import sys
import tempfile
import threading
from pathlib import Path
from types import FrameType
from typing import Any

from fastapi.testclient import TestClient

from attnlab.web.app import create_app

ORIGIN = "http://127.0.0.1"


def post_path(exercise: str = "4c", answer: str = "0.39") -> tuple[int, list[str]]:
    """The status of the second of two identical answers to ``exercise``, and the attnlab
    modules whose code ran while it was served, in first-call order."""
    seen: list[str] = []
    recording = threading.Event()

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if not recording.is_set() or event != "call":
            return
        name = frame.f_globals.get("__name__", "")
        if name.startswith("attnlab.") and name not in seen:
            seen.append(name)

    # Set before the client starts its event loop and worker threads, so they all inherit it.
    threading.setprofile(profile)
    sys.setprofile(profile)
    try:
        with (
            tempfile.TemporaryDirectory() as data,
            TestClient(
                create_app(data_dir=Path(data), figures_on=False), base_url=ORIGIN
            ) as client,
        ):
            client.get("/healthz")  # any page sets the session token
            token = client.cookies.get("attnlab_csrf") or ""
            form = {"answer": answer, "csrf_token": token, "back": "section"}

            def post() -> int:
                url, headers = f"/exercise/{exercise}", {"origin": ORIGIN}
                done = client.post(url, data=form, headers=headers, follow_redirects=False)
                return done.status_code

            if post() != 303:
                raise RuntimeError(f"the warm-up answer {answer!r} to {exercise} was refused")
            recording.set()
            try:
                status = post()
            finally:
                recording.clear()
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]
    return status, seen


def main() -> None:
    exercise, answer = (sys.argv[1], sys.argv[2]) if len(sys.argv) > 2 else ("4c", "0.39")
    status, seen = post_path(exercise, answer)
    packages = [m.split(".")[1] for m in seen]
    changes = [p for i, p in enumerate(packages) if i == 0 or p != packages[i - 1]]
    print(
        f"POST /exercise/{exercise} ({answer!r}) → {status}: {len(seen)} attnlab modules, "
        f"{len(set(packages))} packages"
    )
    for m in seen:
        print("  " + m)
    print("package order: " + " → ".join(changes))


if __name__ == "__main__":
    main()
