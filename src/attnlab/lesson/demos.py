"""What the lesson derives from its head, computed through the pipeline: sections 1, 5, 10, 11, 16.

Besides the stages of its head the lesson shows a few numbers of its own: a uniform mean as the
baseline (section 1), the exponentials a softmax adds up (section 5), the mask of a longer
sequence (section 10), a row whose future is filled with 0 instead of −∞ (section 11) and the
final scaled scores as lines in one parameter (section 16). Each function below computes one
group of them as named tensors; :mod:`attnlab.lesson.numbers` calls each once and serves the
values by key. Axis letters as in :mod:`attnlab.core.pipeline`.
"""

from __future__ import annotations

import torch

from attnlab.core import example, steps
from attnlab.core.pipeline import AttentionStages, attend, causal_mask
from attnlab.lesson.experiment import ExperimentResult

Values = dict[str, torch.Tensor]


def head_values(stages: AttentionStages) -> Values:
    """Sections 4-11: every stage of the lesson's head and what the lesson derives from them.

    Adds ``exp`` ``[B, T, T]`` (e^s of the masked scores, e^−∞ = 0), ``exp_sum`` ``[B, T]`` (each
    query row's softmax denominator, section 5's "sum = 3.718"), ``weights_sum`` ``[B, T]``
    (each row of weights sums to 1), ``sqrt_d_k``, ``logits`` ``[B, T, V_vocab]`` (section 16's
    LM head on every position) and ``causal_mask_t4`` (section 10's mask for T=4); for the
    exercises, what the page leaves to the learner: ``unscaled_weights`` ``[B, T, T]`` (the softmax
    without ÷√d_k), ``column_sums`` ``[B, T_key]`` (weights summed over the queries, dim=1),
    ``swapped_output`` ``[B, T, d_head]`` (each prompt's values read with the other prompt's
    weights) and ``zero_fill_weights`` ``[B, T, T]`` (the future filled with 0, not −∞).
    """
    values = dict(stages.items())
    exp = torch.exp(stages.masked_scores)  # [B, T, T]
    values["exp"] = exp
    values["exp_sum"] = exp.sum(dim=-1)  # [B, T]
    values["weights_sum"] = stages.weights.sum(dim=-1)  # [B, T]
    values["sqrt_d_k"] = torch.tensor(float(stages.q.size(-1)), dtype=torch.float64).sqrt()
    values["logits"] = stages.output @ example.lesson_w_vocab(stages.x.dtype)  # [B, T, V_vocab]
    values["causal_mask_t4"] = causal_mask(example.MASK_CHECK_TOKENS)  # [T=4, T=4]
    # (√d_k q)·k / √d_k = q·k: the same attention code, with the scaling undone
    unscaled = attend(stages.q * values["sqrt_d_k"], stages.k, stages.v)
    values["unscaled_weights"] = unscaled.weights  # [B, T, T]
    values["column_sums"] = stages.weights.sum(dim=1)  # [B, T_key]
    values["swapped_output"] = stages.weights.flip(0) @ stages.v  # [B, T, d_head]
    zero = steps.ZERO_FILL
    values["zero_fill_weights"] = zero.softmax(zero.mask(stages.scaled_scores))  # [B, T, T]
    return values


def uniform_mean(x: torch.Tensor) -> Values:
    """Section 1's baseline as attention with all-equal scores: zero queries and keys give every
    visible position the same weight 1/(t+1), so each position averages its visible prefix.

    Returns ``mean`` ``[B, T, C]`` and its fixed reading ratios ``weights`` ``[B, T, T]``, and
    ``weights_t4`` ``[T=4, T=4]``, the ratios of a sequence of 4 tokens.
    """
    zeros = torch.zeros_like(x[..., :1])  # [B, T, 1]
    s = attend(zeros, zeros, x)
    t4 = torch.zeros(example.MASK_CHECK_TOKENS, 1, dtype=x.dtype)  # [T=4, 1]
    return {
        "mean": s.output,  # [B, T, C]
        "weights": s.weights,  # [B, T, T]
        "weights_t4": attend(t4, t4, t4).weights,  # [T=4, T=4]
    }


