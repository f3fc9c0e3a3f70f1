"""Language selection: Chinese by default, English with ``--lang en`` or ``ATTNLAB_LANG=en``.

Text in two languages has one shape in attnlab, keyed by language code first:

* a table of texts is ``{"zh": {key: text}, "en": {key: text}}``, read as ``TABLE[lang][key]``
  (``show.walk_text.TEXT``, ``show.explain.STAGE_TITLES``, ``web.ui_text.UI``,
  ``plots.labels``, ``debug.catalogue.CHECKLIST``, the error messages ``errors.TEXT`` and
  ``learn.store_errors.FILE_TEXT``; each record of ``data/*.toml`` likewise has a ``zh`` and
  an ``en`` table);
* one text, written as data or built at run time, is ``{"zh": text, "en": text}``, read as
  ``text[lang]`` (a mistake's ``title``, an audit verdict's ``evidence``, a bench bar's ``what``);
* a phrase written once in code is ``pick(lang, zh, en)``, the same choice without the dict.
"""

from __future__ import annotations

import os

#: The languages of every learner-visible text: Chinese first (the default), then English.
LANGS: tuple[str, ...] = ("zh", "en")
ENV_VAR = "ATTNLAB_LANG"
DEFAULT_LANG = "zh"


def resolve_lang(lang: str | None = None) -> str:
    """The language to use: ``lang`` if given, else ``$ATTNLAB_LANG``, else ``"zh"``."""
    chosen = lang or os.environ.get(ENV_VAR) or DEFAULT_LANG
    if chosen not in LANGS:
        source = "--lang" if lang else ENV_VAR
        raise ValueError(f"{source} must be one of {', '.join(LANGS)}, got {chosen!r}")
    return chosen


def pick(lang: str, zh: str, en: str) -> str:
    """The Chinese or English text, by ``lang``."""
    return zh if lang == "zh" else en


def error_message(exc: Exception, lang: str) -> str:
    """An error's one-line message in ``lang`` when it carries both languages (a
    ``localized(lang)`` method, like :class:`attnlab.core.finite.NonFiniteStageError`), else
    ``str(exc)``."""
    localized = getattr(exc, "localized", None)
    return str(localized(lang)) if callable(localized) else str(exc)
