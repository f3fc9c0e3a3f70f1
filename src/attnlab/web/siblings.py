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

import contextlib
import os
import signal
import socket
import threading
import time
from collections.abc import Iterator
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


class Stops(list[int]):
    """The stop signals held by :func:`held_stops` (passed on at its end); true as well when the
    handler it replaced had already been told to stop (:attr:`before`)."""

    before = False

    def __bool__(self) -> bool:
        return self.before or len(self) > 0


def _told_to_stop(handler: object) -> bool:
    """Whether ``handler`` is a bound method of an object already told to stop: uvicorn's
    ``Server.handle_exit``, which sets ``should_exit`` on its server when a signal lands while
    the worker imports and builds its app."""
    return getattr(getattr(handler, "__self__", None), "should_exit", False) is True


@contextlib.contextmanager
def held_stops() -> Iterator[Stops]:
    """Hold SIGTERM and SIGINT while a worker builds its app and waits for its siblings: the
    block sees them in the yielded :class:`Stops` (so a wait ends at once), and at its end each
    is passed on to the handler installed before it (uvicorn's, which then stops the worker). A
    stop that lands while the app is still being built is not lost in a wait for siblings that
    are gone. Outside the main thread nothing is held."""
    caught = Stops()
    main = threading.current_thread() is threading.main_thread()
    stops = (signal.SIGTERM, signal.SIGINT)
    before = (
        {sig: signal.signal(sig, lambda n, _f: caught.append(n)) for sig in stops} if main else {}
    )
    caught.before = any(_told_to_stop(handler) for handler in before.values())
    try:
        yield caught
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)
        for number in caught:
            signal.raise_signal(number)


def wait_for_siblings(
    server: str, workers: int, limit: float = SIBLING_WAIT_S, stops: Stops | None = None
) -> bool:
    """Say this worker is ready, then wait until ``workers`` processes have (at most ``limit``
    seconds). SIGTERM or SIGINT ends the wait (held by :func:`held_stops`, here or in ``stops``
    when the caller already holds them) and is passed on to the handler installed before it
    (uvicorn's).

    Returns:
        whether all ``workers`` were ready; ``False`` at once where abstract sockets or
        ``/proc/net/unix`` do not exist, or when a stop came before or during the wait.
    """
    if stops is None:
        with held_stops() as held:
            return wait_for_siblings(server, workers, limit, held)
    if stops or not say_ready(server):
        return False
    try:
        deadline = time.monotonic() + limit
        while not stops and time.monotonic() < deadline:
            if ready(server) >= workers:
                return True
            time.sleep(_POLL_S)
        return False
    except OSError:  # no /proc/net/unix
        return False
