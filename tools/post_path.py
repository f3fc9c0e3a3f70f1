"""Which attnlab modules a graded exercise answer posted on the web runs through.

Posts one answer (``POST /exercise/ID``, default 4c: a stage the mistakes catalogue checks) to a
fresh web app and records every attnlab module
whose code runs while the request is served, in first-call order, with the package changes
along the way. The app, the store and the lesson's numbers are warmed up by a first identical
request, so the count is the steady path of an answer, not the first import of each module::

    python tools/post_path.py [ID ANSWER]
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


EXERCISE, ANSWER = (sys.argv[1], sys.argv[2]) if len(sys.argv) > 2 else ("4c", "0.39")


def _post(client: TestClient, token: str) -> int:
    form = {"answer": ANSWER, "csrf_token": token, "back": "section"}
    headers = {"origin": ORIGIN}
    done = client.post(f"/exercise/{EXERCISE}", data=form, headers=headers, follow_redirects=False)
    return done.status_code


def main() -> None:
    with tempfile.TemporaryDirectory() as data:
        client = TestClient(create_app(data_dir=Path(data)), base_url=ORIGIN)
        client.get("/lesson")
        token = client.cookies.get("attnlab_csrf") or ""
        assert _post(client, token) == 303, "the warm-up answer was not accepted"
        seen: list[str] = []

        def profile(frame: FrameType, event: str, arg: Any) -> None:
            name = frame.f_globals.get("__name__", "")
            if event == "call" and name.startswith("attnlab.") and name not in seen:
                seen.append(name)

        threading.setprofile(profile)
        sys.setprofile(profile)
        try:
            status = _post(client, token)
        finally:
            sys.setprofile(None)
            threading.setprofile(None)  # type: ignore[arg-type]
    packages = [m.split(".")[1] for m in seen]
    changes = [p for i, p in enumerate(packages) if i == 0 or p != packages[i - 1]]
    print(
        f"POST /exercise/{EXERCISE} ({ANSWER!r}) → {status}: {len(seen)} attnlab modules, "
        f"{len(set(packages))} packages"
    )
    for m in seen:
        print("  " + m)
    print("package order: " + " → ".join(changes))


if __name__ == "__main__":
    main()
