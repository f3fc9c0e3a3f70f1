"""``attnlab code script|head|multihead``: print a tested, self-contained listing as plain text."""

from __future__ import annotations

from typing import Annotated

import typer

from attnlab.cli._common import LangOption, fail, lang_of

ORDER = 30


def register(app: typer.Typer) -> None:
    """Add ``code`` to ``app``."""

    @app.command("code")
    def code_command(
        ctx: typer.Context,
        name: Annotated[str, typer.Argument(help="script (section 12), head (13), multihead (15)")],
        lang: LangOption = None,
    ) -> None:
        """Print the code of section 12, 13 or 15, ready to save as a .py file and run.

        Plain text (no colours), so it can be piped: attnlab code head > attention_head.py
        """
        from attnlab.content import listings
        from attnlab.text.i18n import pick

        chosen = lang_of(ctx, lang)
        if name not in listings.NAMES:
            names = ", ".join(listings.NAMES)
            fail(pick(chosen, f"code：名称应为 {names} 之一，收到 {name!r}",
                      f"code: expected one of {names}, got {name!r}"))  # fmt: skip
        typer.echo(listings.listing(name, chosen), nl=False)
