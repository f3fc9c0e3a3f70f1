"""Exact causal attention without the T×T score table: FlashAttention's online softmax.

The dense path, :func:`attnlab.core.pipeline.attend`, builds four ``[B, n_head, T, T]`` score
tensors,
so its memory grows as T² (section 17 of the lesson). A softmax row does not need all its scores
at once: keep, for every query row, the largest score seen so far ``m`` and the sum of
exponentials ``l`` measured from it, and rescale the partial output whenever ``m`` grows (the
*online softmax*, Milakov & Gimelshein 2018, arXiv:1805.02867). FlashAttention runs this over
tiles of queries and keys and, in the backward pass, recomputes each tile's weights from the
per-row log-sum-exp instead of storing them (Dao et al. 2022, arXiv:2205.14135, Algorithms 1-2;
the loop order here is FlashAttention-2's, Dao 2023, arXiv:2307.08691). This module is that
algorithm in plain PyTorch: the same function as ``attend``, with memory linear in T. Its work
is split once into items that run on single-threaded worker threads (:func:`_in_parallel`).

It is the one deliberate exception to "attention is computed only in :mod:`attnlab.core.pipeline`":
a different algorithm for the same maths, held to the pipeline's numbers by the tests.

Axis letters as in :mod:`attnlab.core.pipeline`. ``N`` is the flattened leading axes (``B·n_head``),
``G`` a group of those rows processed together (as many as fit in one core's L2 cache,
:func:`l2_cache_bytes`), ``T_tile`` the rows or columns of one tile.
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from queue import Empty, SimpleQueue
from typing import Any

import torch
from torch.autograd.function import once_differentiable

from attnlab.core.pipeline import check_positive
from attnlab.text.errors import shape_text

#: Query rows and key columns per tile. 256×256 float32 scores are 256 KiB per head: big enough
#: for efficient matrix multiplies, small enough that a tile's passes stay in a core's L2 cache.
BLOCK_SIZE = 256

#: exp(x) = 2^(x·log₂e). Scores are kept in base 2 (log₂e folded into q's scale) because
#: ``exp2`` is about three times cheaper than ``exp`` on CPU; FlashAttention kernels do the same.
LOG2_E = math.log2(math.e)

DEFAULT_L2_BYTES = 2**20  #: assumed when neither sysfs nor sysconf reports an L2 size


def _parse_size(text: str) -> int:
    """``"1024K"`` → 1048576 (sysfs's format for cache sizes)."""
    text = text.strip().upper()
    return int(text.rstrip("KMG")) * {"K": 2**10, "M": 2**20, "G": 2**30}.get(text[-1:], 1)


@functools.cache
def l2_cache_bytes() -> int:
    """One core's L2 cache in bytes: from Linux's sysfs, else ``os.sysconf``, else
    :data:`DEFAULT_L2_BYTES`."""
    for index in sorted(Path("/sys/devices/system/cpu/cpu0/cache").glob("index*")):
        with contextlib.suppress(OSError, ValueError):
            kind = (index / "type").read_text().strip()
            if (index / "level").read_text().strip() == "2" and kind != "Instruction":
                return _parse_size((index / "size").read_text())
    size = 0
    with contextlib.suppress(ValueError, OSError, AttributeError):
        size = os.sysconf("SC_LEVEL2_CACHE_SIZE")
    return size if size > 0 else DEFAULT_L2_BYTES


def _head_bytes(block: int, d_head: int, itemsize: int) -> int:
    """Bytes one head touches per tile step: its score tile and q, k, v and output tiles."""
    return itemsize * (block * block + 4 * block * d_head)


def tiled_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, block_size: int = BLOCK_SIZE
) -> torch.Tensor:
    r"""Causal :math:`\mathrm{softmax}(QK^\top/\sqrt{d_k})V`, one tile of scores at a time.

    Equal (to rounding) to ``attend(q, k, v).output`` from :mod:`attnlab.core.pipeline`, but never
    holds more than one ``[G, block_size, block_size]`` tile of scores; the backward pass
    recomputes the tiles from q, k and the saved per-row log-sum-exp.

    Args:
        q, k, v: queries, keys and values ``[..., T, d_head]`` with the same shape, e.g.
            ``[B, n_head, T, d_head]``.
        block_size: query rows and key columns per tile.

    Shape:
        - Output: ``[..., T, d_head]``, the shape of ``q``.

    Example::

        >>> q, k, v = torch.randn(3, 2, 2, 5, 4).unbind(0)
        >>> out = tiled_attention(q, k, v, block_size=2)
        >>> from attnlab.core.pipeline import attend
        >>> bool(torch.allclose(out, attend(q, k, v).output, atol=1e-6))
        True
    """
    _check_qkv(q, k, v)
    check_positive(block_size=block_size)
    return TiledAttention.apply(q, k, v, block_size)  # [..., T, d_head]


