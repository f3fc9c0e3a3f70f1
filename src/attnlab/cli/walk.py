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
from attnlab.content.stageview import masked_note, stage_rows
from attnlab.content.walk_text import AXIS_MEANINGS, SHAPE_STAGE_NAMES, TEXT
from attnlab.core import example
from attnlab.core.pipeline import AttentionStages
from attnlab.lesson import numbers
from attnlab.text.fmt import num, shape_text, text_table, tiny, trimmed, vec

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
            "fill_zero": numbers.get("mask_demo.zero_fill"),
            "fill_neg_inf": numbers.get("mask_demo.neg_inf"),
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
        explain(stage, lang),
    ]
    for b, name in enumerate(example.prompt_names(stages.x.size(0))):
        headers, rows = stage_rows(stage, getattr(stages, stage)[b], tokens[b], p, lang)
        lines += ["", f"Prompt {name}", text_table(headers, rows)]
    if stage in ("masked_scores", "weights"):
        lines += ["", masked_note(lang)]
    return [*lines, ""]


def render_lesson(lang: str = "zh", precision: int = DEFAULT_PRECISION) -> str:
    """The text of ``week07_attention.py``: the lesson's sections in the page's order."""
    t, p, st = TEXT[lang], precision, numbers.stages()
    tokens = example.prompt_tokens(lang)
    last = tokens[0][-1]
    out = [t["title"], t["question"].format(last=last)]
    out.append(t["prompts"].format(a=tokens[0], b=tokens[1], shape=shape_text(st.x.shape)))
    out.append(t["order"].format(order=" ".join(f"§{n}" for n in WALK_SECTIONS)))
    for _, part in _PARTS:
        lines = part(st, lang, p)
        while lines and not lines[-1]:
            lines.pop()  # one blank line between parts
        out += ["", *lines]
    out += ["", "== " + t["conclusion"].format(last=last)]
    for name, row in zip(example.prompt_names(2), st.weights[:, -1], strict=True):
        out.append(f"  Prompt {name}: {vec(row.tolist(), p)}")
    return "\n".join([*out, t["conclusion_end"]])


def _baseline(st: AttentionStages, lang: str, p: int) -> list[str]:
    t = TEXT[lang]
    ratio = vec(numbers.tensor("uniform.weights.A.final").tolist(), p)
    out = ["== " + t["sec1"], t["sec1_body"].format(ratio=ratio)]
    for name in example.prompt_names(2):
        out.append(f"  {name}: {vec(numbers.tensor(f'uniform.mean.{name}.final').tolist(), p)}")
    wa, wb = (vec(st.weights[b, -1].tolist(), p) for b in (0, 1))
    return [*out, t["sec1_after"].format(wa=wa, wb=wb)]


def _projections(st: AttentionStages, lang: str, p: int) -> list[str]:
    t, last = TEXT[lang], example.prompt_tokens(lang)[0][-1]
    out = ["== " + t["sec4"]]
    for stage in ("x", "q", "k", "v", "raw_scores"):
        out += _stage_block(st, stage, lang, p)
    for b, name in enumerate(example.prompt_names(2)):
        q, k0, s = st.q[b, -1], st.k[b, 0], st.raw_scores[b, -1, 0]
        dot = t["sec4_dot"].format(
            last=last, q=vec(q.tolist(), p), k=vec(k0.tolist(), p), s=num(float(s), p)
        )
        out.append(f"  {name}: {dot}")
    return out


def _softmax_rows(st: AttentionStages, lang: str, p: int) -> list[str]:
    t = TEXT[lang]
    out = ["== " + t["sec5"], *_stage_block(st, "scaled_scores", lang, p)]
    final = numbers.final_rows()
    for b, name in enumerate(example.prompt_names(2)):
        vals = {k: vec(v[b].tolist(), p) for k, v in final.items() if k != "sums"}
        total = num(float(final["sums"][b]), p)
        out.append(
            t["sec5_row"].format(
                p=name, scaled=vals["scaled"], exps=vals["exps"], total=total, w=vals["weights"]
            )
        )
    return [*out, "", *_render_two_softmaxes(st, lang, p)]


def _weighted_values(st: AttentionStages, lang: str, p: int) -> list[str]:
    out = ["== " + TEXT[lang]["sec6"], *_stage_block(st, "weights", lang, p)]
    return out + _stage_block(st, "output", lang, p)


