"""``attnlab serve --workers N``: N processes share one progress store; a worker killed with
SIGKILL while learners write loses no confirmed write, and the supervisor replaces it.

The point of these tests is the process boundary, so they run the real server.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import threading
import time
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import psutil
import pytest
from store_support import DEADLINE_S, post, server, wait_until

from attnlab.progress.store import ProgressStore

pytestmark = [pytest.mark.process, pytest.mark.slow]


def _workers(server_pid: int) -> list[psutil.Process]:
    """The uvicorn worker processes under ``attnlab serve`` (not multiprocessing's helper)."""
    found = []
    for child in psutil.Process(server_pid).children(recursive=True):
        try:
            if "spawn_main" in " ".join(child.cmdline()):
                found.append(child)
        except psutil.NoSuchProcess:
            continue
    return found


def _wait_for_workers(server_pid: int, n: int, client: httpx.Client) -> list[psutil.Process]:
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline:
        found = _workers(server_pid)
        if len(found) == n and client.get("/healthz").status_code == 200:
            return found
        time.sleep(0.2)
    raise AssertionError(f"expected {n} workers, found {len(_workers(server_pid))}")


def _answers(data_dir: Path, db: str | None = None) -> Counter[str]:
    with ProgressStore.open(data_dir, db=db) as store:
        return Counter(a["answer"] for a in store.attempts() if a["exercise"] == "check-1")


def test_two_workers_share_the_store_and_survive_a_killed_worker(
    tmp_path: Path, db_url: str | None
) -> None:
    # On PostgreSQL (db_url): the workers share the server, given with --db.
    with server(tmp_path, *(("--db", db_url) if db_url else ()), workers=2) as client:
        pid: int = client.server_pid  # type: ignore[attr-defined]
        first = _wait_for_workers(pid, 2, client)
        confirmed: Counter[str] = Counter()
        refused: list[str] = []
        lock = threading.Lock()
        stop = threading.Event()

        def write(n: int) -> None:
            i = 0
            while not stop.is_set() or i < 3:
                text = f"writer {n} answer {i}: each token reads only the past"
                i += 1
                try:
                    r = post(client, "/section/1/answer", answer=text)
                except httpx.TransportError as exc:  # the learner is told: no page came back
                    with lock:
                        refused.append(f"{text}: {type(exc).__name__}")
                    continue
                with lock:
                    if r.status_code == 303:
                        confirmed[text] += 1
                    else:
                        assert r.status_code in (500, 502, 503), (r.status_code, r.text[:200])
                        refused.append(text)

        with ThreadPoolExecutor(max_workers=6) as pool:
            jobs = [pool.submit(write, n) for n in range(6)]

            def done() -> int:
                with lock:
                    return sum(confirmed.values()) + len(refused)

            # Writes are under way (a dozen answered), then the kill lands mid-write, and the
            # writers go on until a dozen more have been answered past it.
            wait_until(lambda: done() >= 12, "the first dozen writes")
            first[0].kill()  # SIGKILL, mid-write
            at_kill = done()
            wait_until(lambda: done() >= at_kill + 12, "a dozen writes after the kill")
            stop.set()
            for job in jobs:
                job.result()

        # The supervisor starts a new worker in place of the killed one.
        after = _wait_for_workers(pid, 2, client)
        assert first[0].pid not in {p.pid for p in after}
        # Every write the server confirmed is in the store, once.
        saved = _answers(tmp_path, db_url)
        assert confirmed and all(saved[text] == 1 for text in confirmed), sorted(
            set(confirmed) - set(saved)
        )
        # Writes still work on both workers, with the same session cookie.
        late = [f"after the kill {i}" for i in range(8)]
        for text in late:
            assert post(client, "/section/1/answer", answer=text).status_code == 303
        saved = _answers(tmp_path, db_url)
        assert all(saved[text] == 1 for text in late)
        # The page shows the learner's answers whichever worker renders it.
        pages = [client.get("/section/1?lang=en").text for _ in range(6)]
        assert all(late[-1] in page for page in pages)


def test_workers_stop_with_the_server(tmp_path: Path) -> None:
    with server(tmp_path, workers=2) as client:
        pid: int = client.server_pid  # type: ignore[attr-defined]
        workers = _wait_for_workers(pid, 2, client)
        psutil.Process(pid).kill()  # the supervisor dies without cleaning up
        _gone, alive = psutil.wait_procs(workers, timeout=30)
        assert not alive, f"workers outlived the server: {[p.pid for p in alive]}"


def test_a_fresh_server_answers_only_when_every_worker_is_ready(tmp_path: Path) -> None:
    """The first /healthz answer means every worker has built its app and accepts: learners
    who connect at that moment are not all held by the first worker ready (how they spread is
    measured by ``benchmarks/web_load.py``: 21-29 of 50 connections per worker)."""
    from attnlab.web.siblings import UNIX_SOCKETS

    with server(tmp_path, workers=2) as client:  # returns at the first /healthz answer
        said = UNIX_SOCKETS.read_text(encoding="utf-8", errors="replace")
        pid: int = client.server_pid  # type: ignore[attr-defined]
        workers = {w.pid for w in _workers(pid)}
        ready = {int(name.rsplit("-", 1)[1]) for name in re.findall(r"@attnlab-serve-\S+", said)}
        assert len(workers) == 2 and workers <= ready, (workers, ready)


def _sibling(server: str, pid: int) -> socket.socket:
    """A sibling worker's "ready" socket, as it binds it."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(f"\0attnlab-serve-{server}-{pid}")
    return sock


def test_a_worker_waits_for_its_siblings_only_at_the_first_start() -> None:
    from attnlab.web.siblings import ready, wait_for_siblings

    server = uuid.uuid4().hex
    first = _sibling(server, 1)  # one sibling ready; this process and one more to come
    later: list[socket.socket] = []
    threading.Timer(0.3, lambda: later.append(_sibling(server, 2))).start()
    try:
        began = time.monotonic()
        assert wait_for_siblings(server, 3, limit=DEADLINE_S)
        assert time.monotonic() - began >= 0.25
        # A worker started in place of a dead one: all are there, so it goes on (a wait
        # would end only at the limit, with False).
        assert wait_for_siblings(server, 3, limit=DEADLINE_S)
        assert not wait_for_siblings(server, 9, limit=0.2)  # a sibling that never comes
        assert ready(server) == 3
        first.close()  # a worker's name goes with its process: no file is left behind
        assert ready(server) == 2
        assert ready(uuid.uuid4().hex) == 0  # another server's workers are not counted
    finally:
        first.close()
        for sock in later:
            sock.close()


def test_sigterm_ends_the_wait_and_reaches_uvicorns_handler() -> None:
    """Ctrl+C or a stop while a worker waits is not swallowed: the wait ends and the handler
    installed before it (uvicorn's) gets the signal."""
    from attnlab.web.siblings import wait_for_siblings

    got: list[int] = []

    def uvicorns(signum: int, _frame: object) -> None:
        got.append(signum)

    before = signal.signal(signal.SIGTERM, uvicorns)
    try:
        threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGTERM)).start()
        began = time.monotonic()
        assert not wait_for_siblings(uuid.uuid4().hex, 5, limit=DEADLINE_S)
        assert time.monotonic() - began < DEADLINE_S / 2
        assert got == [signal.SIGTERM]
        assert signal.getsignal(signal.SIGTERM) is uvicorns
    finally:
        signal.signal(signal.SIGTERM, before)


