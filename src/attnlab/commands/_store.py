"""Options and the store opener shared by ``attnlab progress`` and ``attnlab quiz``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from attnlab.commands._common import fail

if TYPE_CHECKING:
    from attnlab.learn.store import ProgressStore

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


def open_store(data_dir: str | None, profile: str | None) -> ProgressStore:
    """The progress store, or a one-line error (exit 2) naming the file's path."""
    from attnlab.learn.store import ProgressStore, StoreError

    try:
        return ProgressStore.open(data_dir, profile)
    except (StoreError, ValueError, OSError) as exc:
        fail(str(exc))
