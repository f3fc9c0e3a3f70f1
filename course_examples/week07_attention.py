"""Week 7, section 16: how the loss reaches one entry of W_Q (``--help`` for options)."""

import sys
from pathlib import Path

try:
    import attnlab  # noqa: F401
except ImportError:  # running from a clone without `make run`: use the source tree
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from attnlab.commands._scripts import run

if __name__ == "__main__":
    sys.exit(run("grad"))
