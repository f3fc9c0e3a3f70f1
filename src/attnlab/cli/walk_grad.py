"""The text of ``course_examples/week07_attention.py`` and ``attnlab grad``: section 16's
one-parameter step, and section 7's content path (the gradient of W_V[0,0]).

Every number comes from :mod:`attnlab.lesson.numbers`; this module only arranges and words them.
"""

from __future__ import annotations

from attnlab.content.walk_text import TEXT
from attnlab.core import example
from attnlab.lesson import numbers
from attnlab.text.fmt import change, num, text_table, trimmed, vec

EXPERIMENT_PRECISION = 6


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
    out += ["", t["exp_honest"].format(target_a=target_words[0], target_b=target_words[1])]
    return "\n".join([*out, "", *_content_path(lang, p)])


def _content_path(lang: str, p: int) -> list[str]:
    """Section 7: d(mean loss)/dW_V[i,c] three ways, with the two factors of its closed form."""
    t, g = TEXT[lang], numbers.value_gradient()
    (i, c), names = g.param, example.prompt_names(2)
    read = float(numbers.tensor("weights.A.final[0]"))
    out = [
        "== " + t["wv_title"].format(i=i, c=c),
        t["wv_paths"],
        t["wv_why"].format(i=i, c=c, w=num(read, p), tok=example.prompt_tokens(lang)[0][0]),
    ]
    for b, name in enumerate(names):
        reads, dh = num(float(g.reads[b]), p), num(float(g.dloss_dh[b, c]), p)
        out.append(t["wv_factors"].format(p=name, i=i, c=c, reads=reads, dh=dh))
    grads = {"auto": g.autograd, "fd": g.finite_difference, "closed": g.closed_form}
    out.append(t["wv_grad"].format(i=i, c=c, **{k: num(v, p) for k, v in grads.items()}))
    return [*out, t["wv_note"]]


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
