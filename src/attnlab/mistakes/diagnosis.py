"""Which catalogue mistakes produce a set of numbers: every mistake's stages on an input, next
to the right ones, and the match with what a learner computed.

:func:`mistake_stages` shows every wrong stage of a :class:`~attnlab.mistakes.catalogue.Mistake`;
:func:`diagnose` names the bugs behind a wrong set of numbers. Axis letters as in
:mod:`attnlab.core.pipeline`.

Example::

    >>> [m.name for m in diagnose("weights", [0.638, 0.362], prompt="A", row=1)]
    ['no_scale']
"""

from __future__ import annotations

import torch

from attnlab.core import example, steps
from attnlab.core.pipeline import attention_stages, multi_head_stages
from attnlab.core.steps import MistakeInput, lesson_input
from attnlab.lesson import numbers
from attnlab.mistakes.catalogue import CATALOGUE, CHECK_STAGES, Mistake, get


def multihead_example(dtype: torch.dtype = torch.float64) -> MistakeInput:
    """Two heads on the lesson's X: head 0 is the lesson's head, head 1 reuses its matrices
    in a cycle (W_K, W_V, W_Q), and a fixed, non-symmetric ``W_O`` [4, 4] mixes them."""
    w_q, w_k, w_v = example.lesson_w_q(dtype), example.lesson_w_k(dtype), example.lesson_w_v(dtype)
    w_o = torch.eye(4, dtype=dtype) + 0.5 * torch.roll(torch.eye(4, dtype=dtype), 1, dims=1)
    return MistakeInput(
        x=example.lesson_x(dtype),
        w_q=torch.cat([w_q, w_k], dim=1),  # [C, C]: head 0 columns 0:2, head 1 columns 2:4
        w_k=torch.cat([w_k, w_v], dim=1),
        w_v=torch.cat([w_v, w_q], dim=1),
        num_heads=2,
        w_o=w_o,
        token_ids=example.lesson_token_ids(),
    )


def correct_stages(inp: MistakeInput) -> dict[str, torch.Tensor]:
    """The right stages of ``inp``: the lesson's numbers (:mod:`attnlab.lesson.numbers`) for
    :func:`attnlab.core.steps.lesson_input`, else from :mod:`attnlab.core.pipeline` (plus
    ``logits`` when ``inp.w_vocab`` fits the output width)."""
    if inp is lesson_input():
        return {name: numbers.tensor(name) for name in CHECK_STAGES}
    if inp.is_single_head:
        s = attention_stages(inp.x, inp.w_q, inp.w_k, inp.w_v)
        stages = {name: t for name, t in s.items() if name != "causal_mask"}
    else:
        m = multi_head_stages(inp.x, inp.w_q, inp.w_k, inp.w_v, inp.num_heads, inp.w_o)
        names = ("x", "q", "k", "v", "raw_scores", "scaled_scores", "masked_scores", "weights",
                 "concat", "output")  # fmt: skip
        stages = {name: getattr(m, name) for name in names}
    logits = steps.lm_head(stages["output"], inp.w_vocab)
    if logits is not None:
        stages["logits"] = logits  # [B, T, V_vocab]
    return stages


def mistake_stages(
    mistake: Mistake | str, inp: MistakeInput | None = None
) -> dict[str, torch.Tensor]:
    """Every stage of ``mistake`` on ``inp`` (the lesson example when omitted).

    Returns the same keys as :func:`correct_stages`; a stage's shape may differ from the right
    one (``batch_mixed`` scores are ``[1, B*T, B*T]``). Raises ``ValueError`` for a mistake
    ``inp`` lacks the parts of (:meth:`Mistake.applies_to`): a multi-head mistake on a single
    head, token IDs fed as X on an input without token IDs.
    """
    m = get(mistake) if isinstance(mistake, str) else mistake
    inp = lesson_input() if inp is None else inp
    if m.multihead_only and inp.num_heads < 2:
        raise ValueError(f"mistake {m.name!r} needs num_heads >= 2, got {inp.num_heads}")
    if not m.applies_to(inp):
        raise ValueError(f"mistake {m.name!r} needs the input's token IDs, got none")
    return steps.run(m.recipe, inp)


def values_match(got: torch.Tensor, want: torch.Tensor, tol: float | list[float]) -> bool:
    """True when the flattened tensors have equal length and agree within ``tol``, one for all
    numbers or one per number (−∞ matches −∞, NaN matches NaN)."""
    got, want = got.flatten().double(), want.flatten().double()
    if got.numel() != want.numel():
        return False
    atol = torch.as_tensor(tol, dtype=torch.float64)
    close = ((got - want).abs() <= atol) | (got == want) | (got.isnan() & want.isnan())
    return bool(close.all())


