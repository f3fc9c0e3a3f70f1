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

The lesson's figures are listed once, in :mod:`attnlab.figures.registry`. The plotting functions
load on first use (importing the package, or its registry, loads no matplotlib).

May import: core, text, inputs, lesson and bench (a bench CSV's rows).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from attnlab.figures.chain import plot_chain
    from attnlab.figures.cost_curve import cost_data, plot_cost
    from attnlab.figures.effects import mask_data, plot_mask, plot_scale, scale_data
    from attnlab.figures.merge import plot_merge
    from attnlab.figures.source import PlotSource, input_source, lesson_source
    from attnlab.figures.weights import plot_weights

#: Each public name → the module that defines it (imported when the name is first used).
_HOME = {
    "PlotSource": "source", "cost_data": "cost_curve", "input_source": "source",
    "lesson_source": "source", "mask_data": "effects", "plot_chain": "chain",
    "plot_cost": "cost_curve", "plot_mask": "effects", "plot_merge": "merge",
    "plot_scale": "effects", "plot_weights": "weights", "scale_data": "effects",
}  # fmt: skip
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


def __getattr__(name: str) -> Any:
    """A public name, imported from its module on first use (PEP 562)."""
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{_HOME[name]}"), name)
    globals()[name] = value
    return value
