"""The start of ``attnlab serve --workers N``: no worker accepts a connection before all N can.

Each of uvicorn's workers builds its app (the shared pages, the figures) before it accepts on the
port they share, and the first one ready would otherwise take every learner who connects in
that moment: a browser keeps its connection, so a fresh server with a class arriving at once
would run on one core. So each worker, once built, says so by binding a Linux *abstract* Unix
socket named for the server (a name with no file behind it, gone when the process is), and
waits until N such names exist. A worker started later in place of a dead one finds the others
there and goes on at once. Elsewhere than Linux the workers do not wait.
"""

from __future__ import annotations

import os
import signal
import socket
import threading
import time
from pathlib import Path

#: Seconds a worker waits for its siblings before it serves anyway.
SIBLING_WAIT_S = 120.0
#: Where Linux lists every Unix socket, abstract names with a leading ``@``.
UNIX_SOCKETS = Path("/proc/net/unix")
_POLL_S = 0.01
_PREFIX = "attnlab-serve-"
#: This process's "ready" sockets, by server: kept open for the process's life.
_said: dict[str, socket.socket] = {}


def _name(server: str) -> str:
    return f"{_PREFIX}{server}-{os.getpid()}"


def say_ready(server: str) -> bool:
    """Bind this process's abstract socket for ``server`` (once); whether it could."""
    if server in _said:
        return True
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    try:
        sock.bind("\0" + _name(server))
    except OSError:  # not Linux, or the name is taken
        sock.close()
        return False
    _said[server] = sock
    return True


def ready(server: str) -> int:
    """How many processes have said they are ready for ``server``."""
    mark = f" @{_PREFIX}{server}-"
    with UNIX_SOCKETS.open(encoding="utf-8", errors="replace") as lines:
        return sum(1 for line in lines if mark in line)


def wait_for_siblings(server: str, workers: int, limit: float = SIBLING_WAIT_S) -> bool:
    """Say this worker is ready, then wait until ``workers`` processes have (at most ``limit``
    seconds). SIGTERM or SIGINT ends the wait and is passed on to the handler installed before
    it (uvicorn's).

    Returns:
        whether all ``workers`` were ready; ``False`` at once where abstract sockets or
        ``/proc/net/unix`` do not exist.
    """
    if not say_ready(server):
        return False
    caught: list[int] = []
    main = threading.current_thread() is threading.main_thread()
    stops = (signal.SIGTERM, signal.SIGINT)
    before = (
        {sig: signal.signal(sig, lambda n, _f: caught.append(n)) for sig in stops} if main else {}
    )
    try:
        deadline = time.monotonic() + limit
        while not caught and time.monotonic() < deadline:
            if ready(server) >= workers:
                return True
            time.sleep(_POLL_S)
        return False
    except OSError:  # no /proc/net/unix
        return False
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)
        for number in caught:
            signal.raise_signal(number)