def value_at(
    t: torch.Tensor, prompt: int, head: int, row: int | None, column: int | None = None
) -> torch.Tensor | None:
    """The part of stage table ``t`` at one prompt, head (from 1), row and column, or None
    when ``t`` has no such place."""
    if t.dim() == 0 or prompt >= t.size(0):
        return None
    part: torch.Tensor | None = t[prompt]
    if part is not None and part.dim() == 3:  # [n_head, T, ...], heads numbered from 1
        part = part[head - 1] if 1 <= head <= part.size(0) else None
    for i in (row, column):
        if part is not None and i is not None:
            part = part[i] if part.dim() >= 1 and i < part.size(0) else None
    return part


_TABLES: list[
    tuple[MistakeInput, tuple[dict[str, torch.Tensor], dict[str, dict[str, torch.Tensor]]]]
] = []


def _tables(
    inp: MistakeInput,
) -> tuple[dict[str, torch.Tensor], dict[str, dict[str, torch.Tensor]]]:
    """The right stages and every applicable mistake's stages of ``inp``, computed once per
    input object (a knowledge check asks about the same example many times)."""
    for seen, tables in _TABLES:
        if seen is inp:
            return tables
    wrong = {m.name: mistake_stages(m, inp) for m in CATALOGUE if m.applies_to(inp)}
    tables = (correct_stages(inp), wrong)
    _TABLES[:] = [*_TABLES[-7:], (inp, tables)]
    return tables


def diagnose(
    stage: str,
    values: list[float],
    *,
    prompt: int | str = 0,
    row: int | None = None,
    head: int = 1,
    column: int | None = None,
    tol: float | list[float] = 0.0005 + 1e-6,
    inp: MistakeInput | None = None,
) -> list[Mistake]:
    """The catalogue mistakes that reproduce ``values`` for one stage.

    Args:
        stage: a stage name from :data:`CHECK_STAGES` (``"weights"``, ``"output"``...).
        values: the learner's numbers, flattened (a row, or the whole ``[T, ...]`` table when
            ``row`` is None).
        prompt: ``"A"``, ``"B"`` or a batch index (:func:`attnlab.core.example.prompt_index`).
        row: the query row / token position, or None for the whole table.
        head: the head, numbered from 1 as everywhere, when ``inp`` has several.
        column: one number of the row (``weights[1,1,0]``), or None for the whole row.
        tol: absolute tolerance, one for all numbers or one per number (default: answers
            rounded to three decimals).
        inp: the input (default :func:`attnlab.core.steps.lesson_input`).

    Returns:
        Matching mistakes in catalogue order; empty when the values are right (a mistake whose
        numbers equal the right ones here explains nothing) or when none matches.

    Example::

        >>> [m.name for m in diagnose("weights", [0.55, 0.45], prompt="A", row=0)]
        ['no_mask', 'mask_inverted']
        >>> diagnose("weights", [1.0, 0.0], prompt="A", row=0)  # right: nothing to explain
        []
    """
    inp = lesson_input() if inp is None else inp
    b = example.prompt_index(prompt, inp.x.size(0))
    want = torch.tensor([float(v) for v in values], dtype=torch.float64)
    right = value_at(_tables(inp)[0].get(stage, torch.empty(0)), b, head, row, column)
    if right is not None and values_match(want, right, tol):
        return []
    found = mistake_values(stage, b, head, row, column, inp)
    return [get(name) for name, got in found.items() if values_match(want, got, tol)]


def mistake_values(
    stage: str, prompt: int, head: int, row: int | None, column: int | None, inp: MistakeInput
) -> dict[str, torch.Tensor]:
    """Every applicable catalogue mistake's numbers at one place of ``stage`` (prompt index,
    head from 1), in catalogue order, leaving out mistakes whose numbers there are right."""
    right_stages, wrong_stages = _tables(inp)
    full = right_stages.get(stage, torch.empty(0))
    right = value_at(full, prompt, head, row, column)
    found: dict[str, torch.Tensor] = {}
    for m in CATALOGUE:
        if m.name not in wrong_stages:
            continue
        table = wrong_stages[m.name].get(stage, torch.empty(0))
        if column is not None and table.shape != full.shape:
            continue  # one number of a differently shaped table sits elsewhere (batch_mixed)
        got = value_at(table, prompt, head, row, column)
        if got is None or (right is not None and values_match(got, right, 1e-9)):
            continue
        found[m.name] = got
    return found
