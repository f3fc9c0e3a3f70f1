"""The web fonts the lesson serves: a Chinese subset and a math font, with long cache headers.

Each face takes the system's font of its kind first (``local()``, :data:`LOCAL`), so a browser
fetches a file only on a machine without a CJK font or without a math font. Both files are
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
from markupsafe import Markup

from attnlab.web.security import refused

PACKAGE = Path(__file__).resolve().parents[1]
FONT_DIR = Path(__file__).parent / "static" / "fonts"
#: CSS family name -> file in ``static/fonts``.
FACES = {"attnlab CJK": "attnlab-cjk.woff2", "attnlab Math": "attnlab-math.woff2"}
#: System fonts each face uses before its file (``local()``: full and PostScript names), so a
#: machine that has one draws with it and fetches nothing.
LOCAL = {
    "attnlab CJK": (
        "PingFang SC", "PingFangSC-Regular", "Hiragino Sans GB", "HiraginoSansGB-W3",
        "Microsoft YaHei", "MicrosoftYaHei", "Noto Sans CJK SC", "Noto Sans CJK SC Regular",
        "NotoSansCJKsc-Regular", "Source Han Sans SC", "SourceHanSansSC-Regular",
        "WenQuanYi Micro Hei",
    ),
    "attnlab Math": (
        "STIX Two Math", "STIXTwoMath-Regular", "Cambria Math", "Latin Modern Math",
        "LatinModernMath-Regular", "DejaVu Math TeX Gyre", "DejaVuMathTeXGyre-Regular",
    ),
}  # fmt: skip
#: Han ideographs (and extension A, compatibility), CJK punctuation, kana, full-width forms.
CJK_RANGES = ((0x2E80, 0x2FDF), (0x3000, 0x31FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF),
              (0xF900, 0xFAFF), (0xFE30, 0xFE4F), (0xFF00, 0xFFEF))  # fmt: skip
CJK = re.compile("[" + "".join(f"{chr(a)}-{chr(b)}" for a, b in CJK_RANGES) + "]")
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
def face_css() -> Markup:
    """The ``@font-face`` rules of the served fonts: each takes the system's font of its kind
    first (:data:`LOCAL`), then the served file, with ``font-display: swap`` (text shows at once
    and is redrawn when the file arrives). The CJK face covers only CJK code points, so pages
    name it first: Latin text skips it to the system fonts after it. (Chromium leaves text it
    shaped before the file arrived as empty boxes when the face comes after a system font.)"""
    rules = []
    for family in FACES:
        src = ", ".join(f'local("{name}")' for name in LOCAL[family])
        extra = ""
        if family == "attnlab CJK":
            extra = " unicode-range: " + ", ".join(f"U+{a:X}-{b:X}" for a, b in CJK_RANGES) + ";"
        rules.append(
            f'@font-face {{ font-family: "{family}"; src: {src}, url("{url(family)}")'
            f' format("woff2"); font-style: normal; font-display: swap;{extra} }}'
        )
    return Markup("\n".join(rules))


@router.get("/fonts/{digest}/{name}")
def font_file(digest: str, name: str) -> Response:
    """A served font. The address holds the file's hash, so the answer is cached for a year."""
    if name not in FACES.values() or digest != _digest(name):
        raise refused(404, "not_found", path=f"/fonts/{digest}/{name}"[:80])
    return Response(
        (FONT_DIR / name).read_bytes(),
        media_type="font/woff2",
        headers={"Cache-Control": IMMUTABLE},
    )
