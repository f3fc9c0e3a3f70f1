"""Week 7: walk the attention lesson stage by stage (``python week07_attention.py --help``)."""

import sys
from pathlib import Path

try:
    import attnlab  # noqa: F401
except ImportError:  # running from a clone without `make run`: use the source tree
    sys.path.insert(0, str(Path(__file__).resolve().parent / "src"))

from attnlab.commands._scripts import run

if __name__ == "__main__":
    sys.exit(run("lesson"))
