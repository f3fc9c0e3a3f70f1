"""Figures of the lesson, every number taken from :mod:`attnlab.lesson.numbers` (a learner's own
input: from :mod:`attnlab.core.pipeline`).

* :func:`plot_weights`: attention-weight heatmaps (prompts side by side, or batch × head).
* :func:`plot_chain`: X → Q, K, V → scores → weights → output for one prompt, one figure.
* :func:`plot_merge`: the multi-head end of the chain, each head's output → concat → W_O.
* :func:`plot_scale`: section 8 measured, score spread and softmax peakiness against d_k.
* :func:`plot_mask`: section 11, softmax of a row whose future is filled with 0 versus −∞.
* :func:`plot_cost`: section 17, score elements B·n_head·T² on log-log axes.

Each function returns a :class:`matplotlib.figure.Figure` (shown inline in a notebook, saved by
``attnlab plot``, rendered by the web lesson)::

    from attnlab.figures import lesson_source, plot_weights
    fig = plot_weights(lesson_source("en"), lang="en")

Chinese labels use the CJK font that the ``mplfonts`` dependency ships
(see :mod:`attnlab.figures.fonts`); nothing needs configuring.

May import: core, text, inputs, lesson and bench (a bench CSV's rows).
"""

from attnlab.figures.chain import plot_chain
from attnlab.figures.cost_curve import cost_data, plot_cost
from attnlab.figures.effects import mask_data, plot_mask, plot_scale, scale_data
from attnlab.figures.merge import plot_merge
from attnlab.figures.source import PlotSource, input_source, lesson_source
from attnlab.figures.weights import plot_weights

__all__ = [
    "PlotSource",
    "cost_data",
    "input_source",
    "lesson_source",
    "mask_data",
    "plot_chain",
    "plot_cost",
    "plot_mask",
    "plot_merge",
    "plot_scale",
    "plot_weights",
    "scale_data",
]
