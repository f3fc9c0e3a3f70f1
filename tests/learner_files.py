"""A correct single head as a learner writes it, with hooks, for the audit tests that write
learner files: ``{top}`` runs when the file is imported, ``{init}`` in ``__init__`` (once per
build), ``{forward}`` before forward returns, ``{scale}`` divides the scores
(``math.sqrt(k.size(-1))`` when right, ``1`` for the no-scale mistake) and ``{out}`` is what
forward returns (``out``: the right output)."""

from __future__ import annotations

import textwrap
from pathlib import Path

HEAD = """
import math, os, sys, json, signal, socket, subprocess, time
import torch
import torch.nn as nn
import torch.nn.functional as F

{top}

class Head(nn.Module):
    def __init__(self, embed_dim, head_size, context_length):
        super().__init__()
        self.query = nn.Linear(embed_dim, head_size, bias=False)
        self.key = nn.Linear(embed_dim, head_size, bias=False)
        self.value = nn.Linear(embed_dim, head_size, bias=False)
        self.register_buffer("tril", torch.tril(torch.ones(context_length, context_length)))
{init}

    def forward(self, x):
        T = x.size(1)
        q, k, v = self.query(x), self.key(x), self.value(x)
        scores = q @ k.transpose(-2, -1) / {scale}
        scores = scores.masked_fill(self.tril[:T, :T] == 0, float("-inf"))
        out = F.softmax(scores, dim=-1) @ v
{forward}
        return {out}
"""


def head_source(*, top: str = "", init: str = "", forward: str = "", out: str = "out",
                scale: str = "") -> str:  # fmt: skip
    """The text of the head with its hooks filled in."""
    return HEAD.format(
        top=textwrap.dedent(top),
        init=textwrap.indent(textwrap.dedent(init), " " * 8),
        forward=textwrap.indent(textwrap.dedent(forward), " " * 8),
        scale=scale or "math.sqrt(k.size(-1))",
        out=out,
    )


def write_head(folder: Path, name: str = "head", **hooks: str) -> str:
    """Write the head as ``folder/name.py`` (:func:`head_source`'s hooks); its ``path:Head``."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.py"
    path.write_text(head_source(**hooks), encoding="utf-8")
    return f"{path}:Head"
