"""Figures from :mod:`attnlab.figures` as SVG files, drawn once per package version, kept on disk.

A page refers to a figure by URL (:func:`ref`: ``/figures/LANG/NAME.svg?v=VERSION``) rather than
embedding it: the figures are three quarters of the lesson's bytes, and this way a browser
fetches each once and keeps it (the URL changes with the version), while every page stays small.

The figures are those of :mod:`attnlab.figures.registry`. Drawing the ten (five, in two
languages) takes matplotlib seconds, so it never happens
while requests are served: ``make`` draws them at install (``python -m attnlab.web.figures``),
and ``attnlab serve`` reads them before it answers its first request (it draws whatever is
missing then). They are kept in :func:`cache_dir`: ``$ATTNLAB_CACHE_DIR`` or the platform's
user cache folder, then ``figures-VERSION-DIGEST``, where DIGEST covers every file of the
installed package and matplotlib's version: a changed plot, lesson number or template means a
new folder, never a stale figure. When the plotting package cannot be imported (a trimmed
install), pages render without figures.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import threading
from dataclasses import dataclass
from functools import cache
from io import BytesIO
from pathlib import Path

import attnlab
from attnlab.figures import registry
from attnlab.text import atomic

CACHE_ENV = "ATTNLAB_CACHE_DIR"
_XML_PROLOGUE = re.compile(r"^.*?(?=<svg)", re.S)
_LOCK = threading.Lock()  # matplotlib's pyplot state is not thread-safe; one drawing at a time


def package_digest(root: Path) -> str:
    """SHA-256 (12 hex digits) of every file under ``root`` (bytecode caches aside), by path."""
    h = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        h.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:12]


@cache
def cache_dir() -> Path:
    """The folder of this version's figures (not created here)."""
    import matplotlib
    import platformdirs

    base = os.environ.get(CACHE_ENV) or platformdirs.user_cache_dir("attnlab")
    digest = package_digest(Path(attnlab.__file__).parent)
    return Path(base) / f"figures-{attnlab.__version__}-{digest}-mpl{matplotlib.__version__}"


def _draw(name: str, lang: str) -> str:
    """Figure ``name`` drawn now, as an SVG document without a fixed size."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = registry.figure(name).draw(lang)
    buf = BytesIO()
    fig.savefig(buf, format="svg", bbox_inches="tight")
    plt.close(fig)
    text = _XML_PROLOGUE.sub("", buf.getvalue().decode("utf-8"), count=1)
    # Let the page size the figure (see :func:`ref`): drop the fixed width/height, keep the viewBox.
    return re.sub(r'<svg([^>]*?) width="[^"]*" height="[^"]*"', r"<svg\1", text, count=1)


def _keep(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically (a reader never sees half a file); a folder we
    cannot write to only means drawing again next time."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic.write_text(path, text)
    except OSError:
        pass


@cache
def svg(name: str, lang: str) -> str | None:
    """Figure ``name`` in ``lang`` as SVG text, or None without the plots package."""
    registry.figure(name)  # KeyError for a name that is not a figure of the lesson
    try:
        path = cache_dir() / f"{name}-{lang}.svg"
    except ImportError:  # no matplotlib: no figures
        return None
    with _LOCK:  # one thread draws; one that waited here finds the file
        if path.is_file():
            return path.read_text(encoding="utf-8")
        try:
            text = _draw(name, lang)
        except ImportError:
            return None
        _keep(path, text)
    return text


@dataclass(frozen=True)
class Ref:
    """Where a page finds a figure, and its natural size in points (one CSS px per point keeps
    its smallest text readable; a phone scrolls a wider figure rather than shrink it)."""

    url: str
    width: int
    height: int


@cache
def ref(name: str, lang: str) -> Ref | None:
    """The figure's URL and size, or None without the plots package."""
    text = svg(name, lang)
    if text is None:
        return None
    box = re.search(r'viewBox="[-\d.]+ [-\d.]+ ([\d.]+) ([\d.]+)"', text)
    width, height = (math.ceil(float(v)) for v in box.groups()) if box else (640, 480)
    version = hashlib.sha256(cache_dir().name.encode()).hexdigest()[:10]
    return Ref(f"/figures/{lang}/{name}.svg?v={version}", width, height)


def build_all(langs: tuple[str, ...] = ("zh", "en")) -> Path:
    """Read (or draw and keep) every figure now; the folder they are in."""
    for lang in langs:
        for name in registry.NAMES:
            svg(name, lang)
    return cache_dir()


if __name__ == "__main__":  # `make` runs this after installing: the first lesson page is fast
    print(f"attnlab figures: {build_all()}")
