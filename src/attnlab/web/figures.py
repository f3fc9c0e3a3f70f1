"""Figures from :mod:`attnlab.plots` as inline SVG, rendered once per language and cached.

The plotting package draws from the pipeline's stages; we only save its matplotlib figures as
SVG text. When it cannot be imported (a trimmed install), pages render without figures.
"""

from __future__ import annotations

import math
import re
import threading
from functools import cache
from io import BytesIO
from typing import Any

from markupsafe import Markup

FIGURES: tuple[str, ...] = ("weights", "chain_a", "scale", "mask", "cost")
_XML_PROLOGUE = re.compile(r"^.*?(?=<svg)", re.S)
_LOCK = threading.Lock()  # matplotlib's pyplot state is not thread-safe


def _make(name: str, lang: str) -> Any:
    from attnlab import plots

    if name == "weights":
        return plots.plot_weights(plots.lesson_source(lang), lang=lang)
    if name == "chain_a":
        return plots.plot_chain(plots.lesson_source(lang), b=0, lang=lang)
    if name == "scale":
        return plots.plot_scale(lang=lang)
    if name == "mask":
        return plots.plot_mask(lang=lang)
    if name == "cost":
        return plots.plot_cost(lang=lang)
    raise KeyError(f"figure must be one of {', '.join(FIGURES)}, got {name!r}")


@cache
def svg(name: str, lang: str) -> Markup | None:
    """Figure ``name`` in ``lang`` as an ``<svg>`` element, or None without the plots package."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    with _LOCK:
        try:
            fig = _make(name, lang)
        except ImportError:
            return None
        buf = BytesIO()
        fig.savefig(buf, format="svg", bbox_inches="tight")
        plt.close(fig)
    text = _XML_PROLOGUE.sub("", buf.getvalue().decode("utf-8"), count=1)
    # Let CSS size the figure: drop the fixed width/height, keep the viewBox.
    text = re.sub(r'<svg([^>]*?) width="[^"]*" height="[^"]*"', r"<svg\1", text, count=1)
    # One viewBox unit is one point of the figure; drawn at >= 1 CSS px per point, its smallest
    # text (9.5 pt) stays readable, so a phone scrolls the figure rather than shrink it.
    view_width = re.search(r'viewBox="[\d.]+ [\d.]+ ([\d.]+)', text)
    size = f' style="--fig-width: {math.ceil(float(view_width[1]))}px"' if view_width else ""
    label = f'<svg role="img" aria-label="{name}" class="fig"{size}'
    return Markup(text.replace("<svg", label, 1))


def warm(langs: tuple[str, ...] = ("zh", "en")) -> None:
    """Render every figure now (``attnlab serve`` calls this in a background thread)."""
    for lang in langs:
        for name in FIGURES:
            svg(name, lang)
