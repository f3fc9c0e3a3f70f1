"""Week 7: walk the attention lesson stage by stage (``python week07_attention.py --help``).

Imported (``from week07_attention import fixed_example, attend``, as Week 8 does), it prints
nothing and runs nothing: it hands on the fixed example and one causal head.
"""

import sys
from pathlib import Path
from typing import TYPE_CHECKING

try:
    import attnlab  # noqa: F401
except ImportError:  # running from a clone without `make run`: use the source tree
    sys.path.insert(0, str(Path(__file__).resolve().parent / "src"))

from attnlab.cli._scripts import run

if TYPE_CHECKING:  # what type checkers and editors see; at run time __getattr__ loads them
    from attnlab.lesson.course_api import attend, fixed_example

__all__ = ["attend", "fixed_example"]


def __getattr__(name: str) -> object:
    # The two names load torch on first use (PEP 562), so a mistyped option fails fast.
    if name in __all__:
        from attnlab.lesson import course_api

        return getattr(course_api, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


if __name__ == "__main__":
    sys.exit(run("lesson"))
