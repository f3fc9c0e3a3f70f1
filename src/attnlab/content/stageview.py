"""Stage tensors as labelled tables: rows are query positions (``t=1 喜欢``), columns are key
positions for score tables and feature indices otherwise.

:class:`StageView` is one stage ready to show: ``trace`` (text, Markdown, rich) and the web
explorer render the same views; the scripts print the same rows (:func:`stage_rows`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from attnlab.content.explain import explain, title
from attnlab.core.example import prompt_names
from attnlab.text.fmt import escape_label, num
from attnlab.text.i18n import pick

#: Stages whose columns are key positions (a [T_query, T_key] table).
POSITION_STAGES = frozenset(
    {"raw_scores", "scaled_scores", "causal_mask", "masked_scores", "weights"}
)
MASKED_MARK = "*"


def position_label(t: int, tokens: list[str] | None, axis: str = "t") -> str:
    """``t=1 喜欢`` (or ``t=1`` without tokens); control characters in the token are escaped."""
    return f"{axis}={t} {escape_label(tokens[t])}" if tokens else f"{axis}={t}"


def masked_note(lang: str) -> str:
    """The footnote explaining the masked mark."""
    return pick(
        lang,
        f"{MASKED_MARK} 未来位置 (j > t)，已被因果掩码屏蔽",
        f"{MASKED_MARK} future position (j > t), masked by the causal mask",
    )


def stage_rows(
    stage: str, values: torch.Tensor, tokens: list[str] | None, precision: int, lang: str
) -> tuple[list[str], list[list[str]]]:
    """Headers and rows of one prompt's ``[T, ...]`` stage table.

    Masked scores print as −∞; masked weights print as 0 with the masked mark; a weights table
    gets a row-sum column.
    """
    T = values.size(0)
    corner = pick(lang, "Query 位置 \\ Key 位置", "query \\ key")
    if stage in POSITION_STAGES:
        headers = [corner] + [position_label(j, tokens, "j") for j in range(T)]
    else:
        feature = "c" if stage in ("x", "concat", "projected") else "d"
        headers = [pick(lang, "位置", "position")]
        headers += [f"{feature}={i}" for i in range(values.size(1))]
    if stage == "weights":
        headers.append(pick(lang, "行和", "row sum"))
    rows = []
    for t in range(T):
        cells = []
        for j, v in enumerate(values[t].tolist()):
            # The mask is a yes/no table: 1 = may read, 0 = future (never 1.0000 / 0.0000).
            text = str(int(v)) if stage == "causal_mask" else num(v, precision)
            if stage in ("weights", "masked_scores") and j > t:
                text += MASKED_MARK
            cells.append(text)
        if stage == "weights":
            cells.append(num(float(values[t].sum()), precision))
        rows.append([position_label(t, tokens), *cells])
    return headers, rows


@dataclass(frozen=True)
class StageTable:
    """One prompt's table of one stage."""

    prompt: str  # the prompt's name, e.g. "A"
    headers: list[str]
    rows: list[list[str]]  # a position label, then the numbers as text
    values: list[list[float]]  # the numbers of ``rows``, [T, ...]


@dataclass(frozen=True)
class StageView:
    """One stage ready to show: title, explanation, shape and one table per prompt."""

    key: str  # stage name, e.g. "weights"
    head: int | None  # head index for multi-head inputs (shown numbered from 1)
    title: str
    explanation: str
    shape: tuple[int, ...]
    tables: list[StageTable]
    note: str | None  # footnote: the masked mark, or W_O's identity default


def stage_view(
    key: str, tensor: torch.Tensor, tokens: list[list[str]], rows: Sequence[int], lang: str,
    precision: int, head: int | None = None,
) -> StageView:  # fmt: skip
    """Stage ``key`` of the batch rows ``rows`` (one table for the shared causal mask).

    Args:
        key: the stage's name; ``tensor`` its values, ``[B, ...]`` (``[T, T]`` for the mask).
        tokens: position labels per prompt, ``[B][T]``.
        rows: the batch rows to show, e.g. ``[0, 1]``.
        precision: decimals of each number (:func:`attnlab.text.fmt.num`).
        head: the head index when the stage belongs to one head of several.
    """
    names = prompt_names(len(tokens))
    tables = []
    for b in rows:
        values = (tensor if key == "causal_mask" else tensor[b]).to(torch.float64)
        headers, body = stage_rows(key, values, tokens[b], precision, lang)
        tables.append(StageTable(names[b], headers, body, values.tolist()))
        if key == "causal_mask":
            break
    heading = title(key, lang) if head is None else f"Head {head + 1} · {title(key, lang)}"
    note = masked_note(lang) if key in ("masked_scores", "weights") else None
    return StageView(key, head, heading, explain(key, lang), tuple(tensor.shape), tables, note)
