"""Correct attention that prints far too much: 8 MiB through print() and 24 MiB each to
file descriptors 1 and 2, once. It then records how big its temp folder ($TMPDIR) had grown,
in $ATTNLAB_TEST_PIDS/FloodHead/.
FloodExit prints 8 MiB to stderr, then last words with a terminal escape, then calls os._exit."""
import math
import os
import sys
import tempfile
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F

MIB = 2**20
_flooded = []


def flood():
    if _flooded:
        return
    _flooded.append(True)
    os.write(1, b"flood-start\n")
    os.write(2, b"flood-start\n")
    print("你好，注意力")
    line = "p" * 1023
    for _ in range(8 * 1024):
        print(line)
    chunk = b"x" * (MIB - 1) + b"\n"
    for _ in range(24):
        os.write(1, chunk)
        os.write(2, chunk)
    sys.stdout.flush()
    os.write(1, b"flood-end\n")
    os.write(2, b"flood-end\n")
    used = sum(f.stat().st_size for f in Path(tempfile.gettempdir()).rglob("*") if f.is_file())
    folder = Path(os.environ.get("ATTNLAB_TEST_PIDS", tempfile.gettempdir())) / "FloodHead"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tempdir_bytes").write_text(str(used))


class FloodHead(nn.Module):
    def __init__(self, embed_dim, head_size, context_length):
        super().__init__()
        self.query = nn.Linear(embed_dim, head_size, bias=False)
        self.key = nn.Linear(embed_dim, head_size, bias=False)
        self.value = nn.Linear(embed_dim, head_size, bias=False)
        mask = torch.tril(torch.ones(context_length, context_length, dtype=torch.bool))
        self.register_buffer("causal_mask", mask)

    def forward(self, x):
        flood()
        T = x.size(1)
        q, k, v = self.query(x), self.key(x), self.value(x)
        scores = q @ k.transpose(-2, -1) / math.sqrt(k.size(-1))
        scores = scores.masked_fill(~self.causal_mask[:T, :T], float("-inf"))
        return F.softmax(scores, dim=-1) @ v


class FloodExit(FloodHead):
    def forward(self, x):
        os.write(2, b"y" * (8 * MIB))
        os.write(2, b"\n\x1b[2Jlast words\n")
        os._exit(4)
