"""``attnlab search QUERY [--json]``: search the lesson text (both languages), the knowledge
checks, the glossary, the mistakes catalogue and your notes."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from attnlab.cli._common import fail
from attnlab.cli._store import StoreOptions, with_store
from attnlab.inputs.text_limits import KINDS
from attnlab.text.fmt import escape_json_text, one_line
from attnlab.text.i18n import error_message, pick

ORDER = 84

#: The query argument's help: its limit and its syntax (:mod:`attnlab.content.search_query`).
QUERY_HELP = (
    f"Words to find (1-{KINDS['query'].most} characters); "
    '"causal mask" or causal-mask: the words together; mask*: words starting with mask.'
)


def register(app: typer.Typer) -> None:
    """Add ``search`` to ``app``."""

    @app.command("search")
    @with_store
    def search_command(
        ctx: typer.Context,
        opts: StoreOptions,
        query: Annotated[str, typer.Argument(help=QUERY_HELP)],
        as_json: Annotated[
            bool, typer.Option("--json", help="Print a JSON list of hits (empty if none).")
        ] = False,
    ) -> None:
        """Find QUERY in the lesson (掩码, softmax, W_O, d_k, ...) and in your notes."""
        from attnlab.content import search

        chosen = opts.lang
        try:  # checked before the store is opened
            search.check_query(query)
        except ValueError as exc:
            fail(error_message(exc, chosen))
        with opts.open() as store:
            hits = search.search(store, query, chosen)
        if as_json:
            text = json.dumps([h.as_json() for h in hits], ensure_ascii=False, indent=2)
            typer.echo(escape_json_text(text))
            return
        if not hits:
            typer.echo(pick(chosen, f"没有找到 {query!r}", f"No match for {query!r}"))
            return
        for h in hits:
            kind = search.KIND_NAMES[chosen][h.kind]
            where = "" if h.section is None else f" §{h.section}"
            typer.echo(f"[{kind}{where}] {one_line(h.title)}\n    {one_line(h.snippet)}")
