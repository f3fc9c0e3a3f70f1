"""``attnlab audit FILE.py:NAME``: run the lesson's 10-point checklist on a learner's module."""

from __future__ import annotations

import json
from typing import Annotated, cast

import typer

from attnlab.commands._common import LangOption, fail, lang_of

ORDER = 40


def register(app: typer.Typer) -> None:
    """Add the ``audit`` command to ``app``."""

    @app.command(
        "audit",
        help="Audit your attention class or factory FILE.py:NAME against the lesson's 10-point "
        "debugging checklist, in a sandboxed process. Exit 0 all pass, 1 a check failed, "
        "2 your code could not be run (raised, looped, exited, crashed, wrong signature).",
    )
    def audit(
        ctx: typer.Context,
        target: Annotated[str, typer.Argument(help="FILE.py:NAME, e.g. my_head.py:AttentionHead")],
        kind: Annotated[
            str, typer.Option("--kind", help="head, multihead or auto (from the argument names)")
        ] = "auto",
        timeout: Annotated[
            float, typer.Option("--timeout", help="Seconds before giving up")
        ] = 20.0,
        as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON")] = False,
        lang: LangOption = None,
    ) -> None:
        from attnlab.debug.audit import run_audit
        from attnlab.debug.audit.report import render
        from attnlab.errors import InputError

        chosen = lang_of(ctx, lang)
        try:
            result = run_audit(target, kind=kind, timeout=timeout)
        except InputError as exc:
            fail(str(exc))
        if as_json:
            typer.echo(json.dumps(result, ensure_ascii=False, indent=2))
        else:
            typer.echo(render(result, chosen), nl=False)
        raise typer.Exit(cast(int, result["exit_code"]))
