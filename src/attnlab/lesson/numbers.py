"""Every number the lesson shows, computed once and served by key: ``get("weights.A.final")``.

The scripts, ``attnlab trace``, the web page, the figures, the knowledge checks and ``attnlab
check`` all read their lesson numbers here; nothing else computes one. Each source below is
computed on first use through :mod:`attnlab.core.pipeline` and kept.

Addressing rule (one for every key)::

    [source.]name[.part ...][[i, j, ...]]

* ``source`` names a computation (listed below); without it the key means ``lesson``.
* ``name`` is one tensor of that source.
* Each ``.part`` picks the next leading axis by its lesson name: a prompt letter (``A``, ``B``)
  picks the batch row, ``final`` the last position (index −1).
* ``[i, j, ...]`` then picks the remaining axes by integer (negative counts from the end) or ``:``
  (the whole axis).

So ``weights.A.final`` is ``weights[0,-1]``, prompt A's final query row, and
``weights.B.final[0]`` is ``weights[1,1,0]``: how much B's final 喜欢 reads 猫.

Sources and their names (axis letters as in :mod:`attnlab.core.pipeline`):

* ``lesson`` (sections 4-11): the stages of :func:`attnlab.core.pipeline.lesson_stages` (``x``,
``q``,
  ``k``, ``v``, ``raw_scores``, ``scaled_scores``, ``causal_mask``, ``masked_scores``,
  ``weights``, ``output``), plus ``exp``, ``exp_sum``, ``weights_sum``, ``sqrt_d_k``, ``logits``
  ``causal_mask_t4``, ``unscaled_weights``, ``column_sums``, ``swapped_output`` and
  ``zero_fill_weights`` (:func:`attnlab.lesson.demos.head_values`).
* ``uniform`` (section 1): ``mean`` ``[B, T, C]``, its ``weights`` ``[B, T, T]`` and
  ``weights_t4`` (the ratios for T=4).
* ``mask_demo`` (section 11): ``row``, ``future``, ``zero_fill``, ``neg_inf_fill`` (the softmax
  with the future filled by 0 or by −∞), ``late_zero`` (softmax first, future zeroed after), each
  ``[T_key]``.
* ``shift`` (section 8): prompt A's final scaled row plus each constant: ``constants`` ``[n]``,
  ``rows`` and ``weights`` ``[n, T_key]``, ``base`` (the unshifted weights), ``max_diff`` ``[n]``.
* ``shapes`` (section 9's extra check, ``B=1, T=3, C=4, n_head=2``): each stage's shape as a list
  of integers (``x``, ``q``, ``k``, ``v``, ``raw_scores``, ``weights``, ``head_outputs``,
  ``concat``, ``output``, ``k_t`` the transposed keys, ``head_outputs_h4`` the head outputs when
  C is split into 4 heads); ``shapes.raw_scores`` is ``[1, 2, 3, 3]``.
* ``experiment`` (section 16): ``h``, ``logits``, ``probs``, ``probs_sum``, ``p_target``,
  ``losses``, ``mean_loss``, ``grad``, ``lr``, ``param_new``, ``p_target_after``,
  ``mean_loss_after``, ``losses_after``, ``score_slopes``, ``score_intercepts``; ``grad_fd`` and
  ``grad_closed``
  (the same gradient by a central difference and in closed form); for section 7's content path
  the gradient of W_V[0, 0] three ways, ``grad_wv``, ``grad_wv_fd``, ``grad_wv_closed``, and its
  factors ``wv_reads`` ``[B]`` and ``dloss_dh`` ``[B, d_head]``.
* ``cost`` (section 17): ``elements_short``, ``elements_long``, ``growth_short_to_long``,
  ``growth_when_doubled``, ``elements_doubled`` (T doubled from the long row),
  ``elements_one_head_long`` (one prompt, one head).

Tables read whole come as objects: :func:`stages`, :func:`experiment`, :func:`shape_rows`,
:func:`cost_rows`, :func:`final_rows`.

Example::

    >>> round(get("weights[1,1,0]"), 4), round(get("weights.B.final[0]"), 4)
    (0.4256, 0.4256)
    >>> [round(v, 3) for v in get("mask_demo.zero_fill")]
    [0.55, 0.45]
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from functools import cache

import torch

from attnlab.core import example, pipeline
from attnlab.lesson import demos, shapes
from attnlab.lesson.cost import CostRow, cost_table
from attnlab.lesson.experiment import ExperimentResult, run_experiment
from attnlab.lesson.value_grad import ValueGradient
from attnlab.lesson.value_grad import value_gradient as _value_gradient

Value = float | list
_KEY = re.compile(r"^(?P<path>\w+(?:\.\w+)*)(?:\[(?P<index>[^\]]*)\])?$")
_SHAPE_NAMES = ("x", "q", "k", "v", "raw_scores", "weights", "head_outputs", "concat", "output")


class UnknownNumberKey(KeyError):
    """A key names a source, quantity, part or index that does not exist."""


@cache
def stages() -> pipeline.AttentionStages:
    """The lesson's single head on prompts A and B (sections 4-11)."""
    return pipeline.lesson_stages()


