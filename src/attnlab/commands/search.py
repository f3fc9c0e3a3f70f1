"""``attnlab search QUERY [--json]``: search the lesson text (both languages), the knowledge
checks, the glossary, the mistakes catalogue and your notes."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from attnlab.commands._common import LangOption, fail, lang_of
from attnlab.commands._store import DataDirOption, ProfileOption, open_store
from attnlab.i18n import pick

ORDER = 84


def register(app: typer.Typer) -> None:
    """Add ``search`` to ``app``."""

    @app.command("search")
    def search_command(
        ctx: typer.Context,
        query: Annotated[str, typer.Argument(help="Words to find (1-100 characters).")],
        as_json: Annotated[
            bool, typer.Option("--json", help="Print a JSON list of hits (empty if none).")
        ] = False,
        data_dir: DataDirOption = None,
        profile: ProfileOption = None,
        lang: LangOption = None,
    ) -> None:
        """Find QUERY in the lesson (掩码, softmax, W_O, d_k, ...) and in your notes."""
        from attnlab.course import search

        chosen = lang_of(ctx, lang)
        try:
            search.check_query(query)
        except ValueError:
            fail(pick(chosen, f"搜索：应为 1–{search.MAX_QUERY} 个字符的查询，收到的是 "
                              f"{len(query.strip())} 个字符",
                      f"search: expected a query of 1-{search.MAX_QUERY} characters, found "
                      f"{len(query.strip())}"))  # fmt: skip
        with open_store(data_dir, profile, chosen) as store:
            hits = search.search(store, query, chosen)
        if as_json:
            typer.echo(json.dumps([h.as_json() for h in hits], ensure_ascii=False, indent=2))
            return
        if not hits:
            typer.echo(pick(chosen, f"没有找到 {query!r}", f"No match for {query!r}"))
            return
        for h in hits:
            kind = search.KIND_NAMES[chosen][h.kind]
            where = "" if h.section is None else f" §{h.section}"
            typer.echo(f"[{kind}{where}] {h.title}\n    {h.snippet}")