def mask_fill(row: tuple[float, float] = example.MASK_DEMO_ROW) -> Values:
    """Section 11: query t=0 of a T=2 table whose scaled scores are ``[score, future]``.

    ``neg_inf_fill`` is :func:`attnlab.core.pipeline.attend`'s answer (the future filled with −∞);
    ``zero_fill`` runs the same scaled scores through :data:`attnlab.core.steps.ZERO_FILL`,
    the catalogue's ``mask_zero_fill`` mistake. Also returns the ``row`` itself and ``future``
    (True where the key lies in the query's future), each ``[T_key]``, and ``late_zero``: the
    softmax taken first and the future zeroed after it (the catalogue's ``softmax_then_mask``).
    """
    score, future = row
    # q·k / √1 reproduces [score, future] exactly in row t=0.
    q = torch.tensor([[1.0], [0.0]], dtype=torch.float64)  # [T, d_head=1]
    k = torch.tensor([[score], [future]], dtype=torch.float64)  # [T, d_head=1]
    v = torch.eye(2, dtype=torch.float64)  # [T, 2]
    right = attend(q, k, v)
    zero = steps.ZERO_FILL
    wrong = zero.softmax(zero.mask(right.scaled_scores))  # [T_query, T_key]
    return {
        "row": right.scaled_scores[0],
        "future": ~right.causal_mask[0],
        "neg_inf_fill": right.weights[0],
        "zero_fill": wrong[0],
        "late_zero": steps.softmax_then_mask(right.scaled_scores)[0],
    }


def score_lines(result: ExperimentResult) -> Values:
    """Section 16: each final-row scaled score as ``slope·q + intercept`` in q = W_Q[i, j]
    (``[0.8q, 0.2q+0.2]`` for prompt A), and each vocabulary softmax row's sum ``[B]``."""
    scaled = result.before.stages.scaled_scores[:, -1, :]  # [B, T_key]
    return {
        "score_slopes": result.score_slopes,  # [B, T_key]
        "score_intercepts": scaled - result.score_slopes * result.q_old,  # [B, T_key]
        "probs_sum": result.before.probs.sum(dim=-1),  # [B]
    }


def softmax_shift(
    row: torch.Tensor, constants: tuple[float, ...] = example.SHIFT_CONSTANTS
) -> Values:
    """Section 8: one score row with a constant added, through :func:`attnlab.core.pipeline.attend`.

    The last query of a causal table sees every key, so its weights are the softmax of its whole
    row; a one-wide query of 1 against keys ``row + c`` makes that row exactly ``row + c``.
    Returns ``constants`` ``[n]``, the shifted ``rows`` ``[n, T_key]``, their ``weights``
    ``[n, T_key]``, the unshifted ``base`` weights ``[T_key]`` and ``max_diff`` ``[n]``, the
    largest difference of each shifted row's weights from ``base``.
    """
    c = torch.tensor((0.0, *constants), dtype=row.dtype)  # [1 + n]
    rows = row[None, :] + c[:, None]  # [1 + n, T_key]
    T = rows.size(-1)
    q = torch.ones(rows.size(0), T, 1, dtype=row.dtype)  # [1 + n, T, d_head=1]
    k = rows[:, :, None]  # [1 + n, T, d_head=1]: q·k/√1 = row + c in every query row
    weights = attend(q, k, torch.zeros_like(q)).weights[:, -1, :]  # [1 + n, T_key]
    base = weights[0]  # [T_key]
    return {
        "constants": c[1:],
        "rows": rows[1:],
        "weights": weights[1:],
        "base": base,
        "max_diff": (weights[1:] - base).abs().amax(dim=-1),
    }
