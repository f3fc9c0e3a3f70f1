"""``attnlab lesson`` and ``attnlab grad``: the two walks of the lesson scripts."""

from __future__ import annotations

from typing import Annotated

import typer

from attnlab.cli._common import LangOption, lang_of

ORDER = 10

PrecisionOption = Annotated[
    int | None, typer.Option("--precision", min=0, max=12, help="Decimals shown.")
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print the JSON document instead.")]


def register(app: typer.Typer) -> None:
    """Add ``lesson`` and ``grad`` to ``app``."""

    @app.command("lesson")
    def lesson_command(
        ctx: typer.Context,
        precision: PrecisionOption = None,
        as_json: JsonOption = False,
        lang: LangOption = None,
    ) -> None:
        """Walk the computed sections in the page's order (= python week07_attention.py)."""
        _walk(ctx, "lesson", precision, as_json, lang)

    @app.command("grad")
    def grad_command(
        ctx: typer.Context,
        precision: PrecisionOption = None,
        as_json: JsonOption = False,
        lang: LangOption = None,
    ) -> None:
        """Section 16: gradient of the loss w.r.t. W_Q[1,0], one update; section 7: W_V[0,0]."""
        _walk(ctx, "grad", precision, as_json, lang)


def _walk(ctx: typer.Context, kind: str, precision: int | None, as_json: bool, lang: str | None):
    from attnlab.cli._scripts import run

    argv = ["--lang", lang_of(ctx, lang)]
    if precision is not None:
        argv += ["--precision", str(precision)]
    if as_json:
        argv.append("--json")
    raise typer.Exit(run(kind, argv))
