"""Options and the store opener shared by ``attnlab progress`` and ``attnlab quiz``: every
problem with the progress file is one line and exit 2, never a traceback."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated

import typer

from attnlab.cli._common import fail
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
ProfileOption = Annotated[
    str | None,
    typer.Option(
        "--profile",
        help="Learner profile, for a shared machine. Also ATTNLAB_PROFILE; default: default.",
        show_default=False,
    ),
]


@contextmanager
def open_store(data_dir: str | None, profile: str | None, lang: str) -> Iterator[ProgressStore]:
    """The progress store for a ``with`` block, closed after it.

    Any :class:`~attnlab.progress.store.StoreError` on opening or inside the block (a file that is
    not ours, busy, read-only) becomes one line in ``lang`` on stderr and exit 2.
    """
    from attnlab.progress.store import ProgressStore, StoreError

    try:
        store = ProgressStore.open(data_dir, profile)
    except StoreError as exc:
        fail(exc.text(lang))
    except (ValueError, OSError) as exc:
        fail(error_message(exc, lang))
    with store:
        try:
            yield store
        except StoreError as exc:
            fail(exc.text(lang))
