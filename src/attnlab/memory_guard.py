"""Refuse dense attention that cannot fit in memory, before allocating any score tensor.

:func:`attnlab.pipeline.attend` keeps four score tensors of ``B·n_head·T²`` elements each
(raw, scaled and masked scores, weights; section 17 of the lesson). Past a few thousand tokens
that is more memory than the machine has, and the operating system kills the process without a
message. :func:`check_scores_fit` predicts the bytes first and raises a one-line error instead.
"""

from __future__ import annotations

import math

import torch

from attnlab.errors import InputError

#: Score tensors of ``B·n_head·T²`` elements that ``attend`` holds at once.
SCORE_TENSORS = 4

#: Predictions below this are not worth asking the operating system about (the common case).
CHECK_ABOVE_BYTES = 256 * 2**20

GIB = 2**30


class ScoresTooLargeError(InputError, MemoryError):
    """The dense path's score tensors would not fit in the memory available."""


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
    if need < CHECK_ABOVE_BYTES:
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
