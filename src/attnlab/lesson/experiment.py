"""Section 16: how the next-token loss reaches one entry of W_Q.

The lesson's single head feeds its final-position output h into a fixed scoring layer
``W_vocab`` ``[d_head, V_vocab]``; cross-entropy against the targets (A → AI, B → 我) gives a loss.
We differentiate the mean loss with respect to ``W_Q[1, 0]`` three ways (autograd, a central
finite difference, and the closed form built from the scaled-score expressions), take one SGD
step, and recompute everything.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from attnlab.core import example
from attnlab.core.pipeline import AttentionStages, attention_stages

_FD_STEP = 1e-6


@dataclass(frozen=True)
class Forward:
    """The forward pass of the experiment for a given W_Q."""

    stages: AttentionStages
    h: torch.Tensor  # [B, d_head] final-position head output
    logits: torch.Tensor  # [B, V_vocab]
    probs: torch.Tensor  # [B, V_vocab] vocabulary softmax
    target_probs: torch.Tensor  # [B]
    losses: torch.Tensor  # [B] cross-entropy per prompt
    loss_mean: torch.Tensor  # []


def forward(w_q: torch.Tensor, w_v: torch.Tensor | None = None) -> Forward:
    """Run the head with ``w_q`` (and ``w_v``, the lesson's by default) and score its final
    position against the targets."""
    dtype = w_q.dtype
    w_v = example.lesson_w_v(dtype) if w_v is None else w_v
    stages = attention_stages(example.lesson_x(dtype), w_q, example.lesson_w_k(dtype), w_v)
    h = stages.output[:, -1, :]  # [B, d_head]
    logits = h @ example.lesson_w_vocab(dtype)  # [B, V_vocab]
    probs = torch.softmax(logits, dim=-1)  # [B, V_vocab], over the vocabulary axis
    targets = example.lesson_targets()  # [B]
    losses = F.cross_entropy(logits, targets, reduction="none")  # [B]
    target_probs = probs.gather(1, targets[:, None])[:, 0]  # [B]
    return Forward(stages, h, logits, probs, target_probs, losses, losses.mean())


def closed_form_grad(fwd: Forward, param: tuple[int, int]) -> tuple[float, torch.Tensor]:
    """d(mean loss)/dW_Q[i, j] from the scaled-score expressions of the final rows.

    Each final-row scaled score is linear in θ = W_Q[i, j]: ``s_r = a_r·θ + b_r`` with
    ``a_r = x_T[i]·k_r[j]/√d_k``. Returns the gradient and the slopes ``a`` ``[B, T]``.
    """
    i, j = param
    st = fwd.stages
    d_k = st.q.size(-1)
    x_last = st.x[:, -1, :]  # [B, C]
    slopes = x_last[:, i, None] * st.k[:, :, j] / d_k**0.5  # [B, T] = ds/dθ
    w = st.weights[:, -1, :]  # [B, T]
    dw = w * (slopes - (w * slopes).sum(-1, keepdim=True))  # [B, T] softmax Jacobian
    dh = (dw[:, :, None] * st.v).sum(1)  # [B, d_head]
    dlogits = dh @ example.lesson_w_vocab(st.x.dtype)  # [B, V_vocab]
    onehot = F.one_hot(example.lesson_targets(), fwd.probs.size(-1)).to(st.x.dtype)
    dloss = ((fwd.probs - onehot) * dlogits).sum(-1)  # [B]
    return float(dloss.mean()), slopes


@dataclass(frozen=True)
class ExperimentResult:
    """Everything section 16 reports, before and after the one-parameter update."""

    before: Forward
    after: Forward
    param: tuple[int, int]
    q_old: float
    q_new: float
    lr: float
    grad_autograd: float
    grad_finite_difference: float
    grad_closed_form: float
    score_slopes: torch.Tensor  # [B, T]: d(final scaled score)/dθ


def run_experiment(dtype: torch.dtype = torch.float64) -> ExperimentResult:
    """Compute section 16's numbers (float64 by default, so 6 decimals are exact)."""
    i, j = example.EXPERIMENT_PARAM
    w_q = example.lesson_w_q(dtype).requires_grad_(True)
    (grad,) = torch.autograd.grad(forward(w_q).loss_mean, w_q)
    with torch.no_grad():
        before = forward(w_q.detach())
        plus, minus = w_q.clone(), w_q.clone()
        plus[i, j] += _FD_STEP
        minus[i, j] -= _FD_STEP
        fd = (forward(plus).loss_mean - forward(minus).loss_mean) / (2 * _FD_STEP)
        closed, slopes = closed_form_grad(before, (i, j))
        updated = w_q.detach().clone()
        updated[i, j] -= example.EXPERIMENT_LR * grad[i, j]
        after = forward(updated)
    return ExperimentResult(
        before=before,
        after=after,
        param=(i, j),
        q_old=float(w_q.detach()[i, j]),
        q_new=float(updated[i, j]),
        lr=example.EXPERIMENT_LR,
        grad_autograd=float(grad[i, j]),
        grad_finite_difference=float(fd),
        grad_closed_form=closed,
        score_slopes=slopes,
    )
