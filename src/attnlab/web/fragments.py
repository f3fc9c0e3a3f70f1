"""Each section of a page rendered once per learner state and reused.

A section on ``/lesson`` or ``/section/N`` is its explanation (rendered once per language, see
``section_body``) wrapped in the learner's own state: whether it is done, the answer to its
check, the last attempt at each exercise, practice mastery, the self-assessment, notes and the
bookmark. :class:`SectionCache` keys the rendered ``render_section`` macro by exactly that state,
so a section nobody has touched is rendered once per language and page kind and shared by every
learner, and a learner's own section once until it changes. The session's CSRF token is put in
after the cache (:data:`CSRF_SLOT`), so learners share fragments without sharing tokens.

Pages opened from a search hit or carrying an audit report are rendered afresh.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping
from typing import Any

from markupsafe import Markup, escape

#: What a cached fragment holds where the page's CSRF token goes (letters and dashes only, so
#: HTML escaping leaves it as it is).
CSRF_SLOT = "attnlab-csrf-slot-4f1c"

#: The ``ctx`` fields the section templates read (``_section.html``, ``_check.html``,
#: ``_notes.html``, ``_audit.html``); :func:`state_key` accounts for each one.
CTX_FIELDS = frozenset(
    {"audit", "checks", "csrf_field", "csrf_token", "done", "found_mistake", "lang", "mastery",
     "notes", "opened", "page", "summary", "taught_terms", "ui", "figures_on"}
)  # fmt: skip

#: Fragments kept per process (a few hundred bytes to ~20 KB each).
SIZE = 2048


def state_key(section_id: int, ctx: Mapping[str, Any]) -> Hashable | None:
    """Everything of ``ctx`` that section ``section_id``'s HTML depends on, as a key, or
    ``None`` when the section is to be rendered afresh (a search hit opened something in it,
    an audit report is shown, or the token is not :data:`CSRF_SLOT`).

    ``ui`` follows from ``lang``; the learner's values are keyed by their ``repr`` (frozen
    dataclasses, dicts and tuples built in a fixed order), so equal keys mean equal state.
    """
    if ctx.get("opened") or ctx.get("found_mistake") or ctx.get("taught_terms"):
        return None
    audit = ctx.get("audit") or {}
    shown_audit = section_id in audit.get("sections", ())
    if shown_audit and audit.get("result") is not None:
        return None
    notes = ctx["notes"]
    return (
        section_id,
        ctx["lang"],
        ctx["page"],
        ctx["csrf_field"],
        bool(ctx.get("figures_on")),
        section_id in ctx["done"],
        ctx["summary"].assessments.get(section_id),
        repr(ctx["checks"].get(section_id)),
        repr((ctx.get("mastery") or {}).get(section_id)),
        repr(notes.by_section.get(section_id)),
        section_id in notes.marks,
        repr(audit) if shown_audit else None,
    )


class SectionCache:
    """``render_section(s, ctx)`` with its output kept by :func:`state_key` (least recently
    used first out, ``size`` at most; ``size=0`` renders every time).

    Args:
        macro: the ``render_section`` macro of ``_section.html``.
        size: how many fragments to keep.
    """

    def __init__(self, macro: Callable[[Any, dict[str, Any]], str], size: int = SIZE) -> None:
        self._macro = macro
        self._size = size
        self._kept: OrderedDict[Hashable, str] = OrderedDict()
        self._lock = threading.Lock()  # sync routes render in a thread pool

    def __call__(self, s: Any, ctx: dict[str, Any]) -> Markup:
        token = ctx["csrf_token"]
        key = state_key(s.id, ctx) if self._size else None
        if key is None:
            return Markup(self._macro(s, ctx))
        with self._lock:
            html = self._kept.get(key)
            if html is not None:
                self._kept.move_to_end(key)
        if html is None:
            html = str(self._macro(s, {**ctx, "csrf_token": CSRF_SLOT}))
            with self._lock:
                self._kept[key] = html
                while len(self._kept) > self._size:
                    self._kept.popitem(last=False)
        return Markup(html.replace(CSRF_SLOT, str(escape(token))))
