"""Course blocks as Jupyter Markdown: prose escaped, formulas as ``$$latex$$``, tables as GFM.

Listings and figures are not Markdown: :mod:`attnlab.notebook.cells` turns them into code cells.
"""

from __future__ import annotations

import re

from attnlab.content.blocks import Block
from attnlab.text.fmt import markdown_table

#: Block kinds that become code cells, not Markdown.
CODE_KINDS = ("listing", "figure")
# Characters Markdown (or Jupyter's MathJax, for "$") would read as markup in plain prose.
_SPECIAL = re.compile(r"([\\`*_$<>#|])")


def escape(text: str) -> str:
    """``text`` shown literally: ``W_Q*`` stays ``W_Q*``, a ``$`` never opens a formula."""
    return _SPECIAL.sub(r"\\\1", text)


def _fence(text: str, info: str = "text") -> str:
    ticks = "```" if "```" not in text else "````"
    return f"{ticks}{info}\n{text.rstrip()}\n{ticks}"


def block_markdown(b: Block) -> str:
    """One block as Markdown (``ValueError`` for a kind that is a code cell or unknown)."""
    if b.kind == "h":
        return f"#### {escape(b.text)}"
    if b.kind == "p":
        return escape(b.text)
    if b.kind == "note":
        return "\n".join("> " + line for line in escape(b.text).splitlines())
    if b.kind == "pre":
        return _fence(b.text)
    if b.kind == "flow":
        return "\n".join(f"{i}. {escape(item)}" for i, item in enumerate(b.items, 1))
    if b.kind == "math":
        return f"$$\n{b.text}\n$$"
    if b.kind == "table":
        caption = f"**{escape(b.text)}**\n\n" if b.text else ""
        return caption + markdown_table(b.headers, b.rows)
    if b.kind == "code":
        return f"*{escape(b.text)}* (`{b.data['path']}`)\n\n" + _fence(b.data["source"], "python")
    raise ValueError(
        f"block kind must be one of h, p, note, pre, flow, math, table, code, got {b.kind!r}"
    )