def _scaling(st: AttentionStages, lang: str, p: int) -> list[str]:
    t, d = TEXT[lang], st.q.size(-1)
    out = ["== " + t["sec8"], f"sqrt(d_k) = sqrt({d}) = {num(numbers.tensor('sqrt_d_k'), p)}"]
    for b, name in enumerate(example.prompt_names(2)):
        raw, scaled = (
            vec(st.raw_scores[b, -1].tolist(), p),
            vec(st.scaled_scores[b, -1].tolist(), p),
        )
        out.append(f"  {name}: raw {raw}  →  scaled {scaled}")
    out.append(t["shift"].format(w=vec(numbers.tensor("shift.base").tolist(), max(p, 6))))
    shift = (numbers.tensor(f"shift.{k}") for k in ("constants", "rows", "weights", "max_diff"))
    for c, row, w, diff in zip(*shift, strict=True):
        out.append(
            t["shift_row"].format(
                c=trimmed(float(c), p),
                row=vec(row.tolist(), p),
                w=vec(w.tolist(), max(p, 6)),
                d=tiny(float(diff)),
            )
        )
    return [*out, t["shift_caveat"]]


def _mask(st: AttentionStages, lang: str, p: int) -> list[str]:
    out = ["== " + TEXT[lang]["sec10"], TEXT[lang]["mask"]]
    for mask in (st.causal_mask, numbers.tensor("causal_mask_t4")):
        rows = [[str(int(v)) for v in r] for r in mask.tolist()]
        head = [f"T={len(rows)}"] + [f"j={j}" for j in range(len(rows))]
        out += [text_table(head, [[f"t={i}", *r] for i, r in enumerate(rows)]), ""]
    return out[:-1]


def _neg_inf(st: AttentionStages, lang: str, p: int) -> list[str]:
    demo = _render_mask_demo(lang, p)
    return ["== " + TEXT[lang]["sec11"], *_stage_block(st, "masked_scores", lang, p), *demo]


def _render_mask_demo(lang: str, p: int) -> list[str]:
    t, q = TEXT[lang], min(p, 3)
    row = f"[{num(float(numbers.tensor('mask_demo.row[0]')), 1)}, future]"
    return [
        t["sec11_demo"],
        t["demo_body"].format(row=row),
        t["demo_zero"].format(v=vec(numbers.tensor("mask_demo.zero_fill").tolist(), q)),
        t["demo_inf"].format(v=vec(numbers.tensor("mask_demo.neg_inf").tolist(), q)),
        "",
    ]


def _render_shapes(st: AttentionStages, lang: str, p: int) -> list[str]:
    t = TEXT[lang]
    head = ["Tensor", "Shape", "axes"]
    rows = [[n, shape_text(getattr(st, s).shape), m[lang]] for n, s, m in AXIS_MEANINGS]
    cfg = example.SHAPE_CHECK
    extra = [
        [SHAPE_STAGE_NAMES[lang][r.stage], shape_text(r.shape), ", ".join(r.axes)]
        for r in numbers.shape_rows()
    ]
    return [
        "== " + t["sec9"],
        text_table(head, rows, left=(0, 2)),
        t["sec9_kt"].format(
            q=shape_text(st.q.shape),
            kt=shape_text(st.k.transpose(-2, -1).shape),
            s=shape_text(st.raw_scores.shape),
        ),
        "",
        t["sec9_extra"].format(**cfg),
        text_table(head, extra, left=(0, 2)),
        "",
    ]


def _render_two_softmaxes(st: AttentionStages, lang: str, p: int) -> list[str]:
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
    return [*out, text_table(["", *words, "Σ"], rows), ""]


def _render_cost(st: AttentionStages, lang: str, p: int) -> list[str]:
    cfg, rows = example.COST_CHECK, numbers.cost_rows()
    head = ["T", "B·n_head·T²", "× T=" + str(rows[0].tokens)]
    body = [[str(r.tokens), f"{r.elements:,}", f"{r.ratio:,.0f}"] for r in rows]
    return [
        "== " + TEXT[lang]["sec17"].format(batch=cfg.batch, heads=cfg.heads),
        text_table(head, body),
        "",
    ]


Part = Callable[[AttentionStages, str, int], list[str]]

#: The walk's parts in the lesson page's section order (section number, renderer). Sections the
#: walk leaves out are prose (2, 3, 7, 14, 15, 18, 19), code (12, 13) or section 16's gradient,
#: which ``course_examples/week07_attention.py`` prints.
_PARTS: tuple[tuple[int, Part], ...] = (
    (1, _baseline),
    (4, _projections),
    (5, _softmax_rows),
    (6, _weighted_values),
    (8, _scaling),
    (9, _render_shapes),
    (10, _mask),
    (11, _neg_inf),
    (17, _render_cost),
)
#: The sections the walk prints, in order (its header line lists them).
WALK_SECTIONS: tuple[int, ...] = tuple(n for n, _ in _PARTS)
