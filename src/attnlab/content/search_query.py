"""What a search query means: its terms, and the one pattern that both finds and marks them.

A query is read as a list of terms, every one of which a hit must contain (case-insensitively):

* a word (``mask``, ``W_O``, ``掩码``) is found anywhere, also inside a longer word;
* a quoted phrase (``"causal mask"``) or a hyphenated word (``causal-mask``) is its words in
  order, separated in the text by blanks, hyphens or ``_`` (``causal mask``, ``causal-mask``,
  ``causal_mask``);
* a trailing ``*`` (``mask*``) is a prefix: the mark covers the rest of the word (``masked``);
* full-width letters and digits (U+FF10-FF5A, typed by a Chinese input method) are their ASCII
  forms (NFKC): full-width ``WO`` is ``WO``;
* control characters are blanks; every other character (``^ : ( ) +``) is text to find.

A query with no term left (``*``, ``""``) is searched for as the text it is. The same
:func:`pattern` decides which documents match and what is marked on the page a hit opens.

Example::

    >>> [t.words for t in parse('"causal mask" W_Q*')]
    [('causal', 'mask'), ('W_Q',)]
    >>> pattern(parse("causal-mask")).search("the causal mask").group(0)
    'causal mask'
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from attnlab.inputs import text_limits

#: Control characters (Unicode category Cc) are not text anyone searches for: a query reads them
#: as blanks. (FTS5 reads a NUL as the end of its query string.)
_NOT_QUERY_TEXT = re.compile("[\x00-\x1f\x7f-\x9f]")
_FULL_WIDTH_ALNUM = re.compile("[\uff10-\uff19\uff21-\uff3a\uff41-\uff5a]")
_QUOTED = re.compile(r'"([^"]*)"?|(\S+)')
#: Hyphens a hyphenated query word is split at (ASCII, Unicode hyphen, non-breaking, en dash).
_HYPHENS = r"\-‐‑–"
#: What may separate two words of a phrase in the text.
_BETWEEN = r"[\s_" + _HYPHENS + "]+"


@dataclass(frozen=True)
class Term:
    """One thing a hit must contain: ``words`` in order (one word, or a phrase), the last one a
    prefix (the mark runs to the end of its word) when ``prefix``."""

    words: tuple[str, ...]
    prefix: bool = False

    def regex(self) -> str:
        """The term as a regular expression (used with ``re.IGNORECASE``)."""
        body = _BETWEEN.join(re.escape(w) for w in self.words)
        return body + r"\w*" if self.prefix else body


def normalize(raw: str) -> str:
    """``raw`` with control characters as blanks and full-width letters and digits as ASCII;
    :class:`~attnlab.inputs.text_limits.TextError` (a ``ValueError``) when it is then empty,
    longer than the query limit or not UTF-8."""
    text = _NOT_QUERY_TEXT.sub(" ", raw)
    text = _FULL_WIDTH_ALNUM.sub(lambda m: unicodedata.normalize("NFKC", m.group(0)), text)
    return text_limits.check_text(text, "query")


def is_blank(raw: str) -> bool:
    """Whether ``raw`` holds nothing but blanks and control characters (an empty search)."""
    return not _NOT_QUERY_TEXT.sub(" ", raw).strip()


def _term(text: str, quoted: bool) -> Term | None:
    prefix = not quoted and text.endswith("*")
    words = [w for w in re.split(f"[\\s{_HYPHENS}]+", text.rstrip("*") if prefix else text) if w]
    return Term(tuple(words), prefix and bool(words)) if words else None


def parse(raw: str) -> list[Term]:
    """The terms of query ``raw`` (see the module's docstring); raises ``ValueError`` as
    :func:`normalize` does."""
    text = normalize(raw)
    terms = []
    for match in _QUOTED.finditer(text):
        phrase, word = match.groups()
        term = _term(phrase, quoted=True) if phrase is not None else _term(word, quoted=False)
        if term is not None and term not in terms:
            terms.append(term)
    return terms or [Term(tuple(text.split()))]


def words(terms: list[Term]) -> list[str]:
    """Every word of ``terms``: a document containing a hit contains each of them."""
    return [w for t in terms for w in t.words]


def pattern(terms: list[Term]) -> re.Pattern[str]:
    """A case-insensitive pattern finding any of ``terms`` (the longer of two overlapping ones
    wins)."""
    ordered = sorted(terms, key=lambda t: len(" ".join(t.words)), reverse=True)
    return re.compile("|".join(t.regex() for t in ordered), re.IGNORECASE)


def matches(terms: list[Term], text: str) -> bool:
    """Whether ``text`` contains every one of ``terms``."""
    return all(re.search(t.regex(), text, re.IGNORECASE) for t in terms)
