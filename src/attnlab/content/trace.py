"""What ``attnlab trace`` shows: the stages of an input as labelled tables, in order.

Builds :class:`StageView` objects from the pipeline's result (one head or several) and renders
them as Markdown or as a JSON document; the rich terminal rendering lives in the command.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from attnlab.content import document
from attnlab.content.stageview import StageView, stage_view
from attnlab.core.example import prompt_rows
from attnlab.core.pipeline import STAGE_NAMES, AttentionStages, MultiHeadStages
from attnlab.inputs.model import LabInput
from attnlab.text.errors import InputError
from attnlab.text.fmt import markdown_table, shape_text
from attnlab.text.i18n import pick

MULTI_HEAD_EXTRA = ("concat", "projected")


def stage_choices(inp: LabInput) -> tuple[str, ...]:
    """Stage names valid for ``--stage`` with this input."""
    return STAGE_NAMES + (MULTI_HEAD_EXTRA if inp.num_heads else ())


def w_o_note(inp: LabInput, lang: str) -> str | None:
    """One line saying W_O is the identity when the input has heads but no ``w_o``, else None
    (the pipeline's default, :func:`attnlab.core.pipeline.multi_head_stages`)."""
    if inp.num_heads is None or inp.w_o is not None:
        return None
    return pick(
        lang,
        "输入里没有 w_o，W_O 默认取单位矩阵 I [C, C]：输出就是各头输出的拼接。",
        "The input has no w_o, so W_O defaults to the identity I [C, C]: the output is the "
        "concatenated heads.",
    )


def check_stage(inp: LabInput, stage: str | None) -> None:
    """Raise unless ``stage`` is None or a stage this input has."""
    if stage is not None and stage not in stage_choices(inp):
        raise InputError(
            f"--stage: expected one of {', '.join(stage_choices(inp))}, found {stage!r}"
        )


def build_views(
    inp: LabInput,
    lang: str,
    prompt: str = "all",
    stage: str | None = None,
    precision: int = 4,
    computed: AttentionStages | MultiHeadStages | None = None,
) -> list[StageView]:
    """The stages of ``inp`` in order (each head's, then concat and W_O for several heads);
    ``computed`` passes stages already computed for ``inp`` (the lesson's, from
    :mod:`attnlab.lesson.numbers`) instead of running the pipeline again."""
    rows = prompt_rows(prompt, inp.x.size(0))
    check_stage(inp, stage)
    result = inp.stages() if computed is None else computed
    views: list[StageView] = []
    if isinstance(result, AttentionStages):
        for key, tensor in result.items():
            views.append(stage_view(key, tensor, inp.tokens, rows, lang, precision))
    else:
        views += _multi_head_views(result, inp, rows, lang, precision)
        note = w_o_note(inp, lang)
        if note is not None:  # said under the stage W_O makes
            views[-1] = dataclasses.replace(views[-1], note=note)
    return [v for v in views if stage is None or v.key == stage]


def _multi_head_views(
    result: MultiHeadStages, inp: LabInput, rows: list[int], lang: str, precision: int
) -> list[StageView]:
    views = [stage_view("x", result.x, inp.tokens, rows, lang, precision)]
    for h in range(result.q.size(1)):
        for key, tensor in result.head(h).items():
            if key != "x":
                views.append(stage_view(key, tensor, inp.tokens, rows, lang, precision, h))
    views.append(stage_view("concat", result.concat, inp.tokens, rows, lang, precision))
    views.append(stage_view("projected", result.output, inp.tokens, rows, lang, precision))
    return views


def render_markdown(views: list[StageView], lang: str) -> str:
    """The views as Markdown in ``lang``, ready to paste into notes."""
    parts = []
    for v in views:
        parts.append(f"### {v.title} `{shape_text(v.shape)}`\n\n{v.explanation}\n")
        for t in v.tables:
            label = "" if v.key == "causal_mask" else f"**{prompt_word(lang)} {t.prompt}**\n\n"
            parts.append(f"{label}{markdown_table(t.headers, t.rows)}\n")
        if v.note:
            parts.append(f"_{v.note}_\n")
    return "\n".join(parts)


def input_document(inp: LabInput, prompt: str = "all", stage: str | None = None) -> dict[str, Any]:
    """A JSON document for any input: its fields (reusable as ``--input``) and every stage."""
    rows = prompt_rows(prompt, inp.x.size(0))
    check_stage(inp, stage)
    result = inp.stages()
    doc: dict[str, Any] = {
        "source": inp.source,
        **document.input_fields(inp.x, inp.w_q, inp.w_k, inp.w_v, inp.tokens),
    }
    if inp.num_heads is not None:
        doc["num_heads"] = inp.num_heads
        if inp.w_o is not None:
            doc["w_o"] = document.to_json(inp.w_o)
        else:
            doc["w_o_default"] = "identity"  # see w_o_note
        stages = document.multi_head_document(result)  # type: ignore[arg-type]
    else:
        doc["axes"] = document.axes_document()
        stages = document.stages_document(result)  # type: ignore[arg-type]
    doc["stages"] = filter_stages(stages, rows, stage)
    return doc


def filter_stages(stages: dict[str, Any], rows: list[int], stage: str | None) -> dict[str, Any]:
    """Keep only the chosen prompts and, if given, one stage."""
    names = list(stages)
    kept = {names[b]: stages[names[b]] for b in rows}
    if stage is None:
        return kept
    out: dict[str, Any] = {}
    for name, per in kept.items():
        if "heads" in per and stage not in per:
            out[name] = {"heads": [{stage: h[stage]} for h in per["heads"]]}
        else:
            out[name] = {stage: per[stage]}
    return out


def prompt_word(lang: str) -> str:
    """What a prompt is called above its table: 提示 / Prompt."""
    return pick(lang, "提示", "Prompt")