def _check_qkv(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> None:
    for name, t in (("q", q), ("k", k), ("v", v)):
        if not isinstance(t, torch.Tensor):
            raise TypeError(
                f"{name} must be a torch.Tensor [..., T, d_head], got {type(t).__name__}"
            )
        if not torch.is_floating_point(t) or t.dim() < 2 or t.size(-2) == 0:
            raise ValueError(
                f"{name} must be a float tensor [..., T, d_head] with T >= 1, "
                f"got {t.dtype} of shape {shape_text(t.shape)}"
            )
    if not q.shape == k.shape == v.shape:
        raise ValueError(
            f"q, k and v must have the same shape [..., T, d_head], "
            f"got q {shape_text(q.shape)}, k {shape_text(k.shape)}, v {shape_text(v.shape)}"
        )
    if not q.dtype == k.dtype == v.dtype:
        raise TypeError(f"q, k and v must share a dtype, got {q.dtype}, {k.dtype}, {v.dtype}")


class TiledAttention(torch.autograd.Function):
    """Autograd wrapper: the forward saves only q, k, v, the output and the log-sum-exp."""

    @staticmethod
    def forward(
        ctx: Any, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, block_size: int
    ) -> torch.Tensor:
        T, d_head = q.shape[-2:]
        q3, k3, v3 = (t.reshape(-1, T, d_head) for t in (q, k, v))  # [N, T, d_head]
        out, lse = _forward(q3, k3, v3, block_size)  # [N, T, d_head], [N, T, 1]
        ctx.save_for_backward(q3, k3, v3, out, lse)
        ctx.block_size = block_size
        return out.view(q.shape)  # [..., T, d_head]

    @staticmethod
    @once_differentiable
    def backward(ctx: Any, grad_out: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
        q3, k3, v3, out, lse = ctx.saved_tensors
        grads = _backward(q3, k3, v3, out, lse, grad_out.reshape(out.shape), ctx.block_size)
        dq, dk, dv = (g.view(grad_out.shape) for g in grads)  # [..., T, d_head] each
        return dq, dk, dv, None


def _future_bias(block: int, like: torch.Tensor) -> torch.Tensor:
    """``[block, block]`` additive mask for a diagonal tile: −∞ above the diagonal, else 0."""
    return torch.full((block, block), float("-inf"), dtype=like.dtype, device=like.device).triu_(1)


def _head_groups(N: int, block: int, d_head: int, itemsize: int, parts: int = 1) -> list[slice]:
    """Slices of the N rows: as many heads per group as fit in this machine's L2 cache
    (:func:`_head_bytes` each, at least one), and at least ``parts`` groups when N allows.

    Measured on a 2-core AMD EPYC (1 MiB L2; T=4096, 8 heads, d_head=64, one thread): groups
    that fit in L2 (2 heads) took 3 % less CPU time forward and 9 % less forward+backward than
    groups of 8 heads, whose 4 MiB of working set spilled out of L2 on every pass over a tile.
    """
    fit = l2_cache_bytes() // _head_bytes(block, d_head, itemsize)
    size = max(1, min(fit, -(-N // parts)))
    return [slice(g, min(g + size, N)) for g in range(0, N, size)]


def _in_parallel(work: Callable[[Any], None], items: list[Any]) -> None:
    """Calls ``work(item)`` for every item on the caller's ``torch.get_num_threads()`` threads
    (at most one per item), each running its PyTorch ops single-threaded.

    PyTorch's own CPU flash-attention kernel splits its work once, over (batch, head, query
    block), and runs each block on one thread. Doing the same here, instead of running every
    small tile op on all threads, removes the barrier after each op at which the threads wait
    for one that another process has descheduled. Threads take the next item when they finish
    one, so a thread slowed by other load simply takes fewer; ``items`` should come heaviest
    first. PyTorch ops release the GIL while they compute.
    """
    workers = min(torch.get_num_threads(), len(items))
    if workers <= 1:
        for item in items:
            work(item)
        return
    todo: SimpleQueue[Any] = SimpleQueue()
    for item in items:
        todo.put(item)
    threads, inference = torch.get_num_threads(), torch.is_inference_mode_enabled()

    def drain() -> None:
        # A thread's first get_num_threads() copies the process-wide setting into the thread;
        # doing it before set_num_threads(1) keeps that copy from overriding the 1 later.
        torch.get_num_threads()
        torch.set_num_threads(1)  # this thread's OpenMP and MKL thread count
        # Grad and inference mode are per thread: carry the caller's over.
        with torch.inference_mode(inference), torch.no_grad():
            while (item := _next(todo)) is not None:
                work(item)

    pool = ThreadPoolExecutor(workers, thread_name_prefix="attnlab-tiles")
    try:
        for done in [pool.submit(drain) for _ in range(workers)]:
            done.result()
    finally:
        while _next(todo) is not None:  # after an error or Ctrl-C the workers stop early
            pass
        pool.shutdown()
        # set_num_threads(1) also set the process-wide default that new threads start from.
        torch.set_num_threads(threads)


def _next(todo: SimpleQueue[Any]) -> Any:
    try:
        return todo.get_nowait()
    except Empty:
        return None


def _scores(
    q_tile: torch.Tensor, k: torch.Tensor, row0: int, col0: int, bias: torch.Tensor
) -> torch.Tensor:
    """Scaled scores of one tile: rows ``row0:`` of ``q_tile`` against keys ``col0:col0+block``.

    Tiles left of the diagonal are fully visible; the diagonal tile (``col0 == row0``) gets the
    causal mask added inside the matrix multiply (``baddbmm``), which costs no extra pass.
    """
    n, block = q_tile.size(1), bias.size(0)
    keys_t = k[:, col0 : col0 + block].transpose(1, 2)  # [G, d_head, T_tile]
    if col0 == row0:
        return torch.baddbmm(bias[:n, :n], q_tile, keys_t)  # [G, T_tile, T_tile]
    return torch.bmm(q_tile, keys_t)  # [G, T_tile, T_tile]


def _forward(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, block: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """Algorithm 1 over all tiles: returns the output ``[N, T, d_head]`` and lse ``[N, T, 1]``.

    Each (head group, query tile) is an independent work item (FlashAttention-2's outer loop).
    """
    N, T, d_head = q.shape
    block = min(block, T)  # a short sequence needs no tile larger than itself
    out = q.new_empty(N, T, d_head)
    lse = q.new_empty(N, T, 1)
    # Scaling q once (O(T·d_head)) gives the lesson's scaled_scores, times log₂e, straight from
    # the multiply; the running max and log-sum-exp below are in the same base-2 units.
    q = q * (LOG2_E / math.sqrt(d_head))  # [N, T, d_head]
    bias = _future_bias(block, q)
    # The last query tile reads the most key tiles: heaviest items first. Heads are split
    # further only when there are fewer query tiles than threads.
    row_starts = range((T - 1) // block * block, -1, -block)
    parts = -(-torch.get_num_threads() // len(row_starts))
    groups = _head_groups(N, block, d_head, q.element_size(), parts)
    items = [(g, row0) for row0 in row_starts for g in groups]

    def work(item: tuple[slice, int]) -> None:
        g, row0 = item
        rows = slice(row0, min(row0 + block, T))
        out[g, rows], lse[g, rows] = _forward_row_tile(q[g, rows], k[g], v[g], row0, bias)

    _in_parallel(work, items)
    return out, lse.div_(LOG2_E)  # back to the natural log-sum-exp


def _forward_row_tile(
    q_tile: torch.Tensor, k: torch.Tensor, v: torch.Tensor, row0: int, bias: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """One tile of query rows against every key tile it may read (those up to the diagonal)."""
    G, n, d_head = q_tile.shape
    row_max = q_tile.new_full((G, n, 1), float("-inf"))  # m: largest score seen so far
    norm = q_tile.new_zeros(G, n, 1)  # l: Σ 2^(score − m) over the keys seen so far
    acc = q_tile.new_zeros(G, n, d_head)  # Σ 2^(score − m) · v, not yet divided by l
    block = bias.size(0)
    for col0 in range(0, row0 + n, block):
        scores = _scores(q_tile, k, row0, col0, bias)  # [G, n, T_tile]
        new_max = torch.maximum(row_max, scores.amax(dim=-1, keepdim=True))  # [G, n, 1]
        # In place: the tile becomes 2^(score − m_new) and is dropped after this step.
        weights = scores.sub_(new_max).exp2_()  # [G, n, T_tile], unnormalised
        # 2^(m_old − m_new) ≤ 1 rescales everything summed against the old maximum.
        rescale = row_max.sub_(new_max).exp2_()  # [G, n, 1]
        norm.mul_(rescale).add_(weights.sum(dim=-1, keepdim=True))
        acc.mul_(rescale).baddbmm_(weights, v[:, col0 : col0 + block])  # [G, n, d_head]
        row_max = new_max
    # Every row sees at least its own key, so l > 0 and the log-sum-exp m + log₂ l is finite.
    return acc.div_(norm), row_max.add_(norm.log2_())  # [G, n, d_head], [G, n, 1] (base 2)


def _backward(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    out: torch.Tensor,
    lse: torch.Tensor,
    grad_out: torch.Tensor,
    block: int,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Algorithm 2: gradients of q, k, v ``[N, T, d_head]``, recomputing each tile's weights.

    The work items are head groups, as in PyTorch's CPU flash-attention backward: every key
    tile's ``dk``/``dv`` collects from many query tiles and every ``dq`` tile from many key
    tiles, so an item owning whole heads sums each in one fixed order, with no shared writes
    (the gradients come out the same on every run).
    """
    N, T, d_head = q.shape
    block = min(block, T)
    scale = 1.0 / math.sqrt(d_head)
    q_scaled = q * (scale * LOG2_E)  # [N, T, d_head]: base-2 scores, as in the forward
    lse = lse * LOG2_E  # [N, T, 1]
    # D_i = Σ_j P_ij dP_ij = dO_i · O_i: the softmax backward's row term, computed in O(T·d_head).
    row_dot = (grad_out * out).sum(dim=-1, keepdim=True)  # [N, T, 1]
    dq = torch.empty_like(q_scaled)
    dk, dv = torch.zeros_like(q_scaled), torch.zeros_like(q_scaled)
    bias = _future_bias(block, q)

    def work(g: slice) -> None:
        for row0 in range(0, T, block):
            rows = slice(row0, min(row0 + block, T))
            tiles = (q_scaled[g, rows], grad_out[g, rows], lse[g, rows], row_dot[g, rows])
            dq[g, rows] = _backward_row_tile(*tiles, k[g], v[g], dk[g], dv[g], row0, bias)

    groups = _head_groups(N, block, d_head, q.element_size(), parts=torch.get_num_threads())
    _in_parallel(work, groups)
    # scores = (q·scale) kᵀ, so dq picks up the scale here; dk was summed with q·scale·log₂e.
    return dq.mul_(scale), dk.div_(LOG2_E), dv


def _backward_row_tile(
    q_tile: torch.Tensor,
    grad_tile: torch.Tensor,
    lse_tile: torch.Tensor,
    dot_tile: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    dk: torch.Tensor,
    dv: torch.Tensor,
    row0: int,
    bias: torch.Tensor,
) -> torch.Tensor:
    """Adds one query tile's share into ``dk``/``dv`` (in place); returns its ``dq`` (unscaled)."""
    dq_tile = torch.zeros_like(q_tile)  # [G, n, d_head]
    block = bias.size(0)
    for col0 in range(0, row0 + q_tile.size(1), block):
        cols = slice(col0, col0 + block)
        # P = 2^(score − lse) recomputed exactly: already normalised, future entries 2^(−∞) = 0.
        weights = _scores(q_tile, k, row0, col0, bias).sub_(lse_tile).exp2_()  # [G, n, T_tile]
        dv[:, cols].baddbmm_(weights.transpose(1, 2), grad_tile)  # dV += Pᵀ dO
        grad_weights = torch.bmm(grad_tile, v[:, cols].transpose(1, 2))  # dP = dO Vᵀ
        grad_scores = grad_weights.sub_(dot_tile).mul_(weights)  # dS = P ∘ (dP − D)
        dq_tile.baddbmm_(grad_scores, k[:, cols])  # dQ += dS K
        dk[:, cols].baddbmm_(grad_scores.transpose(1, 2), q_tile)  # dK += dSᵀ Q
    return dq_tile
