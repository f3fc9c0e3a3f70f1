"""Section 17: how many score elements attention builds, and the memory they take.

The score tensor of :func:`attnlab.core.pipeline.attend` is ``[B, n_head, T, T]``; the tests check
:func:`score_elements` against the ``numel()`` of the tensor the pipeline really builds.
"""

from __future__ import annotations

from dataclasses import dataclass

from attnlab.core.pipeline import check_positive

FLOAT32_BYTES = 4


def score_elements(batch: int, heads: int, tokens: int) -> int:
    """Elements of the score tensor ``[B, n_head, T, T]``: ``B·n_head·T²``."""
    check_positive(batch=batch, heads=heads, tokens=tokens)
    return batch * heads * tokens * tokens


@dataclass(frozen=True)
class CostRow:
    """One row of the section-17 table."""

    tokens: int
    elements: int  # score elements B·n_head·T²
    ratio: float  # elements relative to the first row
    bytes_float32: int  # one score tensor plus one weights tensor, float32


def cost_table(
    tokens: list[int] | tuple[int, ...], batch: int = 2, heads: int = 2
) -> list[CostRow]:
    """The score-element table for each T in ``tokens``, relative to the first T."""
    if not tokens:
        raise ValueError("tokens must list at least one sequence length, got none")
    counts = [score_elements(batch, heads, t) for t in tokens]
    return [
        CostRow(t, n, n / counts[0], 2 * n * FLOAT32_BYTES)
        for t, n in zip(tokens, counts, strict=True)
    ]


def human_bytes(n: float) -> str:
    """``1536`` → ``"1.5 KiB"`` (up to EiB: ``attnlab cost`` accepts T up to 10⁷)."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n < 1024:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:,.1f} EiB"
