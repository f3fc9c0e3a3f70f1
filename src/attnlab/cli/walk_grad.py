"""The text of ``course_examples/week07_attention.py`` and ``attnlab grad``: section 16 (the
one-parameter step on W_Q[1,0]) as the page shows it, the step's before → after lines at
``--precision``, then section 7 (the whole chain, with the content path's gradient of W_V[0,0]).

Every number comes from :mod:`attnlab.lesson.numbers`; :mod:`attnlab.content.plain` renders the
sections, and this module only words the lines the page does not have.
"""

from __future__ import annotations

from attnlab.content.intro import GRAD_COMMAND
from attnlab.content.plain import render_section
from attnlab.content.walk_text import TEXT
from attnlab.core import example
from attnlab.lesson import numbers
from attnlab.text.fmt import change

EXPERIMENT_PRECISION = 6
#: The sections the gradient walk prints, in its order.
GRAD_SECTIONS: tuple[int, ...] = (16, 7)
#: Section 16 ends by telling the reader to run this script: left out of the script's own text.
SELF: tuple[str, ...] = (GRAD_COMMAND, "attnlab grad")


def render_experiment(lang: str = "zh", precision: int = EXPERIMENT_PRECISION) -> str:
    """The text of ``course_examples/week07_attention.py``: section 16, the step's changes,
    section 7."""
    first, *rest = (render_section(n, lang, SELF) for n in GRAD_SECTIONS)
    return "\n\n".join([first, "\n".join(_after(lang, precision)), *rest])


def _after(lang: str, p: int) -> list[str]:
    """Each prompt's target probability and loss, and the mean loss, before → after the step.

    A step this small changes the 4th-6th decimal: :func:`~attnlab.text.fmt.change` prints as
    many digits as it takes to see it, whatever ``p`` asks for.
    """
    t, r, words = TEXT[lang], numbers.experiment(), example.vocab(lang)
    out = [t["exp_after"]]
    for b, name in enumerate(example.prompt_names(2)):
        target = words[int(example.lesson_targets()[b])]
        before, after = change(float(r.before.target_probs[b]), float(r.after.target_probs[b]), p)
        lb, la = change(float(r.before.losses[b]), float(r.after.losses[b]), p)
        out.append(
            t["exp_row"].format(p=name, target=target, before=before, after=after, lb=lb, la=la)
        )
    mean_b, mean_a = change(float(r.before.loss_mean), float(r.after.loss_mean), p)
    return [*out, t["exp_mean_after"].format(before=mean_b, after=mean_a)]
