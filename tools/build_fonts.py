"""Write the web lesson's fonts into ``src/attnlab/web/static/fonts`` (committed build products).

- ``attnlab-cjk.woff2``: Noto Sans CJK SC from the ``mplfonts`` package, subset with fontTools
  to :func:`attnlab.web.fonts.used_chars` (every CJK character of the package's text files).
- ``attnlab-math.woff2``: Noto Sans Math, the WOFF2 of the npm package
  ``@fontsource/noto-sans-math`` (``npm pack``), copied unchanged with its licence.

Run it after adding Chinese text (``tests/test_fonts.py`` fails until then)::

    python tools/build_fonts.py          # both fonts
    python tools/build_fonts.py --cjk    # only the Chinese subset (no npm needed)

Needs ``fonttools`` and ``brotli`` (the ``dev`` extra) and, for the math font, ``npm``.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import mplfonts
from fontTools import subset

from attnlab.text import atomic
from attnlab.web.fonts import FACES, FONT_DIR, used_chars

CJK_SOURCE = Path(mplfonts.__file__).parent / "fonts" / "NotoSansCJKsc-Regular.otf"
MATH_PACKAGE = "@fontsource/noto-sans-math@5.3.0"
MATH_FILE = "package/files/noto-sans-math-latin-400-normal.woff2"


def build_cjk(out: Path = FONT_DIR / FACES["attnlab CJK"]) -> Path:
    """Subset the CJK font to the package's characters into ``out``; returns it."""
    options = subset.Options()
    options.flavor = "woff2"
    options.layout_features = ["*"]  # keep vertical and punctuation-width features
    options.name_IDs = ["*"]  # keep the family name and the OFL licence
    options.hinting = False
    font = subset.load_font(str(CJK_SOURCE), options)
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=sorted(ord(c) for c in used_chars()))
    subsetter.subset(font)
    # Whole or not at all: make runs this at every install, over the committed file.
    atomic.write_with(out, lambda f: subset.save_font(font, f, options), binary=True)
    return out


def fetch_math() -> Path:
    """Copy Noto Sans Math from its npm package; returns the written file."""
    out = FONT_DIR / FACES["attnlab Math"]
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["npm", "pack", "--silent", MATH_PACKAGE], cwd=tmp, check=True)
        (archive,) = Path(tmp).glob("*.tgz")
        with tarfile.open(archive) as tar:
            tar.extractall(
                tmp,
                members=[tar.getmember(MATH_FILE), tar.getmember("package/LICENSE")],
                filter="data",
            )
        shutil.copyfile(Path(tmp) / MATH_FILE, out)
        shutil.copyfile(Path(tmp) / "package" / "LICENSE", FONT_DIR / "attnlab-math.LICENSE")
    return out


def main(argv: list[str]) -> None:
    FONT_DIR.mkdir(parents=True, exist_ok=True)
    written = [build_cjk()]
    if "--cjk" not in argv:
        written.append(fetch_math())
    for path in written:
        print(f"{path}: {path.stat().st_size} bytes")


if __name__ == "__main__":
    main(sys.argv[1:])
