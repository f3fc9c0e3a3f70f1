"""Stage tensors as labelled tables: rows are query positions (``t=1 喜欢``), columns are key
positions for score tables and feature indices otherwise. Used by the scripts and ``trace``."""

from __future__ import annotations

import torch

from attnlab.i18n import pick
from attnlab.show.fmt import num

#: Stages whose columns are key positions (a [T_query, T_key] table).
POSITION_STAGES = frozenset(
    {"raw_scores", "scaled_scores", "causal_mask", "masked_scores", "weights"}
)
MASKED_MARK = "*"


def position_label(t: int, tokens: list[str] | None, axis: str = "t") -> str:
    """``t=1 喜欢`` (or ``t=1`` without tokens)."""
    return f"{axis}={t} {tokens[t]}" if tokens else f"{axis}={t}"


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
            text = num(v, precision)
            if stage in ("weights", "masked_scores") and j > t:
                text += MASKED_MARK
            cells.append(text)
        if stage == "weights":
            cells.append(num(float(values[t].sum()), precision))
        rows.append([position_label(t, tokens), *cells])
    return headers, rows
