"""The option bundle of every command that reads the progress store (``progress``, ``notes``,
``bookmark``, ``quiz``, ``search``, ``serve``): ``--data-dir``, ``--db``, ``--profile`` and
``--lang``,
resolved into one :class:`StoreOptions`, and the store opener. Every problem with the progress
file is one line and exit 2, never a traceback.

A command asks for the bundle with :func:`with_store` and one parameter ``opts``::

    @app.command("search")
    @with_store
    def search_command(ctx: typer.Context, query: str, opts: StoreOptions) -> None:
        with opts.open() as store:
            ...
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

import typer

from attnlab.cli._common import LangOption, fail, lang_of
from attnlab.text.i18n import error_message

if TYPE_CHECKING:
    from attnlab.progress.store import ProgressStore

DataDirOption = Annotated[
    str | None,
    typer.Option(
        "--data-dir",
        help="Folder of the progress database. Also ATTNLAB_DATA_DIR; default: your user data "
        "folder.",
        show_default=False,
    ),
]
DbOption = Annotated[
    str | None,
    typer.Option(
        "--db",
        help="A PostgreSQL server for the progress store instead of the file in --data-dir: "
        "postgresql://user:password@host:5432/dbname. Also ATTNLAB_DB.",
        show_default=False,
    ),
]
ProfileOption = Annotated[
    str | None,
    typer.Option(
        "--profile",
        help="Learner profile, for a shared machine. Also ATTNLAB_PROFILE; default: default.",
        show_default=False,
    ),
]


@contextmanager
def open_store(
    data_dir: str | None, profile: str | None, lang: str, db: str | None = None
) -> Iterator[ProgressStore]:
    """The progress store for a ``with`` block, closed after it.

    Any :class:`~attnlab.progress.store.StoreError` on opening or inside the block (a file that is
    not ours, busy, read-only) becomes one line in ``lang`` on stderr and exit 2.
    """
    from attnlab.progress.store import ProgressStore, StoreError

    try:
        store = ProgressStore.open(data_dir, profile, db)
    except StoreError as exc:
        fail(exc.text(lang))
    except (ValueError, OSError) as exc:
        fail(error_message(exc, lang))
    with store:
        try:
            yield store
        except StoreError as exc:
            fail(exc.text(lang))


@dataclass(frozen=True)
class StoreOptions:
    """Where the progress store is (``None``: the environment's or the default) and the
    language of the command's messages."""

    data_dir: str | None
    profile: str | None
    lang: str
    #: A PostgreSQL server's URL (``--db``; ``None``: ``$ATTNLAB_DB``, else the file).
    db: str | None = None

    def open(self) -> AbstractContextManager[ProgressStore]:
        """The store for a ``with`` block (:func:`open_store`)."""
        return open_store(self.data_dir, self.profile, self.lang, self.db)


def store_options(
    ctx: typer.Context,
    data_dir: str | None,
    db: str | None,
    profile: str | None,
    lang: str | None,
) -> StoreOptions:
    """The command's own ``--data-dir``/``--db``/``--profile``, else its group's (``attnlab
    progress --profile P export F``), and its language (:func:`attnlab.cli._common.lang_of`)."""
    group = ctx.obj or {}
    return StoreOptions(
        data_dir or group.get("data_dir"),
        profile or group.get("profile"),
        lang_of(ctx, lang),
        db or group.get("db"),
    )


def keep_for_subcommands(ctx: typer.Context, opts: StoreOptions) -> None:
    """In a group's callback: its ``--data-dir``/``--db``/``--profile`` become its
    subcommands'."""
    ctx.obj = {**(ctx.obj or {}), "data_dir": opts.data_dir, "profile": opts.profile,
               "db": opts.db}  # fmt: skip


_BUNDLE = tuple(
    inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=option)
    for name, option in (
        ("data_dir", DataDirOption), ("db", DbOption), ("profile", ProfileOption),
        ("lang", LangOption)
    )
)  # fmt: skip


def with_store(command: Callable[..., None]) -> Callable[..., None]:
    """``command(ctx, ..., opts)``, whose parameter ``opts`` is a :class:`StoreOptions`, as a
    typer command with the options ``--data-dir``, ``--db``, ``--profile`` and ``--lang`` after
    its own;
    they reach ``command`` resolved by :func:`store_options`."""
    own = inspect.signature(command, eval_str=True).parameters
    shown = [p for name, p in own.items() if name != "opts"] + list(_BUNDLE)

    @functools.wraps(command)
    def run(**given: Any) -> None:
        raw = [given.pop(p.name) for p in _BUNDLE]
        command(**given, opts=store_options(given["ctx"], *raw))

    # typer reads a command's options from its signature: the command's own, then the bundle.
    run.__signature__ = inspect.Signature(shown)  # type: ignore[attr-defined]
    run.__annotations__ = {p.name: p.annotation for p in shown}
    return run
