"""The two walks the lesson names, shared by the scripts and ``attnlab lesson`` / ``attnlab grad``.

* :func:`render_lesson`: ``week07_attention.py``, sections 1-17 in the lesson's order.
* :func:`render_experiment`: ``course_examples/week07_attention.py``, section 16's gradient.
* :func:`lesson_document`: the same numbers as one JSON document (``--json``).

Every number comes from :mod:`attnlab.lesson.numbers`; this module only arranges and words them.
Only torch and the standard library are imported, so the script starts about as fast as torch.
"""

from __future__ import annotations

from typing import Any

import torch

from attnlab import example
from attnlab.lesson import numbers
from attnlab.pipeline import AttentionStages
from attnlab.show import document
from attnlab.show.explain import explain, title
from attnlab.show.fmt import change, num, shape_text, text_table, trimmed, vec
from attnlab.show.stageview import masked_note, stage_rows
from attnlab.show.walk_text import AXIS_MEANINGS, SHAPE_STAGE_NAMES, TEXT

DEFAULT_PRECISION = 4
EXPERIMENT_PRECISION = 6


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
        "experiment": document.experiment_document(numbers.experiment()),
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
    """The text of ``week07_attention.py``: the lesson's stages in order, with explanations."""
    t, p, st = TEXT[lang], precision, numbers.stages()
    tokens = example.prompt_tokens(lang)
    last = tokens[0][-1]
    out = [t["title"], t["question"].format(last=last)]
    out.append(t["prompts"].format(a=tokens[0], b=tokens[1], shape=shape_text(st.x.shape)))
    ratio = vec(numbers.tensor("uniform.weights.A.final").tolist(), p)
    out += ["", "== " + t["sec1"], t["sec1_body"].format(ratio=ratio)]
    for name in example.prompt_names(2):
        out.append(f"  {name}: {vec(numbers.tensor(f'uniform.mean.{name}.final').tolist(), p)}")
    wa, wb = (vec(st.weights[b, -1].tolist(), p) for b in (0, 1))
    out += [t["sec1_after"].format(wa=wa, wb=wb), "", "== " + t["sec4"]]
    for stage in ("x", "q", "k", "v", "raw_scores"):
        out += _stage_block(st, stage, lang, p)
    for b, name in enumerate(example.prompt_names(2)):
        q, k0, s = st.q[b, -1], st.k[b, 0], st.raw_scores[b, -1, 0]
        dot = t["sec4_dot"].format(
            last=last, q=vec(q.tolist(), p), k=vec(k0.tolist(), p), s=num(float(s), p)
        )
        out.append(f"  {name}: {dot}")
    out += ["", "== " + t["sec5"]]
    out += _stage_block(st, "scaled_scores", lang, p)
    final = numbers.final_rows()
    for b, name in enumerate(example.prompt_names(2)):
        vals = {k: vec(v[b].tolist(), p) for k, v in final.items() if k != "sums"}
        total = num(float(final["sums"][b]), p)
        out.append(
            t["sec5_row"].format(
                p=name, scaled=vals["scaled"], exps=vals["exps"], total=total, w=vals["weights"]
            )
        )
    out += ["", "== " + t["sec11"], t["mask"]]
    mask_rows = [[str(int(v)) for v in r] for r in st.causal_mask.tolist()]
    out += [
        text_table(
            [""] + [f"j={j}" for j in range(len(mask_rows))],
            [[f"t={i}", *r] for i, r in enumerate(mask_rows)],
        ),
        "",
    ]
    for stage in ("masked_scores", "weights"):
        out += _stage_block(st, stage, lang, p)
    out += ["== " + t["sec6"]]
    out += _stage_block(st, "output", lang, p)
    out += _render_mask_demo(lang, p) + _render_shapes(st, lang)
    out += _render_two_softmaxes(st, lang, p) + _render_cost(lang)
    out += ["== " + t["conclusion"].format(last=last)]
    for name, row in zip(example.prompt_names(2), st.weights[:, -1], strict=True):
        out.append(f"  Prompt {name}: {vec(row.tolist(), p)}")
    return "\n".join([*out, t["conclusion_end"]])


def _render_mask_demo(lang: str, p: int) -> list[str]:
    t, q = TEXT[lang], min(p, 3)
    row = f"[{num(float(numbers.tensor('mask_demo.row[0]')), 1)}, future]"
    return [
        "== " + t["sec11_demo"],
        t["demo_body"].format(row=row),
        t["demo_zero"].format(v=vec(numbers.tensor("mask_demo.zero_fill").tolist(), q)),
        t["demo_inf"].format(v=vec(numbers.tensor("mask_demo.neg_inf").tolist(), q)),
        "",
    ]


def _render_shapes(st: AttentionStages, lang: str) -> list[str]:
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
        "",
        t["sec9_extra"].format(**cfg),
        text_table(head, extra, left=(0, 2)),
        "",
    ]


