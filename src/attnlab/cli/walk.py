"""The two walks the lesson names, shared by the scripts and ``attnlab lesson`` / ``attnlab grad``.

* :func:`render_lesson`: ``week07_attention.py``, the computed sections 1-17 in the page's
  order (:data:`WALK_SECTIONS`).
* :func:`lesson_document`: the same numbers as one JSON document (``--json``).

``course_examples/week07_attention.py`` (section 16's gradient) is :mod:`attnlab.cli.walk_grad`.

Every number comes from :mod:`attnlab.lesson.numbers`; this module only arranges and words them.
Only torch and the standard library are imported, so the script starts about as fast as torch.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from attnlab.content import document
from attnlab.content.explain import explain, title
from attnlab.content.plain import heading, render_section, wrap
from attnlab.content.stageview import masked_note, stage_rows
from attnlab.content.trace import prompt_word
from attnlab.content.walk_text import TEXT
from attnlab.core import example
from attnlab.core.pipeline import AttentionStages
from attnlab.lesson import numbers
from attnlab.text.fmt import num, shape_text, text_table, vec

DEFAULT_PRECISION = 4


def lesson_document(lang: str = "zh") -> dict[str, Any]:
    """Every number of the lesson walk and of section 16, as one JSON-ready document."""
    stages = numbers.stages()
    tokens = example.prompt_tokens(lang)
    names = example.prompt_names(stages.x.size(0))
    return {
        "lesson": "week07-attention",
        "lang": lang,
        "vocab": list(example.vocab(lang)),
        **document.input_fields(stages.x, *_weights(), tokens),
        "axes": document.axes_document(),
        "stages": document.stages_document(stages),
        "baseline_uniform_mean": dict(
            zip(names, document.to_json(numbers.tensor("uniform.mean")), strict=False)
        ),
        "final_rows": {
            k: dict(zip(names, document.to_json(v), strict=False))
            for k, v in numbers.final_rows().items()
        },
        "mask_demo": {
            "row": [example.MASK_DEMO_ROW[0], "future"],
            # The document's keys predate the one name (zero_fill, neg_inf_fill): kept as they were.
            "fill_zero": numbers.get("mask_demo.zero_fill"),
            "fill_neg_inf": numbers.get("mask_demo.neg_inf_fill"),
        },
        "shape_check": {
            "config": dict(example.SHAPE_CHECK),
            "shapes": {r.stage: list(r.shape) for r in numbers.shape_rows()},
        },
        "cost": [vars(r) for r in numbers.cost_rows()],
        "experiment": {
            **document.experiment_document(numbers.experiment()),
            "content_path": document.value_gradient_document(numbers.value_gradient()),
        },
    }


def _weights() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return example.lesson_w_q(), example.lesson_w_k(), example.lesson_w_v()


def _stage_block(stages: AttentionStages, stage: str, lang: str, p: int) -> list[str]:
    tokens = example.prompt_tokens(lang)
    lines = [
        f"{title(stage, lang)}  {shape_text(getattr(stages, stage).shape)}",
        *wrap(explain(stage, lang)),
    ]
    for b, name in enumerate(example.prompt_names(stages.x.size(0))):
        headers, rows = stage_rows(stage, getattr(stages, stage)[b], tokens[b], p, lang)
        lines += ["", f"{prompt_word(lang)} {name}", text_table(headers, rows)]
    if stage in ("masked_scores", "weights"):
        lines += ["", masked_note(lang)]
    return [*lines, ""]


def render_lesson(lang: str = "zh", precision: int = DEFAULT_PRECISION) -> str:
    """The text of ``week07_attention.py``: each walked section as the page shows it, followed
    by its stage tables, in the page's order."""
    t, st = TEXT[lang], numbers.stages()
    tokens = example.prompt_tokens(lang)
    last = tokens[0][-1]
    out = [t["title"], t["question"].format(last=last)]
    out.append(t["prompts"].format(a=tokens[0], b=tokens[1], shape=shape_text(st.x.shape)))
    out.append(t["order"].format(order=" ".join(f"§{n}" for n in WALK_SECTIONS)))
    for n, tables in _PARTS:
        out += ["", render_section(n, lang)]
        if tables is not None:
            body = "\n".join(tables(st, lang, precision)).rstrip()
            out += ["", heading(t["stages"].format(p=precision)), "", body]
    out += ["", "== " + t["conclusion"].format(last=last)]
    for name, row in zip(example.prompt_names(2), st.weights[:, -1], strict=True):
        out.append(f"  {prompt_word(lang)} {name}: {vec(row.tolist(), precision)}")
    return "\n".join([*out, t["conclusion_end"]])


def _projections(st: AttentionStages, lang: str, p: int) -> list[str]:
    stages = ("q", "k", "v", "raw_scores")  # X is section 1's matrix, exact as shown there
    return [line for stage in stages for line in _stage_block(st, stage, lang, p)]


def _scaled(st: AttentionStages, lang: str, p: int) -> list[str]:
    return [*_stage_block(st, "scaled_scores", lang, p), *_two_softmaxes(st, lang, p)]


def _weighted_values(st: AttentionStages, lang: str, p: int) -> list[str]:
    return _stage_block(st, "weights", lang, p) + _stage_block(st, "output", lang, p)


def _masked(st: AttentionStages, lang: str, p: int) -> list[str]:
    return _stage_block(st, "masked_scores", lang, p)


def _two_softmaxes(st: AttentionStages, lang: str, p: int) -> list[str]:
    """The attention softmax's row sums beside the vocabulary softmax of section 16's scores."""
    t, words = TEXT[lang], example.vocab(lang)
    probs, sums = numbers.tensor("experiment.probs"), numbers.tensor("experiment.probs_sum")
    row_sums = numbers.tensor("weights_sum[:,-1]")  # [B]
    out = [t["two_softmax"], t["attn_softmax"].format(n=st.weights.size(-1))]
    for b, name in enumerate(example.prompt_names(2)):
        w = vec(st.weights[b, -1].tolist(), p)
        out.append(f"  {name}: {w}  Σ = {num(float(row_sums[b]), p)}")
    out.append(t["vocab_softmax"].format(n=len(words)))
    rows = [
        [name, *(num(v, p) for v in probs[b].tolist()), num(float(sums[b]), p)]
        for b, name in enumerate(example.prompt_names(2))
    ]
    return [*out, text_table(["", *words, "Σ"], rows)]


StageTables = Callable[[AttentionStages, str, int], list[str]]

#: The walked sections in the lesson page's order, each with the stage tables the script prints
#: after the section's blocks: each stage of both prompts at ``--precision``, where the blocks
#: show three decimals (exact matrices, X and the masks, are shown by the blocks alone). Sections
#: the walk leaves out are prose (2, 3, 7, 14, 15, 18, 19), code (12, 13) or section 16's
#: gradient, which ``course_examples/week07_attention.py`` prints.
_PARTS: tuple[tuple[int, StageTables | None], ...] = (
    (1, None),
    (4, _projections),
    (5, _scaled),
    (6, _weighted_values),
    (8, None),
    (9, None),
    (10, None),
    (11, _masked),
    (17, None),
)
#: The sections the walk prints, in order (its header line lists them).
WALK_SECTIONS: tuple[int, ...] = tuple(n for n, _ in _PARTS)
