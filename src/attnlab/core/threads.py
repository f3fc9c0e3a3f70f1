"""Torch on one thread for a while: for work on tensors of a few numbers each.

The lesson's walk, a dealt practice exercise and the audit's probes run hundreds of operations
on 2×2 or 3×3 tensors. Waking a second thread for each costs more than the operation itself (tens
of milliseconds each on a busy 2-core machine), so they run on one thread and then restore the
setting. torch is imported only when the block starts, so a script can parse its arguments first.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator


@contextlib.contextmanager
def one_thread() -> Iterator[None]:
    """``with one_thread():`` runs its block with ``torch.set_num_threads(1)``, then restores."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)
