"""How much room text takes in a figure, so a learner's long token labels never overlap.

The figure functions size each figure before drawing it. Tick labels are measured in the
figures' font (:func:`label_inches`); a label wider than :data:`LABEL_ROOM` widens the figure by
the difference, column labels wider than a cell are turned upright (:func:`turn_columns`), and
a title listing the tokens is cut with an ellipsis to the width it has (:func:`fit_text`): the
tick labels carry every token in full.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from matplotlib.font_manager import FontProperties
from matplotlib.textpath import text_to_path

from attnlab.figures.fonts import use_cjk_font

#: Inches the figure sizes keep for a column of row labels: the lesson's "t=0 我" fits, and a
#: learner's longer label adds what it needs beyond this (:func:`extra_inches`).
LABEL_ROOM = 0.6
#: A column label is turned upright when it is wider than this share of its cell.
_TURN_SHARE = 0.8
ELLIPSIS = "…"


def tick_size(T: int) -> float:
    """Points of the tick labels and cell numbers of a heatmap with ``T`` positions."""
    return 11.0 if T <= 4 else 8.0


def label_inches(labels: Sequence[str], fontsize: float) -> float:
    """Width in inches of the widest of ``labels`` drawn at ``fontsize`` points."""
    use_cjk_font()  # the font, with its fallback, that the figure will draw with
    prop = FontProperties(size=fontsize)
    widths = (text_to_path.get_text_width_height_descent(s, prop, ismath=False)[0] for s in labels)
    return max(widths, default=0.0) / 72.0  # points → inches


def extra_inches(width: float) -> float:
    """Inches a column of labels ``width`` inches wide needs beyond :data:`LABEL_ROOM`."""
    return max(width - LABEL_ROOM, 0.0)


def turn_columns(width: float, cell: float) -> bool:
    """Whether column labels ``width`` inches wide are turned upright on cells ``cell`` inches
    wide (side by side they would run into each other)."""
    return width > _TURN_SHARE * cell


def fit_text(text: str, inches: float, fontsize: float) -> str:
    """``text`` if it fits in ``inches`` at ``fontsize``, else its longest start that fits
    with an ellipsis (each line of a text of several lines on its own)."""
    if "\n" in text:
        return "\n".join(fit_text(line, inches, fontsize) for line in text.split("\n"))
    if label_inches([text], fontsize) <= inches:
        return text
    low, high = 0, len(text)  # text[:low] + "…" fits; text[:high] + "…" does not
    while high - low > 1:
        mid = (low + high) // 2
        if label_inches([text[:mid] + ELLIPSIS], fontsize) <= inches:
            low = mid
        else:
            high = mid
    return text[:low].rstrip() + ELLIPSIS


def fit_title(make: Callable[[str], str], part: str, inches: float, fontsize: float) -> str:
    """The title ``make(part)``, with ``part`` (the list of tokens) cut by :func:`fit_text` so
    that the whole title fits in ``inches``; the rest of the title is kept whole."""
    room = inches - label_inches([make("")], fontsize)
    return make(fit_text(part, max(room, 0.0), fontsize))
