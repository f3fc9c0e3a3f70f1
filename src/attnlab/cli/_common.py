"""Pieces every subcommand shares: the language option and the one-line error exit."""

from __future__ import annotations

import sys
from typing import Annotated, NoReturn

import typer

from attnlab.text.fmt import one_line
from attnlab.text.i18n import resolve_lang

LangOption = Annotated[
    str | None,
    typer.Option(
        "--lang",
        help="Output language: zh (default) or en. Also ATTNLAB_LANG.",
        show_default=False,
    ),
]


def fail(message: str, code: int = 2) -> NoReturn:
    """Print ``attnlab: error: message`` as one line on stderr and exit with ``code``.

    Control characters a message may quote from the learner's input (a file name, a label) are
    escaped, so the line cannot move the cursor or recolour the terminal.
    """
    print(f"attnlab: error: {one_line(str(message))}", file=sys.stderr)
    raise typer.Exit(code)


def lang_of(ctx: typer.Context, local: str | None = None) -> str:
    """The language for this command: its own ``--lang``, the global one, or the default."""
    global_lang = (ctx.obj or {}).get("lang") if ctx is not None else None
    try:
        return resolve_lang(local or global_lang)
    except ValueError as exc:
        fail(str(exc))
