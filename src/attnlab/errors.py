"""Errors a learner can cause: the front ends print them as one line, never a traceback."""

from __future__ import annotations


class InputError(ValueError):
    """A learner's input (file, option, answer) is not what was expected.

    The message names the field, what was expected and what was found, in one line.
    """
