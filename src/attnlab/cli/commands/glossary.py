"""``attnlab glossary``: the week's terms, in the chosen language."""

from __future__ import annotations

from typing import Annotated

import typer

from attnlab.cli._common import LangOption, fail, lang_of

ORDER = 85


def register(app: typer.Typer) -> None:
    """Add ``glossary`` to ``app``."""

    @app.command("glossary")
    def glossary_command(
        ctx: typer.Context,
        term: Annotated[str | None, typer.Argument(help="Show only terms containing this.")] = None,
        lang: LangOption = None,
    ) -> None:
        """The week's terms (Query, Key, Value, raw score, causal mask, ...) with definitions."""
        from attnlab.content.knowledge import glossary
        from attnlab.text.i18n import pick

        chosen = lang_of(ctx, lang)
        terms = glossary(chosen)
        if term:
            terms = [t for t in terms if term.lower() in t.name.lower()]
            if not terms:
                fail(f"glossary: expected a term such as {glossary(chosen)[0].name!r}, found no "
                     f"match for {term!r}")  # fmt: skip
        section = pick(chosen, "第 {n} 节", "section {n}")
        for t in terms:
            typer.echo(f"{t.name}  ({section.format(n=t.section)})\n  {t.definition}\n")
