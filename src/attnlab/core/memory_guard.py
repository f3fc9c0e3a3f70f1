"""Refuse work that cannot fit in memory or time, before allocating anything.

:func:`attnlab.core.pipeline.attend` keeps four score tensors of ``B·n_head·T²`` elements each
(raw, scaled and masked scores, weights; section 17 of the lesson). Past a few thousand tokens
that is more memory than the machine has, and the operating system kills the process without a
message. :func:`check_scores_fit` predicts the bytes first and raises a one-line error instead.

A learner's command has a tighter rule: nothing it accepts may need more than
:data:`COMMAND_BUDGET_BYTES` (2 GiB) or half a minute. The front ends predict the bytes of the
stages and of what they render (a JSON document costs :data:`DOCUMENT_BYTES_PER_NUMBER` per
number, and builds at about a million numbers a second, so the memory bound is also the time
bound) and call :func:`check_budget`, which names the predicted GiB and a way out.
"""

from __future__ import annotations

import math

import torch

from attnlab.text.errors import InputError, Text, input_error

#: Score tensors of ``B·n_head·T²`` elements that ``attend`` holds at once.
SCORE_TENSORS = 4

#: Predictions below this are not worth asking the operating system about (the common case).
CHECK_ABOVE_BYTES = 256 * 2**20

GIB = 2**30

#: The most memory one learner command may need (``trace``, ``plot``, ``check``, the explorer).
COMMAND_BUDGET_BYTES = 2 * GIB

#: Peak bytes per number of a JSON document: the float and its list slot, the JSON text, the
#: reformatted copy ``dumps`` makes and the encoded output (measured: about 120 at T=1000).
DOCUMENT_BYTES_PER_NUMBER = 200


class TooLargeError(InputError, MemoryError):
    """A command would need more memory (and time) than it may take."""


class ScoresTooLargeError(TooLargeError):
    """The dense path's score tensors would not fit in the memory available."""


def check_budget(need: int, what: Text, hint: Text) -> None:
    """Raise :class:`TooLargeError` when ``need`` bytes exceed :data:`COMMAND_BUDGET_BYTES`.

    Args:
        need: the predicted peak bytes.
        what: what needs them (``"trace --format json: 125,000,000 numbers"``).
        hint: how to ask for less.

    Example::

        >>> check_budget(3 * GIB, "the stages", "use a shorter sequence")
        Traceback (most recent call last):
        ...
        attnlab.core.memory_guard.TooLargeError: the stages need about 3.00 GiB, more than the 2 GiB one command may use; use a shorter sequence
    """  # noqa: E501
    if need > COMMAND_BUDGET_BYTES:
        raise input_error(
            "budget", TooLargeError, what=what, need=need / GIB,
            limit=COMMAND_BUDGET_BYTES / GIB, hint=hint,
        )  # fmt: skip


def score_bytes(q: torch.Tensor, k: torch.Tensor | None = None) -> int:
    """Bytes of the :data:`SCORE_TENSORS` ``[..., T_query, T_key]`` tensors ``attend`` builds."""
    T_key = (k if k is not None else q).size(-2)
    elements = math.prod(q.shape[:-1]) * T_key  # B·n_head·T²
    return SCORE_TENSORS * elements * q.element_size()


def available_bytes() -> int:
    """Memory the OS could give us now without swapping (``psutil.virtual_memory().available``)."""
    import psutil  # imported here: only large inputs need it

    return int(psutil.virtual_memory().available)


def check_scores_fit(q: torch.Tensor, k: torch.Tensor | None = None) -> None:
    """Raise :class:`ScoresTooLargeError` if the dense path's score tensors cannot fit.

    Args:
        q: queries ``[..., T_query, d_head]``; k: keys ``[..., T_key, d_head]`` (``q`` if omitted).

    Example::

        >>> check_scores_fit(torch.zeros(1, 8, 1024, 64))  # 128 MiB of scores: fine
    """
    need = score_bytes(q, k)
    if need < CHECK_ABOVE_BYTES or q.is_meta:  # meta tensors hold shapes only, no numbers
        return
    free = available_bytes()
    if need > free:
        T_key = (k if k is not None else q).size(-2)
        shape = ", ".join(str(s) for s in (*q.shape[:-1], T_key))
        raise ScoresTooLargeError(
            f"the explicit attention path needs about {need / GIB:.2f} GiB for its "
            f"{SCORE_TENSORS} score tensors [{shape}] ({q.dtype}) but only {free / GIB:.2f} GiB "
            f"of memory is available; use the 'tiled' or 'sdpa' backend, or a shorter sequence"
        )