def test_a_stop_while_the_app_is_built_ends_the_start_at_once() -> None:
    """SIGTERM from the supervisor while a worker (a replacement, or any worker at Ctrl+C
    during the start) still builds its app: it does not then wait for siblings that have
    already stopped; uvicorn's handler gets the signal when the build is over."""
    from attnlab.web.siblings import held_stops, ready, wait_for_siblings

    got: list[int] = []
    before = signal.signal(signal.SIGTERM, lambda signum, _frame: got.append(signum))
    server = uuid.uuid4().hex
    try:
        with held_stops() as stops:
            os.kill(os.getpid(), signal.SIGTERM)  # lands during the build
            wait_until(lambda: stops, "the stop to be held")
            assert not wait_for_siblings(server, 5, limit=DEADLINE_S, stops=stops)
            assert ready(server) == 0  # it never said ready, so no wait began
            assert got == []  # held until the build and the wait are over
        assert got == [signal.SIGTERM]
    finally:
        signal.signal(signal.SIGTERM, before)


def test_a_stop_uvicorn_caught_before_the_build_ends_the_start_at_once() -> None:
    """A stop that reached uvicorn's handler before the worker held the signals (while it
    imported the app's module) also ends the start: no wait for siblings, nothing re-sent."""
    from attnlab.web.siblings import held_stops, ready, wait_for_siblings

    class Server:  # what uvicorn's handler is bound to
        should_exit = True

        def handle_exit(self, signum: int, _frame: object) -> None:
            got.append(signum)

    got: list[int] = []
    before = signal.signal(signal.SIGTERM, Server().handle_exit)
    server = uuid.uuid4().hex
    try:
        with held_stops() as stops:
            assert stops and not list(stops)
            assert not wait_for_siblings(server, 5, limit=DEADLINE_S, stops=stops)
            assert ready(server) == 0
        assert got == []  # uvicorn already has it
    finally:
        signal.signal(signal.SIGTERM, before)
