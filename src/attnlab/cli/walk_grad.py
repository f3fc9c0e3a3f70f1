"""The text of ``course_examples/week07_attention.py`` and ``attnlab grad``: section 16 (the
one-parameter step on W_Q[1,0]), then section 7 (the whole chain, with the content path's
gradient of W_V[0,0]), each as the page shows it.

The blocks carry every number of the step at the lesson's six decimals; this module only picks
the sections (:mod:`attnlab.content.plain` renders them).
"""

from __future__ import annotations

from attnlab.content.plain import render_section

#: The sections the gradient walk prints, in its order.
GRAD_SECTIONS: tuple[int, ...] = (16, 7)


def render_experiment(lang: str = "zh") -> str:
    """The text of ``course_examples/week07_attention.py``: sections 16 and 7."""
    return "\n\n".join(render_section(n, lang) for n in GRAD_SECTIONS)
