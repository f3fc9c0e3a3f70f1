"""A Chinese-capable font for every figure, with nothing for the learner to configure.

matplotlib's bundled DejaVu Sans has no CJK glyphs, so Chinese labels come out as empty boxes
with a "Glyph ... missing from font(s)" warning. The ``mplfonts`` package (a dependency of
attnlab) ships Noto Sans CJK SC; we register that file with matplotlib's font manager and put it
first in the sans-serif list. matplotlib (>= 3.6) falls back glyph by glyph only across the
*named* entries of ``font.family`` (a generic "sans-serif" expands to its first installed font),
so the family list is ``["sans-serif", "DejaVu Sans"]``: symbols the CJK font lacks, such as
the superscript ``ᵀ``, come from DejaVu Sans.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

#: The font file that ``mplfonts`` ships (Simplified Chinese, sans-serif, OFL licence).
CJK_FONT_FILE = "NotoSansCJKsc-Regular.otf"
FALLBACK_FAMILY = "DejaVu Sans"

_registered: str | None = None


def cjk_font_path() -> Path:
    """Path of the CJK font inside the installed ``mplfonts`` package.

    ``find_spec`` locates the package without importing it (importing ``mplfonts`` pulls in
    extra modules we do not need).
    """
    spec = importlib.util.find_spec("mplfonts")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(
            "the font package 'mplfonts' is not installed; reinstall attnlab "
            "(pip install -e .) to get it"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / "fonts" / CJK_FONT_FILE
    if not path.is_file():
        raise RuntimeError(f"expected the font {CJK_FONT_FILE} in mplfonts, found none at {path}")
    return path


def use_cjk_font() -> str:
    """Register the CJK font once and make it matplotlib's first sans-serif family.

    Returns:
        The family name now in use (``"Noto Sans CJK SC"``).
    """
    global _registered
    import matplotlib as mpl
    from matplotlib import font_manager

    if _registered is None:
        path = cjk_font_path()
        font_manager.fontManager.addfont(str(path))
        _registered = font_manager.FontProperties(fname=str(path)).get_name()
    others = [f for f in mpl.rcParams["font.sans-serif"] if f not in (_registered, FALLBACK_FAMILY)]
    mpl.rcParams["font.family"] = ["sans-serif", FALLBACK_FAMILY]
    mpl.rcParams["font.sans-serif"] = [_registered, FALLBACK_FAMILY, *others]
    return _registered