def _render_two_softmaxes(st: AttentionStages, lang: str, p: int) -> list[str]:
    t, words = TEXT[lang], example.vocab(lang)
    probs, sums = numbers.tensor("experiment.probs"), numbers.tensor("experiment.probs_sum")
    row_sums = numbers.tensor("weights_sum[:,-1]")  # [B]
    out = ["== " + t["two_softmax"], t["attn_softmax"].format(n=st.weights.size(-1))]
    for b, name in enumerate(example.prompt_names(2)):
        w = vec(st.weights[b, -1].tolist(), p)
        out.append(f"  {name}: {w}  Σ = {num(float(row_sums[b]), p)}")
    out.append(t["vocab_softmax"].format(n=len(words)))
    rows = [
        [name, *(num(v, p) for v in probs[b].tolist()), num(float(sums[b]), p)]
        for b, name in enumerate(example.prompt_names(2))
    ]
    return [*out, text_table(["", *words, "Σ"], rows), ""]


def _render_cost(lang: str) -> list[str]:
    cfg, rows = example.COST_CHECK, numbers.cost_rows()
    head = ["T", "B·n_head·T²", "× T=" + str(rows[0].tokens)]
    body = [[str(r.tokens), f"{r.elements:,}", f"{r.ratio:,.0f}"] for r in rows]
    return [
        "== " + TEXT[lang]["sec17"].format(batch=cfg.batch, heads=cfg.heads),
        text_table(head, body),
        "",
    ]


def render_experiment(lang: str = "zh", precision: int = EXPERIMENT_PRECISION) -> str:
    """The text of ``course_examples/week07_attention.py``: section 16's one-parameter step."""
    t, p, r = TEXT[lang], precision, numbers.experiment()
    words, (i, j) = example.vocab(lang), r.param
    names = example.prompt_names(2)
    target_words = [words[int(c)] for c in example.lesson_targets()]
    out = ["== " + t["exp_title"].format(i=i, j=j), t["exp_h"]]
    out += [f"  {n}: {vec(h.tolist(), p)}" for n, h in zip(names, r.before.h, strict=True)]
    out.append(t["exp_logits"])
    rows = [
        [n, *(num(v, p) for v in lg.tolist())] for n, lg in zip(names, r.before.logits, strict=True)
    ]
    out.append(text_table(["", *words], rows))
    for b, n in enumerate(names):
        prob, loss = float(r.before.target_probs[b]), float(r.before.losses[b])
        out.append(
            t["exp_prob"].format(p=n, target=target_words[b], prob=num(prob, p), loss=num(loss, p))
        )
    out += [t["exp_mean"].format(loss=num(float(r.before.loss_mean), p)), ""]
    out += [t["exp_expr"].format(i=i, j=j), *_score_expressions(p)]
    out.append(
        t["exp_grad"].format(
            i=i,
            j=j,
            auto=num(r.grad_autograd, p),
            fd=num(r.grad_finite_difference, p),
            closed=num(r.grad_closed_form, p),
        )
    )
    out.append(
        t["exp_update"].format(
            lr=r.lr,
            old=num(r.q_old, 0 if r.q_old.is_integer() else p),
            g=num(r.grad_autograd, p),
            new=num(r.q_new, p),
        )
    )
    out += ["", t["exp_after"]]
    for b, n in enumerate(names):
        pb, pa = float(r.before.target_probs[b]), float(r.after.target_probs[b])
        lb, la = float(r.before.losses[b]), float(r.after.losses[b])
        # A step this small changes the 4th-6th decimal: print enough digits to see it.
        (before, after), (loss_b, loss_a) = change(pb, pa, p), change(lb, la, p)
        out.append(
            t["exp_row"].format(
                p=n, target=target_words[b], before=before, after=after, lb=loss_b, la=loss_a
            )
        )
    mean_b, mean_a = change(float(r.before.loss_mean), float(r.after.loss_mean), p)
    out.append(t["exp_mean_after"].format(before=mean_b, after=mean_a))
    return "\n".join(
        [*out, "", t["exp_honest"].format(target_a=target_words[0], target_b=target_words[1])]
    )


def _score_expressions(p: int) -> list[str]:
    """``[0.8q, 0.2q+0.2]``: each final-row scaled score as slope·q + intercept, from the code."""
    slopes_b = numbers.tensor("experiment.score_slopes")  # [B, T_key]
    consts_b = numbers.tensor("experiment.score_intercepts")  # [B, T_key]
    lines = []
    for n, slopes, consts in zip(example.prompt_names(2), slopes_b, consts_b, strict=True):
        terms = [_linear(float(a), float(c), p) for a, c in zip(slopes, consts, strict=True)]
        lines.append(f"  {n}: [{', '.join(terms)}]")
    return lines


def _linear(a: float, c: float, p: int) -> str:
    parts = [f"{trimmed(a, p)}q"] if abs(a) > 1e-12 else []
    if abs(c) > 1e-12 or not parts:
        parts.append(("+" if parts and c >= 0 else "") + trimmed(c, p))
    return "".join(parts)
