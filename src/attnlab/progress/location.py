"""Where a :class:`attnlab.progress.store.ProgressStore` lives (its SQLite file or its server),
whether that can be written now, and this process's open stores of each file.
"""

from __future__ import annotations

import os
import threading
import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from attnlab.progress import access as progress_access
from attnlab.progress.store_errors import StoreError

#: Where the progress folder is when no ``--data-dir`` names it.
DATA_DIR_ENV = "ATTNLAB_DATA_DIR"


def default_data_dir(data_dir: str | os.PathLike[str] | None = None) -> Path:
    """``data_dir`` if given, else ``$ATTNLAB_DATA_DIR``, else the platform's user data folder."""
    if data_dir:
        return Path(data_dir)
    if os.environ.get(DATA_DIR_ENV):
        return Path(os.environ[DATA_DIR_ENV])
    import platformdirs

    return Path(platformdirs.user_data_dir("attnlab", appauthor=False))


if TYPE_CHECKING:
    from attnlab.progress.pg import PgDatabase


class _Store(Protocol):
    file: Path | None
    closed: bool

    @property
    def writable(self) -> bool: ...
    def close(self) -> None: ...


_STORES: weakref.WeakSet[_Store] = weakref.WeakSet()  # this process's open stores
_STORES_LOCK = threading.Lock()


def register(store: _Store) -> None:
    """Count ``store`` among this process's open stores (:func:`close_read_only_stores`)."""
    with _STORES_LOCK:
        _STORES.add(store)


def close_read_only_stores(path: Path) -> None:
    """Close this process's read-only stores of the file ``path`` (absolute), which can now be
    written."""
    # SQLite shares one -shm mapping among a process's connections to a file; one mapped
    # read-only (the file was read-only then) would refuse a new writable connection's writes.
    # So once the file can be written, this process's read-only stores of it are closed first
    # (the web server reopens a closed store, see attnlab.web.common).
    with _STORES_LOCK:
        stale = [
            s
            for s in _STORES
            if not (s.writable or s.closed) and s.file is not None and s.file.absolute() == path
        ]
    for store in stale:
        store.close()  # waits for a call in progress on another thread (the store's lock)


class LocationMixin:
    """The store's file or server, and whether it can be written now."""

    if TYPE_CHECKING:
        file: Path | None
        where: Path | str
        _pg: PgDatabase | None

    @property
    def path(self) -> Path:
        """The SQLite file (``ValueError`` on PostgreSQL: use :attr:`where` to name it)."""
        if self.file is None:
            raise ValueError(f"the store is on a PostgreSQL server ({self.where}), not in a file")
        return self.file

    def own_files(self) -> tuple[Path, ...]:
        """The files nothing else may ever write: the SQLite file and those SQLite keeps next
        to it (:func:`attnlab.progress.access.own_files`); none on PostgreSQL."""
        return () if self.file is None else progress_access.own_files(self.file)

    def writable_now(self) -> bool:
        """Whether the file can be written now (a read-only store opened earlier stays read-only:
        open a new one to save)."""
        try:
            return self.file is None or progress_access.why_read_only(self.file) is None
        except StoreError:
            return False

    @property
    def keeps_index(self) -> bool:
        """Whether the lesson's search index is kept in the store (the SQLite file), not in
        this process's memory (PostgreSQL)."""
        return self._pg is None
