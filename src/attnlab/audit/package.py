"""The package a learner's file belongs to, as its repository lays it out: minGPT's
``mingpt/model.py`` starts with ``from mingpt.utils import CfgNode as CN``.

A folder with an ``__init__.py`` is a package; its parent folders with one too are the
packages around it. The topmost one is the package root: its parent goes on the learner's
``sys.path`` (:func:`attnlab.audit.loader.load_target`) and its ``.py`` files are what the
sandbox shows besides the file's siblings (:mod:`~attnlab.audit.sandbox`).

Standard library only: the keeper imports the sandbox, which imports this module.
"""

from __future__ import annotations

from pathlib import Path

#: The most ``.py`` files of a package tree made visible to the learner's process.
MAX_FILES = 500


def package_root(path: Path) -> Path | None:
    """The topmost folder with an ``__init__.py`` on the way up from ``path``'s folder, or
    None when the file is not in a package."""
    root = None
    folder = path.resolve().parent
    while (folder / "__init__.py").is_file() and folder != folder.parent:
        root, folder = folder, folder.parent
    return root


def dotted_name(path: Path) -> str | None:
    """``path``'s module name inside its package (``mingpt.model``), or None."""
    root = package_root(path)
    if root is None:
        return None
    parts = path.resolve().relative_to(root.parent).with_suffix("").parts
    return ".".join(parts) if all(p.isidentifier() for p in parts) else None


def package_files(path: Path) -> list[Path]:
    """The ``.py`` files of the package ``path`` belongs to (none when it is in none), in
    name order, at most :data:`MAX_FILES`."""
    root = package_root(path)
    if root is None:
        return []
    found = sorted(p for p in root.rglob("*.py") if p.is_file() and not p.is_symlink())
    return found[:MAX_FILES]
