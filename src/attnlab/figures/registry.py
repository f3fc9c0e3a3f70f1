"""The one list of the lesson's figures: what each is called, how it is drawn, the line of code
the notebook shows for it, and the file ``attnlab plot`` writes for it.

The web lesson (:mod:`attnlab.web.figures`), the notebook (:mod:`attnlab.notebook.cells`) and
``attnlab plot`` (:mod:`attnlab.figures.files`) all read :data:`LESSON`, so a figure is added
or changed in one place. A figure's drawing and its notebook line are both made from the same
:class:`LessonFigure` fields, so they cannot disagree.

This module imports no matplotlib: a figure's function is looked up in :mod:`attnlab.figures`
only when it is drawn (a page can list figures without the plotting package installed).

Example::

    >>> figure("chain_a").code
    'figures.plot_chain(figures.lesson_source(LANG), b=0, lang=LANG)'
    >>> [f.file for f in LESSON]
    ['weights-A-B', 'chain-A', 'scale', 'mask', 'cost']
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from matplotlib.figure import Figure

#: ``attnlab plot`` kinds drawn from a source's stages (the lesson's, or a learner's input).
SOURCE_KINDS: tuple[str, ...] = ("weights", "chain")
#: The ``attnlab plot`` kind drawn from a CSV that ``attnlab bench`` wrote (``--csv``).
BENCH_KIND = "bench"


@dataclass(frozen=True)
class LessonFigure:
    """One figure of the lesson.

    ``name`` is what the lesson's blocks and the web's URLs call it; ``function`` the
    :mod:`attnlab.figures` function that draws it, given the lesson's source first when
    ``source`` is set, then ``args`` and the language; ``kind`` the ``attnlab plot`` kind that
    draws it, and ``file`` the file stem that command gives it for the lesson.
    """

    name: str
    function: str
    kind: str
    file: str
    source: bool = False
    args: dict[str, Any] = field(default_factory=dict)

    @property
    def code(self) -> str:
        """The one line that draws it in the notebook (``figures`` and ``LANG`` defined)."""
        given = ["figures.lesson_source(LANG)"] if self.source else []
        given += [f"{k}={v!r}" for k, v in self.args.items()] + ["lang=LANG"]
        return f"figures.{self.function}({', '.join(given)})"

    def draw(self, lang: str) -> Figure:
        """The figure drawn now in ``lang`` (imports matplotlib)."""
        from attnlab import figures

        given = [figures.lesson_source(lang)] if self.source else []
        fig: Figure = getattr(figures, self.function)(*given, **self.args, lang=lang)
        return fig


LESSON: tuple[LessonFigure, ...] = (
    LessonFigure("weights", "plot_weights", "weights", "weights-A-B", source=True),
    LessonFigure("chain_a", "plot_chain", "chain", "chain-A", source=True, args={"b": 0}),
    LessonFigure("scale", "plot_scale", "scale", "scale"),
    LessonFigure("mask", "plot_mask", "mask", "mask"),
    LessonFigure("cost", "plot_cost", "cost", "cost"),
)
#: The lesson's figure names, in the order the lesson shows them.
NAMES: tuple[str, ...] = tuple(f.name for f in LESSON)
#: Lesson figures ``attnlab plot`` draws by kind alone (no source, no CSV).
SECTION_KINDS: dict[str, LessonFigure] = {f.kind: f for f in LESSON if f.kind not in SOURCE_KINDS}
#: Every ``attnlab plot`` kind.
KINDS: tuple[str, ...] = (*SOURCE_KINDS, *SECTION_KINDS, BENCH_KIND)


def figure(name: str) -> LessonFigure:
    """The lesson figure called ``name``.

    Raises:
        KeyError: naming the figures there are.
    """
    for f in LESSON:
        if f.name == name:
            return f
    raise KeyError(f"figure must be one of {', '.join(NAMES)}, got {name!r}")