@cache
def experiment() -> ExperimentResult:
    """Section 16's experiment: the loss, its gradient and one update."""
    return run_experiment()


@cache
def value_gradient() -> ValueGradient:
    """Section 7's content path: d(mean loss)/dW_V[0, 0] three ways."""
    return _value_gradient()


@cache
def _shape_check() -> pipeline.MultiHeadStages:
    return shapes.run_shape_check(**example.SHAPE_CHECK)


def shape_rows() -> tuple[shapes.ShapeRow, ...]:
    """Section 9's extra shape check as a table: stage, measured shape, axis names."""
    return tuple(shapes.shape_rows(_shape_check()))


@cache
def cost_rows() -> tuple[CostRow, ...]:
    """Section 17's score-element table for the lesson's B, n_head and sequence lengths."""
    check = example.COST_CHECK
    return tuple(cost_table(check.tokens, check.batch, check.heads))


def final_rows() -> dict[str, torch.Tensor]:
    """Section 5's final query rows, ``[B, T_key]`` each: the scaled scores (nothing is masked
    there), their exponentials, the exponentials' ``sums`` ``[B]`` and the weights."""
    return {
        "scaled": tensor("masked_scores[:,-1]"),
        "exps": tensor("exp[:,-1]"),
        "sums": tensor("exp_sum[:,-1]"),
        "weights": tensor("weights[:,-1]"),
    }


@cache
def _lesson() -> demos.Values:
    return demos.head_values(stages())


@cache
def _uniform() -> demos.Values:
    return demos.uniform_mean(stages().x)


@cache
def _mask_demo() -> demos.Values:
    return demos.mask_fill()


@cache
def _shift() -> demos.Values:
    return demos.softmax_shift(stages().scaled_scores[0, -1])


@cache
def _shapes() -> demos.Values:
    check = _shape_check()
    four = shapes.run_shape_check(**{**example.SHAPE_CHECK, "heads": 4})
    return {
        **{n: torch.tensor(list(getattr(check, n).shape)) for n in _SHAPE_NAMES},
        "k_t": torch.tensor(list(check.k.transpose(-2, -1).shape)),  # each head's Kᵀ
        "head_outputs_h4": torch.tensor(list(four.head_outputs.shape)),  # C split into 4 heads
    }


@cache
def _cost() -> demos.Values:
    check = example.COST_CHECK
    short, long = cost_rows()
    doubled = cost_table((long.tokens, 2 * long.tokens), check.batch, check.heads)[1]
    return {
        "elements_short": torch.tensor(short.elements),
        "elements_long": torch.tensor(long.elements),
        "growth_short_to_long": torch.tensor(long.ratio),
        "growth_when_doubled": torch.tensor(doubled.ratio),
        "elements_doubled": torch.tensor(doubled.elements),
        "elements_one_head_long": torch.tensor(cost_table((long.tokens,), 1, 1)[0].elements),
    }


