"""Computed answers: turn an expression key such as ``"weights[1,1,0]"`` into a number.

The knowledge checks never store a number. They store a key that names where the number comes
from, and this module computes it at run time through :mod:`attnlab.pipeline` (or the section-16
experiment), so a learner's answer is always graded against the code, never against a typed value.

Key grammar: ``[source.]name[index]``, where ``source`` defaults to ``lesson`` and ``index`` is a
comma-separated list of integers or ``:`` (a whole axis). Sources:

* ``lesson``: every stage of :func:`attnlab.pipeline.lesson_stages` (``q``, ``k``, ``raw_scores``,
  ``weights``, ``output`` ...), plus ``exp_sum`` (``[B, T]``, the softmax denominator of each
  query row) and ``sqrt_d_k``.
* ``uniform``: section 1's causal uniform mean, ``[B, T, C]``: attention with all-zero queries and
  keys, so every visible position gets the same weight.
* ``shapes``: section 9's extra shape check (``B=1, T=3, C=4, n_head=2``); each name is the shape
  of that stage as a list of integers, e.g. ``shapes.raw_scores`` = ``[1, 2, 3, 3]``.
* ``mask_demo``: section 11's row ``[0.2, future]``: ``neg_inf`` fills the future with −∞ through
  the pipeline, ``zero_fill`` shows the mistake of filling it with 0.
* ``cost``: section 17's score-element counts, read from the shapes the pipeline produces.
* ``experiment``: section 16's scoring layer and one-parameter gradient step.

Example::

    >>> round(resolve("weights[1,1,0]"), 4)
    0.4256
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from functools import cache

import torch

from attnlab import example, pipeline

Value = float | list
_KEY = re.compile(r"^(?:(?P<source>[a-z_]+)\.)?(?P<name>[a-z_0-9]+)(?:\[(?P<index>[^\]]*)\])?$")


class UnknownAnswerKey(KeyError):
    """An answer key names a source, quantity or index that does not exist."""


@cache
def _lesson() -> dict[str, torch.Tensor]:
    stages = pipeline.lesson_stages()
    values = dict(stages.items())
    # The softmax denominator of each query row (section 5's "sum = 3.718").
    values["exp_sum"] = torch.exp(stages.masked_scores).sum(dim=-1)  # [B, T]
    values["sqrt_d_k"] = torch.tensor(float(stages.q.size(-1)), dtype=torch.float64).sqrt()
    return values


@cache
def _uniform() -> dict[str, torch.Tensor]:
    x = example.lesson_x()  # [B, T, C]
    zeros = torch.zeros(*x.shape[:2], 1, dtype=x.dtype)  # [B, T, 1]
    # Equal scores everywhere: the causal softmax then gives each visible position 1/(t+1).
    return {"mean": pipeline.attend(zeros, zeros, x).output}  # [B, T, C]


def _shape_check_stages() -> pipeline.MultiHeadStages:
    B, T, C, H = (example.SHAPE_CHECK[k] for k in ("batch", "tokens", "embed", "heads"))
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(B, T, C, generator=gen, dtype=torch.float64)  # [B, T, C]
    w_q, w_k, w_v = (torch.randn(C, C, generator=gen, dtype=torch.float64) for _ in range(3))
    return pipeline.multi_head_stages(x, w_q, w_k, w_v, num_heads=H)


@cache
def _shapes() -> dict[str, torch.Tensor]:
    stages = _shape_check_stages()
    names = ("x", "q", "k", "v", "raw_scores", "weights", "head_outputs", "concat", "output")
    return {n: torch.tensor(list(getattr(stages, n).shape)) for n in names}


@cache
def _mask_demo() -> dict[str, torch.Tensor]:
    score, future = example.MASK_DEMO_ROW
    # Row t=0 of a T=2 table: q·k / √1 reproduces the scaled scores [score, future] exactly.
    q = torch.tensor([[1.0], [0.0]], dtype=torch.float64)  # [T, d_head=1]
    k = torch.tensor([[score], [future]], dtype=torch.float64)  # [T, d_head=1]
    v = torch.eye(2, dtype=torch.float64)  # [T, 2]: the output row equals the weight row
    right = pipeline.attend(q, k, v).weights[0]  # [T_key]
    # The deliberate mistake: a 0 in place of the future score still takes weight (exp(0) = 1).
    wrong = torch.softmax(torch.tensor([score, 0.0], dtype=torch.float64), dim=-1)
    row = torch.tensor([score, future], dtype=torch.float64)
    return {"row": row, "neg_inf": right, "zero_fill": wrong}


@cache
def _cost() -> dict[str, torch.Tensor]:
    from attnlab.lesson.cost import (
        score_elements,  # measured on the meta device through the pipeline
    )

    check = example.COST_CHECK
    B, H, (short, long) = check.batch, check.heads, check.tokens
    small, large = score_elements(B, H, short), score_elements(B, H, long)
    doubled = score_elements(B, H, 2 * long)
    return {
        "elements_short": torch.tensor(small),
        "elements_long": torch.tensor(large),
        "growth_short_to_long": torch.tensor(large / small),
        "growth_when_doubled": torch.tensor(doubled / large),
    }


@cache
def _experiment() -> dict[str, torch.Tensor]:
    from attnlab.lesson.experiment import run_experiment

    r = run_experiment()
    return {
        "h": r.before.h,  # [B, d_head]
        "logits": r.before.logits,  # [B, V_vocab]
        "probs": r.before.probs,  # [B, V_vocab]
        "p_target": r.before.target_probs,  # [B]
        "losses": r.before.losses,  # [B]
        "mean_loss": r.before.loss_mean,
        "grad": torch.tensor(r.grad_autograd, dtype=torch.float64),
        "param_new": torch.tensor(r.q_new, dtype=torch.float64),
        "p_target_after": r.after.target_probs,  # [B]
        "mean_loss_after": r.after.loss_mean,
        "lr": torch.tensor(r.lr, dtype=torch.float64),
    }


SOURCES: dict[str, Callable[[], Mapping[str, torch.Tensor]]] = {
    "lesson": _lesson,
    "uniform": _uniform,
    "shapes": _shapes,
    "mask_demo": _mask_demo,
    "cost": _cost,
    "experiment": _experiment,
}


def _parse_index(text: str | None, key: str) -> tuple[int | slice, ...]:
    if text is None:
        return ()
    parts = [p.strip() for p in text.split(",")]
    index: list[int | slice] = []
    for part in parts:
        if part == ":":
            index.append(slice(None))
        elif re.fullmatch(r"-?\d+", part):
            index.append(int(part))
        else:
            raise UnknownAnswerKey(
                f"answer key {key!r}: index must be integers or ':', got {part!r}"
            )
    return tuple(index)


def parse_key(key: str) -> tuple[str, str, tuple[int | slice, ...]]:
    """Split ``key`` into (source, name, index); raise :class:`UnknownAnswerKey` if malformed."""
    match = _KEY.match(key.strip())
    if match is None:
        raise UnknownAnswerKey(f"answer key must look like 'source.name[i,j]', got {key!r}")
    source = match["source"] or "lesson"
    return source, match["name"], _parse_index(match["index"], key)


def resolve_tensor(key: str) -> torch.Tensor:
    """The computed tensor (or element) that ``key`` names."""
    source, name, index = parse_key(key)
    if source not in SOURCES:
        raise UnknownAnswerKey(f"answer key {key!r}: source must be one of {sorted(SOURCES)}")
    values = SOURCES[source]()
    if name not in values:
        raise UnknownAnswerKey(f"answer key {key!r}: {source} has no {name!r} ({sorted(values)})")
    tensor = values[name]
    try:
        return tensor[index] if index else tensor
    except IndexError as exc:
        shape = list(tensor.shape)
        raise UnknownAnswerKey(f"answer key {key!r}: index out of range for shape {shape}") from exc


def resolve(key: str) -> Value:
    """The computed value of ``key`` as a Python float or a (nested) list of floats."""
    tensor = resolve_tensor(key)
    return float(tensor.item()) if tensor.dim() == 0 else tensor.double().tolist()
