"""Reasons shown whole: a long text is cut at a word and says how much was left out, so that no
reason ends mid-word or leaves a quote open. No torch: the ``attnlab`` process imports it."""

from __future__ import annotations


def clip(text: str, limit: int) -> str:
    """``text`` whole when it has at most ``limit`` characters, else cut at a space before the
    limit and said to be cut (``… (1,234 characters more)``)."""
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0] if " " in text[:limit] else text[:limit]
    return f"{cut} … ({len(text) - len(cut):,} characters more)"
