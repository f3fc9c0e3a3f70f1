"""The web fonts the lesson serves: a Chinese subset and a math font, with long cache headers.

Pages name the system's fonts first; a browser fetches these only for characters no earlier
font has (a machine without a CJK font, a MathML formula without a math font). Both files are
committed build products in ``static/fonts`` (``tools/build_fonts.py`` writes them):

- ``attnlab-cjk.woff2``: Noto Sans CJK SC (shipped by the ``mplfonts`` dependency), subset to
  :func:`used_chars`, the CJK characters of every text file of the package, so every Chinese
  character the lesson can show is in it. Learner-typed Chinese outside it falls back to the
  system's fonts.
- ``attnlab-math.woff2``: Noto Sans Math (OpenType ``MATH`` table, SIL OFL 1.1, from the npm
  package ``@fontsource/noto-sans-math``), for stretchy braces and MathML spacing.

Example::

    >>> "注" in used_chars()
    True
    >>> url("attnlab CJK")  # versioned by the file's hash
    '/fonts/0123456789abcdef/attnlab-cjk.woff2'
"""

from __future__ import annotations

import functools
import hashlib
import re
from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import Response

PACKAGE = Path(__file__).resolve().parents[1]
FONT_DIR = Path(__file__).parent / "static" / "fonts"
#: CSS family name -> file in ``static/fonts``.
FACES = {"attnlab CJK": "attnlab-cjk.woff2", "attnlab Math": "attnlab-math.woff2"}
#: Han ideographs (and extension A, compatibility), CJK punctuation, kana, full-width forms.
CJK = re.compile(
    "[\u2e80-\u2fdf\u3000-\u30ff\u3100-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
    "\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef]"
)
#: Text files of the package whose strings a page can show.
TEXT_SUFFIXES = (".py", ".html", ".js", ".css", ".toml")
#: A file named by its content's hash never changes: browsers may keep it a year.
IMMUTABLE = "public, max-age=31536000, immutable"

router = APIRouter()


def used_chars(root: Path = PACKAGE) -> set[str]:
    """Every CJK character in the package's text files (sources, templates, content data).

    Args:
        root: folder to read (default: the installed ``attnlab`` package).

    Returns:
        The set of single characters matched by :data:`CJK`.
    """
    found: set[str] = set()
    for path in sorted(root.rglob("*")):
        if path.suffix in TEXT_SUFFIXES and path.is_file():
            found.update(CJK.findall(path.read_text(encoding="utf-8")))
    return found


@functools.cache
def _digest(name: str) -> str:
    return hashlib.sha256((FONT_DIR / name).read_bytes()).hexdigest()[:16]


def url(family: str) -> str:
    """The font file's address for ``family``, versioned by its content hash."""
    name = FACES[family]
    return f"/fonts/{_digest(name)}/{name}"


@functools.cache
def face_css() -> str:
    """The ``@font-face`` rules of the served fonts, with ``font-display: swap``: text shows at
    once in a system font and is redrawn when the file arrives."""
    return "\n".join(
        f'@font-face {{ font-family: "{family}"; src: url("{url(family)}") format("woff2");'
        " font-style: normal; font-display: swap; }"
        for family in FACES
    )


@router.get("/fonts/{digest}/{name}")
def font_file(digest: str, name: str) -> Response:
    """A served font. The address holds the file's hash, so the answer is cached for a year."""
    if name not in FACES.values() or digest != _digest(name):
        return Response("no such font\n", status_code=404, media_type="text/plain")
    return Response(
        (FONT_DIR / name).read_bytes(),
        media_type="font/woff2",
        headers={"Cache-Control": IMMUTABLE},
    )
