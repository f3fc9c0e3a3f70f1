"""Helpers for the tests of the shared progress store: the real server, the CLI in its own
process, a lock held by another process, and running a command without root's file rights."""

from __future__ import annotations

import os
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

import httpx
import pytest
from web_support import post_form

#: Seconds a server may take to start (it renders the lesson and its figures first) or to answer.
DEADLINE_S = 120


def wait_until(ready: Callable[[], object], what: str, limit: float = DEADLINE_S) -> None:
    """Return as soon as ``ready()`` is true (checked every 50 ms); fail naming ``what`` if it
    is still false after ``limit`` seconds, an outer bound far past any normal wait."""
    deadline = time.monotonic() + limit
    while not ready():
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {limit:.0f} s for {what}")
        time.sleep(0.05)


def env_for(data_dir: Path) -> dict[str, str]:
    """The environment of an attnlab process using ``data_dir``, in English."""
    return {**os.environ, "ATTNLAB_DATA_DIR": str(data_dir), "ATTNLAB_LANG": "en",
            "PYTHONUNBUFFERED": "1"}  # fmt: skip


def cli(data_dir: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """Run ``attnlab ARGS`` in its own process (a terminal next to the server)."""
    cmd = [sys.executable, "-m", "attnlab", *args]
    return subprocess.run(
        cmd, input=stdin, capture_output=True, text=True, env=env_for(data_dir),
        timeout=DEADLINE_S,
    )  # fmt: skip


def _read_line(proc: subprocess.Popen[str], err: IO[str]) -> str:
    assert proc.stdout is not None
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        if not sel.select(timeout=DEADLINE_S) or proc.poll() is not None:
            err.seek(0)
            raise AssertionError(f"attnlab serve printed nothing ({proc.poll()}): {err.read()}")
    return proc.stdout.readline()


@contextmanager
def server(data_dir: Path, *options: str, workers: int = 1) -> Iterator[httpx.Client]:
    """``attnlab serve --port 0 --workers N OPTIONS`` in a subprocess; yields a client holding
    the session cookie (``client.server_pid``: the server's process id)."""
    cmd = [sys.executable, "-m", "attnlab", "serve", "--port", "0", "--workers", str(workers)]
    cmd += options
    with tempfile.TemporaryFile("w+") as err:  # a file, not a pipe: a chatty server never blocks
        proc = subprocess.Popen(
            cmd, stdout=subprocess.PIPE, stderr=err, text=True, env=env_for(data_dir)
        )
        try:
            with _client_of(proc, err) as client:
                client.server_pid = proc.pid  # type: ignore[attr-defined]
                yield client
        finally:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=DEADLINE_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@contextmanager
def _client_of(proc: subprocess.Popen[str], err: IO[str]) -> Iterator[httpx.Client]:
    line = _read_line(proc, err)
    url = line.split("attnlab web lesson: ", 1)[1].split()[0].removesuffix("/lesson")
    with httpx.Client(base_url=url, timeout=DEADLINE_S) as client:
        deadline = time.monotonic() + DEADLINE_S
        while True:  # uvicorn binds a moment after printing the address
            try:
                if client.get("/healthz").status_code == 200:  # sets the session cookie
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline or proc.poll() is not None:
                raise AssertionError(f"server never answered: {line!r}")
            time.sleep(0.1)
        client.headers["Origin"] = url
        yield client


def post(client: httpx.Client, url: str, **form: str) -> httpx.Response:
    """A form POST from the lesson page (same origin, with the session token); the client
    already sends the server's own origin."""
    return post_form(client, url, origin=None, **form)


@contextmanager
def lock_held(db: Path) -> Iterator[None]:
    """Another process holds the write lock of ``db`` (``BEGIN EXCLUSIVE``) until the block ends."""
    code = (
        "import sqlite3, sys, time\n"
        "c = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
        "c.execute('BEGIN EXCLUSIVE')\n"
        "print('locked', flush=True)\n"
        "time.sleep(120)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code, str(db)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
        yield
    finally:
        proc.kill()
        proc.wait()


def without_root_rights() -> tuple[str, ...]:
    """A command prefix under which file permission bits apply to this user.

    Root ignores them (CAP_DAC_OVERRIDE), so a read-only file would be written anyway; as
    root, ``setpriv`` drops those two capabilities from the child. Skips loudly when impossible.
    """
    if os.geteuid() != 0:
        return ()
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: cannot make permission bits apply")
    return (setpriv, "--bounding-set=-dac_override,-dac_read_search")


@contextmanager
def serve_in_thread(app: object) -> Iterator[str]:
    """Run ``app`` with uvicorn on a free loopback port in a daemon thread; yield its URL."""
    import socket
    import threading

    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    srv = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False))  # type: ignore[arg-type]
    thread = threading.Thread(target=srv.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    wait_until(lambda: srv.started or not thread.is_alive(), "uvicorn to start")
    assert srv.started, "uvicorn ended before it started serving"
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        srv.should_exit = True
        thread.join(timeout=DEADLINE_S)
        sock.close()
