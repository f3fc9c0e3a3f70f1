"""Section 7's content path: how section 16's loss reaches one entry of W_V.

The loss of :mod:`attnlab.lesson.experiment` reaches W_Q through the reading ratios
(loss → O → P → S → Q → W_Q) and W_V through the content (loss → O → V → W_V). V takes no part
in the scores, so the content path is short: with h_b the final-position output of prompt b,

    ∂L/∂W_V[i, c] = (1/B) Σ_b Σ_j P_b[T−1, j] · x_b[j, i] · ∂L_b/∂h_b[c],
    ∂L_b/∂h_b = (p_b − y_b) W_vocabᵀ,

where p_b is the vocabulary softmax and y_b the one-hot target. We compute the gradient of
:data:`attnlab.core.example.VALUE_GRAD_PARAM` three ways, as section 16 does for W_Q[1, 0]:
autograd, a central finite difference and this closed form.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from attnlab.core import example
from attnlab.lesson.experiment import Forward, forward

_FD_STEP = 1e-6


@dataclass(frozen=True)
class ValueGradient:
    """d(mean loss)/dW_V[i, c] three ways, and the pieces of the closed form."""

    param: tuple[int, int]
    autograd: float
    finite_difference: float
    closed_form: float
    reads: torch.Tensor  # [B]: Σ_j P_b[T−1, j]·x_b[j, i], how much feature i the final row reads
    dloss_dh: torch.Tensor  # [B, d_head]: ∂L_b/∂h_b, each prompt's own loss


def closed_form_value_grad(
    fwd: Forward, param: tuple[int, int]
) -> tuple[float, torch.Tensor, torch.Tensor]:
    """d(mean loss)/dW_V[i, c] from the chain rule above, with its two factors: how much of
    feature i each final row reads ``[B]`` and ``∂L_b/∂h_b`` ``[B, d_head]``."""
    i, c = param
    st = fwd.stages
    w_vocab = example.lesson_w_vocab(st.x.dtype)  # [d_head, V_vocab]
    onehot = F.one_hot(example.lesson_targets(), fwd.probs.size(-1)).to(st.x.dtype)
    dloss_dh = (fwd.probs - onehot) @ w_vocab.T  # [B, d_head]
    reads = (st.weights[:, -1, :] * st.x[:, :, i]).sum(-1)  # [B]
    return float((reads * dloss_dh[:, c]).mean()), reads, dloss_dh


def value_gradient(dtype: torch.dtype = torch.float64) -> ValueGradient:
    """The gradient of section 16's mean loss with respect to W_V[i, c], three ways."""
    i, c = example.VALUE_GRAD_PARAM
    w_q = example.lesson_w_q(dtype)
    w_v = example.lesson_w_v(dtype).requires_grad_(True)
    (grad,) = torch.autograd.grad(forward(w_q, w_v).loss_mean, w_v)
    with torch.no_grad():
        plus, minus = w_v.detach().clone(), w_v.detach().clone()
        plus[i, c] += _FD_STEP
        minus[i, c] -= _FD_STEP
        fd = (forward(w_q, plus).loss_mean - forward(w_q, minus).loss_mean) / (2 * _FD_STEP)
        before = forward(w_q, w_v.detach())
        closed, reads, dloss_dh = closed_form_value_grad(before, (i, c))
    return ValueGradient(
        param=(i, c),
        autograd=float(grad[i, c]),
        finite_difference=float(fd),
        closed_form=closed,
        reads=reads,
        dloss_dh=dloss_dh,
    )
