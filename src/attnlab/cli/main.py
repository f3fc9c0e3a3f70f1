"""The ``attnlab`` command: a thin front end that parses options and renders.

Subcommands live in :mod:`attnlab.cli.commands` (one module each) and are discovered at start-up.
No attention is computed here.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Annotated

import typer

from attnlab.cli import commands
from attnlab.cli._common import fail
from attnlab.text.i18n import resolve_lang

app = typer.Typer(
    name="attnlab",
    help="Week 7 attention lab: trace, audit, check, plot, benchmark and quiz causal "
    "self-attention. Learner output is Chinese by default; use --lang en for English.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def version() -> str:
    """attnlab's version: its installed package metadata, else ``attnlab.__version__``."""
    from importlib import metadata

    try:
        return metadata.version("attnlab")
    except metadata.PackageNotFoundError:  # a source tree on sys.path, never installed
        from attnlab import __version__

        return __version__


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"attnlab {version()}")
        raise typer.Exit()


@app.callback()
def _main(
    ctx: typer.Context,
    lang: Annotated[
        str | None,
        typer.Option("--lang", help="Output language: zh (default) or en. Also ATTNLAB_LANG."),
    ] = None,
    show_version: Annotated[
        bool,
        typer.Option(
            "--version",
            help="Print attnlab's version and exit.",
            callback=_print_version,
            is_eager=True,  # before the subcommand is required
        ),
    ] = False,
) -> None:
    try:
        ctx.obj = {"lang": resolve_lang(lang)}
    except ValueError as exc:
        fail(str(exc))


def _register_commands() -> None:
    found = []
    for info in pkgutil.iter_modules(commands.__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"attnlab.cli.commands.{info.name}")
        found.append((getattr(module, "ORDER", 100), info.name, module))
    for _, _, module in sorted(found, key=lambda item: (item[0], item[1])):
        module.register(app)


_register_commands()


def main() -> None:
    """Entry point of the ``attnlab`` console script.

    A mistyped option gets the same one-line error as every other learner mistake
    (``attnlab: error: ...``, exit 2) instead of click's boxed usage message. A terminal that
    cannot encode Chinese gets escapes instead of ``UnicodeEncodeError`` (see
    :mod:`attnlab.cli._terminal`).
    """
    import sys

    from typer.exceptions import TyperException

    from attnlab.cli._terminal import make_streams_safe

    make_streams_safe()

    try:
        code = app(standalone_mode=False)
    except typer.Abort:
        print("attnlab: stopped", file=sys.stderr)
        sys.exit(130)
    except TyperException as exc:  # click's usage errors (typer vendors click)
        message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
        ctx = getattr(exc, "ctx", None)
        hint = f" (see {ctx.command_path} --help)" if ctx is not None else ""
        print(f"attnlab: error: {' '.join(message.split())}{hint}", file=sys.stderr)
        sys.exit(getattr(exc, "exit_code", 2))
    sys.exit(code if isinstance(code, int) else 0)