@cache
def _experiment() -> demos.Values:
    r = experiment()
    f64 = torch.float64
    return {
        "h": r.before.h,  # [B, d_head]
        "logits": r.before.logits,  # [B, V_vocab]
        "probs": r.before.probs,  # [B, V_vocab]
        "p_target": r.before.target_probs,  # [B]
        "losses": r.before.losses,  # [B]
        "mean_loss": r.before.loss_mean,
        "grad": torch.tensor(r.grad_autograd, dtype=f64),
        "grad_fd": torch.tensor(r.grad_finite_difference, dtype=f64),
        "grad_closed": torch.tensor(r.grad_closed_form, dtype=f64),
        "param_new": torch.tensor(r.q_new, dtype=f64),
        "p_target_after": r.after.target_probs,  # [B]
        "mean_loss_after": r.after.loss_mean,
        "losses_after": r.after.losses,  # [B]
        "lr": torch.tensor(r.lr, dtype=f64),
        **demos.score_lines(r),
        **_value_values(value_gradient()),
    }


def _value_values(g: ValueGradient) -> demos.Values:
    f64 = torch.float64
    return {
        "grad_wv": torch.tensor(g.autograd, dtype=f64),
        "grad_wv_fd": torch.tensor(g.finite_difference, dtype=f64),
        "grad_wv_closed": torch.tensor(g.closed_form, dtype=f64),
        "wv_reads": g.reads,  # [B]
        "dloss_dh": g.dloss_dh,  # [B, d_head]
    }


SOURCES: dict[str, Callable[[], Mapping[str, torch.Tensor]]] = {
    "lesson": _lesson,
    "uniform": _uniform,
    "shapes": _shapes,
    "mask_demo": _mask_demo,
    "shift": _shift,
    "cost": _cost,
    "experiment": _experiment,
}


def _part(part: str, key: str) -> int:
    """``A``/``B`` → the batch row, ``final`` → the last position."""
    if part == "final":
        return -1
    prompts = [p.name for p in example.PROMPTS]
    if part in prompts:
        return prompts.index(part)
    raise UnknownNumberKey(
        f"key {key!r}: a part must be a prompt ({', '.join(prompts)}) or 'final', got {part!r}"
    )


def _bracket(text: str | None, key: str) -> list[int | slice]:
    index: list[int | slice] = []
    for part in [] if text is None else [p.strip() for p in text.split(",")]:
        if part == ":":
            index.append(slice(None))
        elif re.fullmatch(r"-?\d+", part):
            index.append(int(part))
        else:
            raise UnknownNumberKey(f"key {key!r}: index must be integers or ':', got {part!r}")
    return index


def parse_key(key: str) -> tuple[str, str, tuple[int | slice, ...]]:
    """Split ``key`` into (source, name, index), named parts turned into integers:
    ``"weights.A.final[0]"`` → ``("lesson", "weights", (0, -1, 0))``."""
    match = _KEY.match(key.strip())
    if match is None:
        raise UnknownNumberKey(f"key must look like 'source.name.A.final[i,j]', got {key!r}")
    path = match["path"].split(".")
    source = path.pop(0) if len(path) > 1 and path[0] in SOURCES else "lesson"
    name, parts = path[0], path[1:]
    names = SOURCES[source]()
    if name not in names:
        raise UnknownNumberKey(
            f"key {key!r}: {source} has no {name!r} (sources: {', '.join(SOURCES)}; "
            f"{source}: {', '.join(sorted(names))})"
        )
    index = [_part(p, key) for p in parts] + _bracket(match["index"], key)
    return source, name, tuple(index)


def tensor(key: str) -> torch.Tensor:
    """The computed tensor (or element) that ``key`` names."""
    source, name, index = parse_key(key)
    t = SOURCES[source]()[name]
    try:
        return t[index] if index else t
    except IndexError as exc:
        raise UnknownNumberKey(
            f"key {key!r}: index out of range for shape {list(t.shape)}"
        ) from exc


def get(key: str) -> Value:
    """The computed value of ``key`` as a Python float or a (nested) list of floats."""
    t = tensor(key)
    return float(t.item()) if t.dim() == 0 else t.double().tolist()
