"""The pipe between the judging process and the learner's process: length-prefixed messages.

A message is ``torch.save`` of plain data (dicts, lists, tuples, str, int, float, bool, None and
tensors). The judge reads the learner's replies with ``torch.load(weights_only=True)``, which
builds nothing but those types: a reply cannot run code in the judge, whatever the learner's
file did to its own process. :func:`plain` turns anything else the learner's code produced
into its type name before it is sent.
"""

from __future__ import annotations

import io
import os
import select
import struct
import time
from typing import Any

import torch

#: Largest reply the judge reads; the learner's tensors at the audit's sizes are far smaller.
MAX_BYTES = 64 * 2**20
_HEADER = struct.Struct("<Q")


class WireError(Exception):
    """The other side closed the pipe, or sent something that is not a message."""


class TooBig(WireError):
    """A message over the reader's limit (``size`` bytes, as its header says)."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"a message of {size} bytes, over the {limit} byte limit")
        self.size = size


class TooSlow(Exception):
    """The other side did not answer before the deadline."""


#: The learner's process's first message on its replies pipe: its imports are done, and the
#: judge starts the learner's clock.
HELLO = {"op": "ready"}


def send(fd: int, message: Any) -> None:
    """Write one message to ``fd``."""
    buf = io.BytesIO()
    torch.save(message, buf)
    data = buf.getvalue()
    view = memoryview(_HEADER.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view) :]


def _read_exactly(fd: int, n: int, deadline: float | None) -> bytes:
    chunks, left = [], n
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    while left:
        if deadline is not None:
            wait = deadline - time.monotonic()
            if wait <= 0 or not poller.poll(1000 * wait):
                raise TooSlow()
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            raise WireError("the pipe closed")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def receive(fd: int, limit: int = MAX_BYTES, deadline: float | None = None) -> Any:
    """Read one message from ``fd``: plain data and tensors only.

    Raises:
        WireError: the pipe closed, the message is over ``limit`` bytes or is not plain data.
        TooSlow: it was not all there by ``deadline`` (``time.monotonic()``).
    """
    (size,) = _HEADER.unpack(_read_exactly(fd, _HEADER.size, deadline))
    if size > limit:
        raise TooBig(size, limit)
    data = _read_exactly(fd, size, deadline)
    try:
        return torch.load(io.BytesIO(data), weights_only=True)
    except Exception as exc:  # any unpickling failure means the reply is not ours
        raise WireError(f"not a message: {type(exc).__name__}") from None


def plain(value: Any, depth: int = 0) -> Any:
    """``value`` as data :func:`receive` accepts: tensors detached, other objects by type name."""
    if isinstance(value, torch.Tensor):
        if value.is_nested or value.layout != torch.strided or value.device.type != "cpu":
            return f"<tensor {value.layout} {value.dtype} on {value.device}>"  # torch.save of
        return value.detach().clone().as_subclass(torch.Tensor)  # these may fail or mislead
    if value is None or type(value) in (bool, int, float, str):
        return value
    if depth > 8:
        return f"<{type(value).__name__}>"
    if isinstance(value, tuple | list):
        items = [plain(v, depth + 1) for v in value]
        return tuple(items) if isinstance(value, tuple) else items
    if type(value) is dict:
        return {str(k): plain(v, depth + 1) for k, v in value.items()}
    return f"<{type(value).__name__}>"
