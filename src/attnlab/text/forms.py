"""How a learner's typed numbers are read: the forms a Chinese input method types, as ASCII.

One rule for every place that reads a typed number (the graded answers, the practice, the
explorer's cells; the explorer's script, ``app.js``, applies the same rule before it checks a cell).
"""

from __future__ import annotations

import re
import unicodedata

#: Full-width forms a Chinese input method types (``１．５``, ``－０.４``, ``ｅ``): U+FF01-FF5E.
_FULL_WIDTH = re.compile("[\uff01-\uff5e]+")
#: An ideographic full stop between digits is a decimal point (``0。40``); one at the end ends
#: the sentence (``0.40。``).
_STOP_POINT = re.compile(r"(?<=\d)。(?=\d)")


def ascii_forms(text: str) -> str:
    """``text`` with full-width letters, digits and signs as ASCII (NFKC: ``１．５`` is ``1.5``),
    ``。`` between digits as a decimal point and a closing ``。`` dropped.

    Example::

        >>> ascii_forms("１．５"), ascii_forms("0。40"), ascii_forms("0.40。")
        ('1.5', '0.40', '0.40')
    """
    text = _FULL_WIDTH.sub(lambda m: unicodedata.normalize("NFKC", m[0]), text)
    text = _STOP_POINT.sub(".", text)
    return text.rstrip().removesuffix("。")
