"""The lesson as one JSON-ready document: every stage per prompt, plus section 16's experiment.

``week07_attention.py --json``, ``course_examples/week07_attention.py --json`` and
``attnlab trace --format json`` all write this document. Its top-level ``x``, ``w_q``, ``w_k``,
``w_v`` and ``tokens`` make it a valid ``--input`` file. Masked entries (−∞) are written as the
string ``"-inf"`` because JSON has no infinity.
"""

from __future__ import annotations

import torch

from attnlab.core import example
from attnlab.core.pipeline import STAGE_AXES, AttentionStages, MultiHeadStages
from attnlab.lesson.experiment import ExperimentResult, Forward
from attnlab.lesson.value_grad import ValueGradient
from attnlab.text.jsonable import Json, to_json


def stages_document(stages: AttentionStages) -> dict[str, Json]:
    """``{"A": {"x": ..., "q": ..., ...}, "B": ...}``: every stage, one batch row per prompt."""
    out: dict[str, Json] = {}
    for b, name in enumerate(example.prompt_names(stages.x.size(0))):
        out[name] = {
            stage: to_json(t if stage == "causal_mask" else t[b]) for stage, t in stages.items()
        }
    return out


def multi_head_document(stages: MultiHeadStages) -> dict[str, Json]:
    """Per prompt: each head's stages, the concatenation and the output after W_O."""
    out: dict[str, Json] = {}
    for b, name in enumerate(example.prompt_names(stages.x.size(0))):
        heads = [
            {s: to_json(t if s == "causal_mask" else t[b]) for s, t in stages.head(h).items()}
            for h in range(stages.q.size(1))
        ]
        out[name] = {
            "x": to_json(stages.x[b]),
            "heads": heads,
            "concat": to_json(stages.concat[b]),
            "projected": to_json(stages.output[b]),
        }
    return out


def _forward_doc(fwd: Forward) -> dict[str, Json]:
    return {
        "h": to_json(fwd.h),
        "logits": to_json(fwd.logits),
        "probabilities": to_json(fwd.probs),
        "target_probabilities": to_json(fwd.target_probs),
        "losses": to_json(fwd.losses),
        "loss_mean": float(fwd.loss_mean),
    }


def experiment_document(result: ExperimentResult) -> dict[str, Json]:
    """Section 16's numbers under their stable JSON keys (``loss_mean``, ``grad_wq_1_0``...)."""
    before, after = _forward_doc(result.before), _forward_doc(result.after)
    i, j = result.param
    return {
        "param": f"W_Q[{i},{j}]",
        "targets": example.lesson_targets().tolist(),
        "w_vocab": to_json(example.lesson_w_vocab()),
        **before,
        f"grad_wq_{i}_{j}": result.grad_autograd,
        "grad_finite_difference": result.grad_finite_difference,
        "grad_closed_form": result.grad_closed_form,
        "lr": result.lr,
        "q_old": result.q_old,
        "q_new": result.q_new,
        "loss_mean_after": after["loss_mean"],
        "target_probabilities_after": after["target_probabilities"],
        "losses_after": after["losses"],
        "after": after,
    }


def value_gradient_document(g: ValueGradient) -> dict[str, Json]:
    """Section 7's content path: d(mean loss)/dW_V[i,c] three ways, and its two factors."""
    i, c = g.param
    return {
        "param": f"W_V[{i},{c}]",
        f"grad_wv_{i}_{c}": g.autograd,
        "grad_finite_difference": g.finite_difference,
        "grad_closed_form": g.closed_form,
        "reads": to_json(g.reads),
        "dloss_dh": to_json(g.dloss_dh),
    }


def input_fields(
    x: torch.Tensor,
    w_q: torch.Tensor,
    w_k: torch.Tensor,
    w_v: torch.Tensor,
    tokens: list[list[str]],
) -> dict[str, Json]:
    """The fields that make a document usable again as ``--input``."""
    return {
        "tokens": tokens,
        "x": to_json(x),
        "w_q": to_json(w_q),
        "w_k": to_json(w_k),
        "w_v": to_json(w_v),
    }


def axes_document() -> dict[str, list[str]]:
    """Axis names of every stage."""
    return {name: list(axes) for name, axes in STAGE_AXES.items()}
