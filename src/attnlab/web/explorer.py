"""The explorer: the learner edits X, W_Q, W_K, W_V and every stage is recomputed.

Input is validated by :func:`attnlab.inputs.parse_input` (one-line :class:`InputError` messages
naming the field, e.g. ``x[0][1][2]: expected a number but found a string ('abc')``), then sizes
are capped so a page stays readable. The stages come from :func:`attnlab.pipeline.attention_stages`
through :meth:`attnlab.inputs.LabInput.stages`, which refuses finite numbers that overflow a stage
(:class:`attnlab.finite.NonFiniteStageError`, with a message in both languages).
"""

from __future__ import annotations

import re
from typing import Any

import torch

from attnlab import example
from attnlab.errors import InputError
from attnlab.inputs import parse_input
from attnlab.pipeline import STAGE_NAMES, AttentionStages
from attnlab.show.document import to_json
from attnlab.show.fmt import compact_shape
from attnlab.show.stageview import POSITION_STAGES, StageTable, StageView, stage_view

#: Largest sizes the explorer accepts (B is the two prompts of the lesson).
LIMITS: dict[str, int] = {"B": 2, "T": 8, "C": 8, "d": 8}
MATRICES: tuple[str, ...] = ("x", "w_q", "w_k", "w_v")
PRESETS: tuple[str, ...] = ("lesson", "uniform")
# The weights heatmap first: it is what the learner watches while typing.
SHOWN_STAGES = ("weights", *(s for s in STAGE_NAMES if s not in ("causal_mask", "weights")))
PRECISION = 3
_FIELD = re.compile(r"^(x|w_q|w_k|w_v)((?:\[\d+\])*)")


def preset(name: str) -> dict[str, Any]:
    """The numbers of preset ``name``: ``lesson`` or ``uniform`` (W_Q = 0: every visible
    position gets the same weight, section 1's mean)."""
    if name not in PRESETS:
        raise InputError(f"preset: expected one of {', '.join(PRESETS)} but found {name[:20]!r}")
    w_q = example.lesson_w_q()
    if name == "uniform":
        w_q = torch.zeros_like(w_q)
    tensors = (example.lesson_x(), w_q, example.lesson_w_k(), example.lesson_w_v())
    return {k: t.tolist() for k, t in zip(MATRICES, tensors, strict=True)}


def _resized(rows: list[Any], n: int, fill: Any) -> list[Any]:
    return [*rows[:n], *([fill() for _ in range(n - len(rows))])]


def resize(data: dict[str, Any], T: int, C: int, d: int) -> dict[str, Any]:
    """``data`` cut or zero-padded to T positions, width C and head width d."""
    check_sizes(T=T, C=C, d=d)
    x = [
        _resized([_resized(r, C, float) for r in prompt], T, lambda: [0.0] * C)
        for prompt in data["x"]
    ]
    ws = {
        k: _resized([_resized(r, d, float) for r in data[k]], C, lambda: [0.0] * d)
        for k in MATRICES[1:]
    }
    return {"x": x, **ws}


def check_sizes(**sizes: int) -> None:
    """Raise :class:`InputError` for a size above :data:`LIMITS` (or below 1)."""
    for axis, size in sizes.items():
        if not 1 <= size <= LIMITS[axis]:
            raise InputError(
                f"{axis}: expected 1 <= {axis} <= {LIMITS[axis]} in the explorer but found {size}"
            )


def compute(payload: object) -> AttentionStages:
    """Validate the explorer's numbers and run the pipeline on them.

    Raises:
        InputError: one line naming the field (``x[0][1][2]: ...``), the size over the cap or
            the stage that overflowed float64.
    """
    if not isinstance(payload, dict):
        raise InputError(f"input: expected an object with keys {', '.join(MATRICES)}")
    lab = parse_input({k: payload[k] for k in MATRICES if k in payload}, source="explorer")
    B, T, C = lab.x.shape
    check_sizes(B=B, T=T, C=C, d=lab.w_q.size(1))
    if lab.w_v.size(1) > LIMITS["d"]:
        raise InputError(f"w_v: expected at most {LIMITS['d']} columns but found {lab.w_v.size(1)}")
    stages = lab.stages()
    if not isinstance(stages, AttentionStages):  # parse_input got no num_heads: one head
        raise TypeError(f"expected one head's stages, got {type(stages).__name__}")
    return stages


def error_stage(exc: InputError) -> str:
    """The stage that overflowed (``"raw_scores"``), or ``""`` when the input itself is wrong."""
    return str(getattr(exc, "stage", ""))


def error_field(message: str) -> tuple[str, str]:
    """``("x", "x[0][1][2]")`` from an :class:`InputError` message: the matrix and the cell."""
    match = _FIELD.match(message)
    if not match:
        return "", ""
    return match[1], match[0]


def tokens_for(T: int, B: int, lang: str) -> list[list[str]]:
    """Position labels: the lesson's tokens when T matches, else ``p0, p1, ...``."""
    lesson = example.prompt_tokens(lang)
    if T == len(lesson[0]):
        return lesson[:B]
    return [[f"p{t}" for t in range(T)] for _ in range(B)]


def heat(value: float) -> str:
    """A background colour for a weight in [0, 1]: pale paper to deep teal."""
    v = min(max(value, 0.0), 1.0)
    low, high = (246, 248, 250), (14, 99, 120)
    r, g, b = (round(lo + (hi - lo) * v) for lo, hi in zip(low, high, strict=True))
    ink = "#fff" if v > 0.55 else "#13212b"
    return f"background:rgb({r},{g},{b});color:{ink}"


def stage_views(stages: AttentionStages, lang: str) -> list[StageView]:
    """Every stage of ``stages`` as labelled tables, the weights first."""
    B, T, _ = stages.x.shape
    tokens = tokens_for(T, B, lang)
    return [
        stage_view(name, getattr(stages, name), tokens, range(B), lang, PRECISION)
        for name in SHOWN_STAGES
    ]


def heat_cells(view: StageView, table: StageTable) -> list[list[tuple[str, str]]]:
    """The cells of ``table`` as (text, css background): each weight gets its heat colour; other
    stages, labels and the row-sum column stay plain."""
    cells = []
    for row, values in zip(table.rows, table.values, strict=True):
        styles = [heat(v) for v in values] if view.key == "weights" else []
        cells.append([(text, styles[j - 1] if 0 < j <= len(styles) else "")
                      for j, text in enumerate(row)])  # fmt: skip
    return cells


def views_context(stages: AttentionStages | None, lang: str) -> dict[str, Any]:
    """What ``_stages.html`` reads: the views (none without stages) and how it writes them."""
    views = stage_views(stages, lang) if stages is not None else []
    return {"views": views, "heat_cells": heat_cells, "compact_shape": compact_shape}


def result_json(stages: AttentionStages) -> dict[str, Any]:
    """The numbers of the result for the JSON API (−∞ as the string ``"-inf"``, 6 decimals)."""
    return {name: to_json(getattr(stages, name), decimals=6) for name in SHOWN_STAGES} | {
        "position_stages": sorted(POSITION_STAGES & set(SHOWN_STAGES))
    }
