"""Errors a learner can cause: the front ends print them as one line, never a traceback.

A message names what was expected and what was found; shapes in it are written by
:func:`shape_text` (``[2, 2, 3]``), the one shape formatter of the package.
"""

from __future__ import annotations

from collections.abc import Iterable


class InputError(ValueError):
    """A learner's input (file, option, answer) is not what was expected.

    The message names the field, what was expected and what was found, in one line.
    """


def shape_text(shape: Iterable[int], compact: bool = False) -> str:
    """``[2, 2, 4]``, or the lesson's compact ``[2,2,4]`` with ``compact``."""
    return "[" + ("," if compact else ", ").join(str(int(s)) for s in shape) + "]"
